// Package client is the Go SDK for engram, the long-term memory service for LLM
// agents. From an agent loop:
//
//	c := client.New("http://localhost:8080", os.Getenv("ENGRAM_TOKEN"))
//	_, err := c.AddTurns(ctx, client.Turn{UserID: "u1", SessionID: "s1", Role: client.RoleUser, Content: msg})
//
// AddTurns gives every turn an id before the first attempt, so its retries
// (on 5xx, 429 and network errors, with exponential backoff) never store a turn
// twice. The package depends only on the standard library, google/uuid and
// cenkalti/backoff, not on the server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/uuid"
)

// MaxBatch is the most turns the server takes in one request; AddTurns splits
// larger calls.
const MaxBatch = 1000

// maxResponseBytes bounds a response body read into memory.
const maxResponseBytes = 32 << 20

// Role is the speaker of a turn.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Statuses of a turn in AddResult.
const (
	StatusAccepted  = "accepted"  // stored now
	StatusDuplicate = "duplicate" // already stored (an earlier call or attempt)
	StatusRejected  = "rejected"  // invalid; see TurnResult.Error
	StatusFailed    = "failed"    // not stored: the server could not make it durable
)

// ToolCall describes the tool invocation a tool turn reports.
type ToolCall struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "success" or "failure"
	Error  string `json:"error,omitempty"`
}

