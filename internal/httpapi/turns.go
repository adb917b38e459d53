package httpapi

import (
	"bytes"
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
	release, err := e.bodies.reserve(r, e.turns.MaxBodyBytes())
	defer release()
	if err != nil {
		return err
	}
	body, err := e.readBody(w, r, e.turns.MaxBodyBytes())
	if err != nil {
		return err
	}
	var mayActFor func(string) bool
	if p.Scoped() {
		mayActFor = p.MayActFor
	}
	res, err := e.turns.IngestFor(r.Context(), p.Tenant, mayActFor, body)
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

// readBody reads the whole body, bounded by limit.
func (e *edge) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, newProblem(http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
			fmt.Sprintf("body is %d bytes, the limit is %d", r.ContentLength, limit), "")
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newProblem(http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
				fmt.Sprintf("body exceeds %d bytes", limit), "")
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			e.log.DebugContext(r.Context(), "reading request body", "err", err)
		}
		return nil, newProblem(http.StatusBadRequest, memory.CodeMalformedJSON, "reading body: "+err.Error(), "")
	}
	return buf.Bytes(), nil
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
