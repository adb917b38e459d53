package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/memory"
)

// TurnsResponse is the body of every POST /v1/turns answer that got as far as
// per-turn results (202, 503, and 400/413 when every turn was rejected). Error
// is set when the status is not 202.
type TurnsResponse struct {
	ingest.TurnsResult
	Error *Error `json:"error,omitempty"`
}

// maxRememberBody bounds a POST /v1/memories body.
const maxRememberBody = 64 << 10

// postTurns serves POST /v1/turns.
//
// Status choice: 202 when every valid turn is durable (invalid ones, and turn ids
// already stored with other content, are reported per turn); 503 with Retry-After
// when JetStream failed to acknowledge any turn, even if others were acknowledged,
// because the client must resend and turn ids
// make the resend idempotent (acknowledged turns come back "duplicate"); 400
// (413 when every problem is a size limit, 409 when every turn reuses a stored turn
// id with other content) when no turn was valid.
func (e *edge) postTurns(w http.ResponseWriter, r *http.Request, p Principal) error {
	limit := e.turns.MaxBodyBytes()
	if r.ContentLength > limit {
		return newProblem(http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
			fmt.Sprintf("body is %d bytes, the limit is %d", r.ContentLength, limit), "")
	}
	rsv, err := e.bodies.reserve(r, limit)
	defer rsv.release()
	if err != nil {
		return err
	}
	// The body is decoded as it is read (ingest.Service.IngestFrom): what the request
	// holds is the decoded turns, about as many bytes as were read, so a body of unknown
	// length gives back the rest of its reservation once its end is reached.
	body := &countingBody{r: http.MaxBytesReader(w, r.Body, limit), atEOF: rsv.keep}
	var mayActFor func(string) bool
	if p.Scoped() {
		mayActFor = p.MayActFor
	}
	res, err := e.turns.IngestFrom(r.Context(), p.Tenant, mayActFor, body)
	if body.err != nil {
		// The read failed, not the JSON it cut short.
		var mbe *http.MaxBytesError
		if errors.As(body.err, &mbe) {
			return newProblem(http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
				fmt.Sprintf("body exceeds %d bytes", limit), "")
		}
		if !errors.Is(body.err, io.ErrUnexpectedEOF) {
			e.log.DebugContext(r.Context(), "reading request body", "err", body.err)
		}
		return newProblem(http.StatusBadRequest, memory.CodeMalformedJSON, "reading body: "+body.err.Error(), "")
	}
	var fe *memory.FieldError
	if errors.As(err, &fe) {
		// ingest's answers show its FieldErrors as they are, as in per-turn results.
		status := http.StatusBadRequest
		switch fe.Code {
		case memory.CodeTooLarge:
			status = http.StatusRequestEntityTooLarge
		case ingest.CodeForbidden:
			status = http.StatusForbidden
		}
		return newProblem(status, fe.Code, fe.Reason(), fe.Field)
	}
	if err != nil {
		return err
	}
	e.obs.Turns(res)

	resp := TurnsResponse{TurnsResult: res}
	status := http.StatusAccepted
	switch {
	case res.Failed > 0:
		status = http.StatusServiceUnavailable
		for k, v := range retryAfter() {
			w.Header()[k] = v
		}
		resp.Error = &Error{Code: ingest.CodeUnavailable,
			Message: fmt.Sprintf("%d of %d turns were not acknowledged by JetStream; resend the request with the same turn ids",
				res.Failed, len(res.Results))}
	case res.Accepted+res.Duplicates == 0:
		allTooLarge, allConflicts := true, true
		var first *memory.FieldError
		for _, out := range res.Results {
			if out.Status != ingest.StatusRejected {
				continue
			}
			if first == nil {
				first = out.Error
			}
			allTooLarge = allTooLarge && out.Error.Code == memory.CodeTooLarge
			allConflicts = allConflicts && out.Error.Code == ingest.CodeConflict
		}
		status = http.StatusBadRequest
		switch {
		case allTooLarge:
			status = http.StatusRequestEntityTooLarge
		case allConflicts:
			// Every turn reuses a stored turn id with other content.
			status = http.StatusConflict
		}
		msg := first.Reason()
		if len(res.Results) > 1 {
			msg = fmt.Sprintf("all %d turns were rejected; first: %s", len(res.Results), msg)
		}
		resp.Error = &Error{Code: first.Code, Message: msg, Field: first.Field}
	}
	WriteJSON(w, status, resp)
	return nil
}

// countingBody counts the bytes read, keeps the first read error other than EOF and
// calls atEOF with the count when the end is reached.
type countingBody struct {
	r     io.Reader
	n     int64
	err   error
	atEOF func(n int64)
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	switch {
	case err == io.EOF && c.atEOF != nil:
		c.atEOF(c.n)
		c.atEOF = nil
	case err != nil && err != io.EOF && c.err == nil:
		c.err = err
	}
	return n, err
}

// remember serves POST /v1/memories: 202 once JetStream has acknowledged the
// explicit memory.
func (e *edge) remember(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req ingest.RememberRequest
	if pr := decodeJSON(w, r, maxRememberBody, &req); pr != nil {
		return pr
	}
	if err := forbidUser(p, "user_id", req.UserID); err != nil {
		return err
	}
	res, err := e.turns.Remember(r.Context(), p.Tenant, actorOf(p), req)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusAccepted, res)
	return nil
}

// actorOf is who the audit trail records for a request's writes.
func actorOf(p Principal) string {
	if p.Name == "" {
		return "api"
	}
	return "api:" + p.Name
}
