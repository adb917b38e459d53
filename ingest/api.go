package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Per-turn statuses of a POST /v1/turns response.
const (
	// StatusAccepted: JetStream acknowledged the turn; it is durable.
	StatusAccepted = "accepted"
	// StatusDuplicate: the stream already held a turn with this id (from an
	// earlier request or an earlier attempt of this one); it is durable.
	StatusDuplicate = "duplicate"
	// StatusRejected: the turn is invalid; resending it unchanged cannot succeed.
	StatusRejected = "rejected"
	// StatusFailed: JetStream did not acknowledge the turn; resend it with the
	// same turn id.
	StatusFailed = "failed"
)

// CodeUnavailable is the error code of a turn (and of a 503) that JetStream
// did not acknowledge.
const CodeUnavailable = "unavailable"

// DefaultAckTimeout bounds how long a request waits for JetStream's acks.
const DefaultAckTimeout = 10 * time.Second

// retryAfterSeconds is the Retry-After of a 503: JetStream outages that are
// worth waiting out (leader election, reconnect) take about that long.
const retryAfterSeconds = 1

// APIConfig configures the write API.
type APIConfig struct {
	// Limits bounds requests; zero fields take DefaultLimits. MaxIDLen may not
	// exceed streams.MaxIDLength, since ids end up in subjects and msg ids.
	Limits Limits
	// Redactor removes secrets from content and tool errors before publishing.
	// nil means redact.New(redact.Config{}).
	Redactor *redact.Redactor
	// Publisher is the JetStream context turns are published with. Required.
	Publisher streams.Publisher
	// Logger receives request problems; nil discards them.
	Logger *slog.Logger
	// Now is the clock (receive time, occurred_at default); nil means time.Now.
	Now func() time.Time
	// AckTimeout bounds the wait for JetStream's acks. Default DefaultAckTimeout.
	AckTimeout time.Duration
}

// API serves POST /v1/turns. It is safe for concurrent use.
type API struct {
	limits     Limits
	redactor   *redact.Redactor
	pub        streams.Publisher
	log        *slog.Logger
	now        func() time.Time
	ackTimeout time.Duration
}

// NewAPI checks cfg and builds the API.
func NewAPI(cfg APIConfig) (*API, error) {
	if cfg.Publisher == nil {
		return nil, errors.New("building ingest API: Publisher is required")
	}
	a := &API{
		limits:     cfg.Limits.withDefaults(),
		redactor:   cfg.Redactor,
		pub:        cfg.Publisher,
		log:        cfg.Logger,
		now:        cfg.Now,
		ackTimeout: cfg.AckTimeout,
	}
	if a.limits.MaxIDLen > streams.MaxIDLength {
		return nil, fmt.Errorf("building ingest API: Limits.MaxIDLen %d exceeds the %d that subjects allow",
			a.limits.MaxIDLen, streams.MaxIDLength)
	}
	if a.redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, fmt.Errorf("building ingest API: default redactor: %w", err)
		}
		a.redactor = r
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.ackTimeout <= 0 {
		a.ackTimeout = DefaultAckTimeout
	}
	return a, nil
}

// Register adds POST /v1/turns to mux. Authentication is the caller's: wrap the
// mux with (*httpapi.Tokens).Middleware.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/turns", a.handleTurns)
	mux.HandleFunc("POST /v1/memories", a.handleRemember)
}

// TurnOutcome is the result for the turn at Index in the request.
type TurnOutcome struct {
	Index  int                `json:"index"`
	TurnID string             `json:"turn_id,omitempty"`
	Status string             `json:"status"`
	Error  *memory.FieldError `json:"error,omitempty"`
	// Retryable is set on failed turns: resend them with the same turn id.
	Retryable bool `json:"retryable,omitempty"`
}

// TurnsResponse is the body of every POST /v1/turns answer that got as far as
// per-turn results (202, 503, and 400/413 when every turn was rejected). Error
// is set when the status is not 202.
type TurnsResponse struct {
	Results    []TurnOutcome  `json:"results"`
	Accepted   int            `json:"accepted"`
	Duplicates int            `json:"duplicates"`
	Rejected   int            `json:"rejected"`
	Failed     int            `json:"failed"`
	Error      *httpapi.Error `json:"error,omitempty"`
}

