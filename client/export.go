package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// ExportReport counts what an export held, from its closing line.
type ExportReport struct {
	Memories int `json:"memories"`
	Turns    int `json:"turns"`
}

// ImportReport counts what an import stored and what was already there.
type ImportReport struct {
	Memories        int `json:"memories"`
	MemoriesSkipped int `json:"memories_skipped"`
	Turns           int `json:"turns"`
	TurnsSkipped    int `json:"turns_skipped"`
}

// ExportUser streams a user's memories (with versions, lineage and embeddings) and
// turns to w as JSON Lines. An export that lacks its closing "end" line was cut
// short (the server failed midway): ExportUser then returns an error.
func (c *Client) ExportUser(ctx context.Context, userID string, w io.Writer) (ExportReport, error) {
	var rep ExportReport
	path := userPath(userID, "export")
	resp, err := c.stream(ctx, "GET", path, nil)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	tail := &lastLine{}
	if _, err := io.Copy(io.MultiWriter(w, tail), resp.Body); err != nil {
		return rep, fmt.Errorf("engram: GET %s: reading the export: %w", path, err)
	}
	var end struct {
		Kind     string `json:"kind"`
		Memories *int   `json:"memories"`
		Turns    *int   `json:"turns"`
	}
	if json.Unmarshal(tail.line, &end) != nil || end.Kind != "end" || end.Memories == nil || end.Turns == nil {
		return rep, fmt.Errorf("engram: GET %s: the export was cut short (no closing line)", path)
	}
	return ExportReport{Memories: *end.Memories, Turns: *end.Turns}, nil
}

// ImportUser reads an export (from ExportUser) into the tenant under userID. Importing
// the same export twice changes nothing, so a failed call may simply be repeated.
func (c *Client) ImportUser(ctx context.Context, userID string, r io.Reader) (ImportReport, error) {
	var rep ImportReport
	path := userPath(userID, "import")
	resp, err := c.stream(ctx, "POST", path, r)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&rep); err != nil {
		return rep, fmt.Errorf("engram: POST %s: decoding response: %w", path, err)
	}
	return rep, nil
}

// stream makes one request whose body is streamed (no retry: a reader cannot be
// replayed) and returns a 2xx response for the caller to read and close.
func (c *Client) stream(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("engram: building request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-ndjson")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", c.userAgent)
	// An export may take longer than the client's per-request timeout: the caller's
	// context bounds it instead.
	hc := *c.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("engram: %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		return nil, parseAPIError(resp, data)
	}
	return resp, nil
}

// lastLine keeps the last complete line written to it.
type lastLine struct {
	cur, line []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.cur = append(l.cur, p...)
			break
		}
		l.line = append(l.cur[:0:0], append(l.cur, p[:i]...)...)
		l.cur = l.cur[:0]
		p = p[i+1:]
	}
	return n, nil
}
