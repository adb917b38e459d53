package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// problem is an answer the edge has already decided on (a bad path parameter or
// body, an unknown route, a rejected batch): fail writes it as it is.
type problem struct {
	status int
	body   Error
	header http.Header // extra headers (Allow, Retry-After); nil for none
}

func newProblem(status int, code, message, field string) *problem {
	return &problem{status: status, body: Error{Code: code, Message: message, Field: field}}
}

func (p *problem) Error() string { return p.body.Code + ": " + p.body.Message }

func writeProblem(w http.ResponseWriter, p *problem) {
	for k, vs := range p.header {
		w.Header()[k] = vs
	}
	WriteError(w, p.status, p.body.Code, p.body.Message, p.body.Field)
}

// retryAfterSeconds is the Retry-After of a 503: JetStream outages that are
// worth waiting out (leader election, reconnect) take about that long.
const retryAfterSeconds = 1

func retryAfter() http.Header {
	return http.Header{"Retry-After": []string{strconv.Itoa(retryAfterSeconds)}}
}

// fail is the edge's one mapping from an error to its HTTP answer; every handler's
// error goes through it. missing is the route's answer to memory.ErrNotFound (zero:
// "not found"). Unexpected errors are logged and answered 500 without detail.
func (e *edge) fail(w http.ResponseWriter, r *http.Request, missing Error, err error) {
	var p *problem
	var fe *memory.FieldError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &p):
		writeProblem(w, p)
	case errors.As(err, &fe):
		code := fe.Code
		if code == "" {
			code = memory.CodeInvalidField
		}
		WriteError(w, http.StatusBadRequest, code, fe.Reason(), fe.Field)
	case errors.Is(err, retriever.ErrTaskNotFound):
		WriteError(w, http.StatusNotFound, "not_found", "no state for this task (never set, deleted or expired)", "task_id")
	case errors.Is(err, memory.ErrNotFound):
		if missing == (Error{}) {
			missing = Error{Code: "not_found", Message: "not found"}
		}
		WriteError(w, http.StatusNotFound, missing.Code, missing.Message, missing.Field)
	case errors.Is(err, memory.ErrVersionMismatch):
		WriteError(w, http.StatusConflict, "version_mismatch", err.Error(), "expect_version")
	case errors.Is(err, lifecycle.ErrConflict):
		WriteError(w, http.StatusConflict, "conflict", err.Error(), "")
	case errors.Is(err, lifecycle.ErrNotArchived):
		WriteError(w, http.StatusConflict, "not_archived", err.Error(), "")
	case errors.As(err, &mbe):
		WriteError(w, http.StatusRequestEntityTooLarge, "too_large", err.Error(), "")
	case errors.Is(err, ingest.ErrUnavailable):
		writeProblem(w, &problem{status: http.StatusServiceUnavailable, header: retryAfter(), body: Error{
			Code: ingest.CodeUnavailable, Message: "the memory was not acknowledged by JetStream; retry with the same id"}})
	case errors.Is(err, lifecycle.ErrBadExport), errors.Is(err, memory.ErrInvalid):
		WriteError(w, http.StatusBadRequest, "invalid", err.Error(), "")
	case errors.Is(err, context.Canceled) || r.Context().Err() != nil:
		// The client went away; nobody reads this.
		WriteError(w, http.StatusServiceUnavailable, "cancelled", "request cancelled", "")
	default:
		e.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", r.Pattern, "err", err)
		WriteError(w, http.StatusInternalServerError, "internal", "internal error", "")
	}
}