// Turn is one conversation turn as sent to engram (turn event v1). UserID,
// SessionID, Role and Content (or Tool, for a tool turn) are required. The
// tenant is not part of it: the server takes it from the API token.
type Turn struct {
	// TurnID makes sending idempotent; AddTurns assigns a UUIDv7 when empty.
	TurnID    string    `json:"turn_id,omitempty"`
	UserID    string    `json:"user_id"`
	AgentID   string    `json:"agent_id,omitempty"` // server default "default"
	SessionID string    `json:"session_id"`
	TaskID    string    `json:"task_id,omitempty"`
	Role      Role      `json:"role"`
	Content   string    `json:"content,omitempty"`
	Tool      *ToolCall `json:"tool,omitempty"`
	// Name is the speaker's name (as in OpenAI's message "name"), kept in the turn's
	// metadata: memories then say "Ana moved to Porto", not "The user moved to Porto".
	Name string `json:"name,omitempty"`
	// OccurredAt defaults to the time the server receives the turn.
	OccurredAt time.Time      `json:"occurred_at,omitzero"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// TurnError is why the server rejected (or failed to store) one turn. Field is
// a JSON path such as "turns[3].content", indexed in the AddTurns call.
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *TurnError) Error() string {
	if e.Field == "" {
		return e.Code + ": " + e.Message
	}
	return e.Field + ": " + e.Code + ": " + e.Message
}

// TurnResult is the outcome for the turn at Index in the AddTurns call.
type TurnResult struct {
	Index     int        `json:"index"`
	TurnID    string     `json:"turn_id"`
	Status    string     `json:"status"`
	Error     *TurnError `json:"error,omitempty"`
	Retryable bool       `json:"retryable,omitempty"`
}

// AddResult reports what AddTurns stored. Accepted and Duplicates are both
// durable.
type AddResult struct {
	Results    []TurnResult `json:"results"`
	Accepted   int          `json:"accepted"`
	Duplicates int          `json:"duplicates"`
	Rejected   int          `json:"rejected"`
	Failed     int          `json:"failed"`
}

// APIError is an error answer of the engram API.
type APIError struct {
	Status  int    // HTTP status
	Code    string // machine-readable, e.g. "invalid_field", "unauthenticated"
	Message string
	Field   string // the request field at fault, if any
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration

	body []byte // the raw answer, for endpoints with richer error bodies
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engram: HTTP %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Retryable reports whether the same request may succeed later: 5xx (except
// 501 and 505, which are permanent) and 429.
func (e *APIError) Retryable() bool {
	switch {
	case e.Status == http.StatusTooManyRequests:
		return true
	case e.Status == http.StatusNotImplemented, e.Status == http.StatusHTTPVersionNotSupported:
		return false
	default:
		return e.Status >= 500
	}
}

// RejectedError is returned by AddTurns when some turns were invalid; the
// other turns were stored. Err is the server's answer when it refused a whole
// request because every turn in it was invalid (errors.As finds it).
type RejectedError struct {
	Rejected []TurnResult
	Err      *APIError
}

func (e *RejectedError) Error() string {
	first := e.Rejected[0]
	msg := "rejected"
	if first.Error != nil {
		msg = first.Error.Error()
	}
	if len(e.Rejected) == 1 {
		return fmt.Sprintf("engram: turn %d rejected: %s", first.Index, msg)
	}
	return fmt.Sprintf("engram: %d turns rejected; first, turn %d: %s", len(e.Rejected), first.Index, msg)
}

func (e *RejectedError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// Retry configures retries of requests that failed with a 5xx, a 429 or a
// network error. Zero fields take the defaults.
type Retry struct {
	InitialInterval time.Duration // first backoff; default 200ms
	MaxInterval     time.Duration // backoff cap; default 10s
	// MaxElapsedTime bounds the time spent retrying one request; default 2m.
	MaxElapsedTime time.Duration
	// MaxAttempts bounds attempts per request; default 0, no bound but time.
	MaxAttempts int
}

func (r Retry) withDefaults() Retry {
	if r.InitialInterval <= 0 {
		r.InitialInterval = 200 * time.Millisecond
	}
	if r.MaxInterval <= 0 {
		r.MaxInterval = 10 * time.Second
	}
	if r.MaxElapsedTime <= 0 {
		r.MaxElapsedTime = 2 * time.Minute
	}
	return r
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, proxies, TLS). Default: a
// client with a 60 s timeout per attempt.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetry sets the retry policy.
func WithRetry(r Retry) Option { return func(c *Client) { c.retry = r.withDefaults() } }

// WithBatchSize sets how many turns AddTurns sends per request (1–MaxBatch).
func WithBatchSize(n int) Option {
	return func(c *Client) { c.batch = min(max(n, 1), MaxBatch) }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// Client talks to an engram server. It is safe for concurrent use.
type Client struct {
	base      string
	token     string
	hc        *http.Client
	retry     Retry
	batch     int
	userAgent string
}

// New makes a client for the server at baseURL (e.g. "http://localhost:8080")
// authenticating with an API token.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{
		base:      strings.TrimRight(baseURL, "/"),
		token:     token,
		hc:        &http.Client{Timeout: 60 * time.Second},
		retry:     Retry{}.withDefaults(),
		batch:     MaxBatch,
		userAgent: "engram-go",
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

type addRequest struct {
	Turns []Turn `json:"turns"`
}

type addResponse struct {
	AddResult
	Error *TurnError `json:"error,omitempty"`
}

// AddTurns stores conversation turns. It returns once the server has made
// every valid turn durable. Turns without a TurnID get a UUIDv7 first, so
// retries and repeated calls with the same turns are idempotent (the repeats
// come back as duplicates). More than the batch size are sent in several
// requests, in order.
//
// err is nil when every turn is stored. When some turns were invalid, err is a
// *RejectedError and the others are stored. Any other error stops the call:
// AddResult then holds the outcomes known so far, and turns of earlier
// requests stay stored.
func (c *Client) AddTurns(ctx context.Context, turns ...Turn) (AddResult, error) {
	var res AddResult
	if len(turns) == 0 {
		return res, nil
	}
	turns = slices.Clone(turns) // the ids are assigned to our copy
	for i := range turns {
		if turns[i].TurnID == "" {
			id, err := uuid.NewV7()
			if err != nil {
				return res, fmt.Errorf("engram: assigning a turn id: %w", err)
			}
			turns[i].TurnID = id.String()
		}
	}
	var firstRefusal *APIError
	for start := 0; start < len(turns); start += c.batch {
		part := turns[start:min(start+c.batch, len(turns))]
		var resp addResponse
		err := c.do(ctx, http.MethodPost, "/v1/turns", addRequest{Turns: part}, &resp)
		var apiErr *APIError
		if err != nil && errors.As(err, &apiErr) && len(apiErr.body) > 0 {
			// 503 and all-rejected 400 answers carry per-turn results too.
			resp = addResponse{}
			_ = json.Unmarshal(apiErr.body, &resp)
		}
		res.merge(start, part, resp.Results)
		if err != nil {
			refused := apiErr != nil && apiErr.Status < 500 && len(resp.Results) == len(part) &&
				!slices.ContainsFunc(resp.Results, func(r TurnResult) bool { return r.Status != StatusRejected })
			if !refused {
				return res, err
			}
			if firstRefusal == nil {
				firstRefusal = apiErr
			}
		}
	}
	if res.Rejected > 0 {
		rej := &RejectedError{Err: firstRefusal}
		for _, r := range res.Results {
			if r.Status == StatusRejected {
				rej.Rejected = append(rej.Rejected, r)
			}
		}
		return res, rej
	}
	return res, nil
}

// merge adds one request's results, re-indexed from the batch to the call.
func (r *AddResult) merge(start int, part []Turn, results []TurnResult) {
	for _, tr := range results {
		if tr.Index < 0 || tr.Index >= len(part) {
			continue // not ours; never trust an index blindly
		}
		if tr.TurnID == "" {
			tr.TurnID = part[tr.Index].TurnID // the server does not echo rejected ids
		}
		if tr.Error != nil && start > 0 {
			tr.Error.Field = reindexField(tr.Error.Field, tr.Index, start+tr.Index)
		}
		tr.Index += start
		switch tr.Status {
		case StatusAccepted:
			r.Accepted++
		case StatusDuplicate:
			r.Duplicates++
		case StatusRejected:
			r.Rejected++
		case StatusFailed:
			r.Failed++
		}
		r.Results = append(r.Results, tr)
	}
}

// reindexField rewrites "turns[i]..." to "turns[j]...".
func reindexField(field string, i, j int) string {
	old := "turns[" + strconv.Itoa(i) + "]"
	if rest, ok := strings.CutPrefix(field, old); ok {
		return "turns[" + strconv.Itoa(j) + "]" + rest
	}
	return field
}

// do sends a JSON request and decodes a 2xx answer into out (if non-nil),
// retrying 5xx, 429 and network errors with exponential backoff, or after the
// server's Retry-After when that is longer. Every engram endpoint is read-only
// or idempotent, which is what makes retrying any of them safe. A non-2xx
// answer is returned as an *APIError (possibly wrapped).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("engram: %s %s: encoding request: %w", method, path, err)
		}
	}
	return c.doRaw(ctx, method, path, "application/json", payload, out)
}

// doRaw is do with an encoded payload of the given content type; out may be a
// *[]byte, which receives the raw answer.
func (c *Client) doRaw(ctx context.Context, method, path, contentType string, payload []byte, out any) error {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.retry.InitialInterval),
		backoff.WithMaxInterval(c.retry.MaxInterval),
		backoff.WithMaxElapsedTime(c.retry.MaxElapsedTime),
	)
	for attempt := 1; ; attempt++ {
		retryable, err := c.attempt(ctx, method, path, contentType, payload, out)
		if err == nil {
			return nil
		}
		if !retryable {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("engram: %s %s: %w (after %d attempts, last error: %v)", method, path, ctx.Err(), attempt, err)
		}
		wait := bo.NextBackOff()
		var apiErr *APIError
		if wait != backoff.Stop && errors.As(err, &apiErr) && apiErr.RetryAfter > wait {
			if apiErr.RetryAfter > c.retry.MaxElapsedTime-bo.GetElapsedTime() {
				wait = backoff.Stop // the server asks for longer than we may wait
			} else {
				wait = apiErr.RetryAfter
			}
		}
		if wait == backoff.Stop || (c.retry.MaxAttempts > 0 && attempt >= c.retry.MaxAttempts) {
			return fmt.Errorf("engram: %s %s: giving up after %d attempts: %w", method, path, attempt, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("engram: %s %s: %w (after %d attempts, last error: %v)", method, path, ctx.Err(), attempt, err)
		}
	}
}

// attempt makes one request; retryable says whether another may succeed.
func (c *Client) attempt(ctx context.Context, method, path, contentType string, payload []byte, out any) (retryable bool, err error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return false, fmt.Errorf("engram: building request: %w", err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return true, fmt.Errorf("engram: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return true, fmt.Errorf("engram: %s %s: reading response: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if raw, ok := out.(*[]byte); ok {
			*raw = data
			return false, nil
		}
		if out != nil && len(data) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return false, fmt.Errorf("engram: %s %s: decoding response: %w", method, path, err)
			}
		}
		return false, nil
	}
	apiErr := parseAPIError(resp, data)
	return apiErr.Retryable(), apiErr
}

func parseAPIError(resp *http.Response, data []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, body: data}
	var eb struct {
		Error *TurnError `json:"error"`
	}
	if json.Unmarshal(data, &eb) == nil && eb.Error != nil {
		e.Code, e.Message, e.Field = eb.Error.Code, eb.Error.Message, eb.Error.Field
	} else {
		// Not engram's JSON (a proxy's page, say): keep a short excerpt.
		e.Message = http.StatusText(resp.StatusCode)
		if s := strings.TrimSpace(string(data[:min(len(data), 200)])); s != "" {
			e.Message += ": " + s
		}
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