// handleTurns validates, redacts and publishes a request's turns.
//
// Status choice: 202 when every valid turn is durable (invalid ones are reported
// per turn); 503 with Retry-After when JetStream failed to acknowledge any turn,
// even if others were acknowledged, because the client must resend and turn ids
// make the resend idempotent (acknowledged turns come back "duplicate"); 400
// (413 when every problem is a size limit) when no turn was valid.
func (a *API) handleTurns(w http.ResponseWriter, r *http.Request) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok || p.Tenant == "" {
		// The middleware should have refused the request; never publish without a tenant.
		httpapi.Unauthorized(w, "missing or invalid API token")
		return
	}
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	decoded, ferr := DecodeTurns(body, a.limits, a.now())
	if ferr != nil {
		status := http.StatusBadRequest
		if ferr.Code == memory.CodeTooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		httpapi.WriteError(w, status, ferr.Code, ferr.Message, ferr.Field)
		return
	}

	resp := TurnsResponse{Results: make([]TurnOutcome, len(decoded))}
	evs := make([]streams.TurnEvent, 0, len(decoded))
	at := make([]int, 0, len(decoded)) // evs[j] is the turn at resp.Results[at[j]]
	for i, tr := range decoded {
		out := &resp.Results[i]
		out.Index = tr.Index
		if tr.Err != nil {
			out.Status, out.Error = StatusRejected, tr.Err
			continue
		}
		t := tr.Turn
		out.TurnID = t.TurnID
		t.Tenant = p.Tenant // only ever from the token
		if kinds := redactTurn(a.redactor, &t); len(kinds) > 0 {
			a.log.InfoContext(r.Context(), "redacted secrets from a turn", "tenant", p.Tenant, "turn_id", t.TurnID, "kinds", kinds)
		}
		ev := streams.TurnEvent{V: streams.TurnEventVersion, Tenant: p.Tenant, Turn: t}
		if err := ev.Validate(); err != nil {
			// DecodeTurns already enforces the same rules; this guards against the
			// two drifting apart, which would otherwise surface as endless 503s.
			out.Status = StatusRejected
			out.Error = &memory.FieldError{Code: memory.CodeInvalidField, Message: err.Error()}
			continue
		}
		evs = append(evs, ev)
		at = append(at, i)
	}

	if len(evs) > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), a.ackTimeout)
		pubs, err := streams.PublishTurns(ctx, a.pub, evs)
		cancel()
		if err != nil {
			a.log.WarnContext(r.Context(), "publishing turns", "tenant", p.Tenant, "turns", len(evs), "err", err)
		}
		for j, pr := range pubs {
			out := &resp.Results[at[j]]
			switch {
			case pr.Err != nil:
				out.Status, out.Retryable = StatusFailed, true
				out.Error = &memory.FieldError{Code: CodeUnavailable,
					Message: "JetStream did not acknowledge the turn; resend it with the same turn_id"}
			case pr.Duplicate:
				out.Status = StatusDuplicate
			default:
				out.Status = StatusAccepted
			}
		}
	}

	allTooLarge := true
	var firstRejected *memory.FieldError
	for _, out := range resp.Results {
		switch out.Status {
		case StatusAccepted:
			resp.Accepted++
		case StatusDuplicate:
			resp.Duplicates++
		case StatusFailed:
			resp.Failed++
		case StatusRejected:
			resp.Rejected++
			if firstRejected == nil {
				firstRejected = out.Error
			}
			allTooLarge = allTooLarge && out.Error.Code == memory.CodeTooLarge
		}
	}
	status := http.StatusAccepted
	switch {
	case resp.Failed > 0:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		resp.Error = &httpapi.Error{Code: CodeUnavailable,
			Message: fmt.Sprintf("%d of %d turns were not acknowledged by JetStream; resend the request with the same turn ids",
				resp.Failed, len(resp.Results))}
	case resp.Accepted+resp.Duplicates == 0:
		status = http.StatusBadRequest
		if allTooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		msg := firstRejected.Message
		if len(resp.Results) > 1 {
			msg = fmt.Sprintf("all %d turns were rejected; first: %s", len(resp.Results), msg)
		}
		resp.Error = &httpapi.Error{Code: firstRejected.Code, Message: msg, Field: firstRejected.Field}
	}
	httpapi.WriteJSON(w, status, resp)
}

// readBody reads the whole bounded body, answering 413 or 400 itself on failure.
func (a *API) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := a.limits.MaxBodyBytes
	if r.ContentLength > limit {
		httpapi.WriteError(w, http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
			fmt.Sprintf("body is %d bytes, the limit is %d", r.ContentLength, limit), "")
		return nil, false
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpapi.WriteError(w, http.StatusRequestEntityTooLarge, memory.CodeTooLarge,
				fmt.Sprintf("body exceeds %d bytes", limit), "")
			return nil, false
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			a.log.DebugContext(r.Context(), "reading request body", "err", err)
		}
		httpapi.WriteError(w, http.StatusBadRequest, memory.CodeMalformedJSON, "reading body: "+err.Error(), "")
		return nil, false
	}
	return buf.Bytes(), true
}

// redactTurn replaces secrets in the turn's free text and returns the kinds
// found, which is all that may be logged.
func redactTurn(r *redact.Redactor, t *memory.Turn) []string {
	var kinds []string
	var f []redact.Finding
	t.Content, f = r.Redact(t.Content)
	kinds = appendKinds(kinds, f)
	if t.Tool != nil && t.Tool.Error != "" {
		tool := *t.Tool // copy rather than write through a pointer the caller may share
		tool.Error, f = r.Redact(tool.Error)
		kinds = appendKinds(kinds, f)
		t.Tool = &tool
	}
	return kinds
}

func appendKinds(kinds []string, f []redact.Finding) []string {
	for _, x := range f {
		kinds = append(kinds, x.Kind)
	}
	return kinds
}
