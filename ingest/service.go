package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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

// ErrUnavailable is returned when JetStream did not acknowledge a write; the same
// write (same id) may be retried.
var ErrUnavailable = errors.New("JetStream did not acknowledge the write")

// defaultAckTimeout bounds how long a request waits for JetStream's acks.
const defaultAckTimeout = 10 * time.Second

// Config configures the write service.
type Config struct {
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
	// AckTimeout bounds the wait for JetStream's acks. Default 10s.
	AckTimeout time.Duration
	// Stored looks up turns already stored, so that a resent turn id with different
	// content is refused (409) after the stream's duplicate window too. nil: only
	// the stream is asked (conflict.go).
	Stored StoredTurns
	// Streams reads duplicates back to compare their content. nil: the Publisher,
	// when it can (a jetstream.JetStream can).
	Streams StreamReader
}

// Service validates, redacts and publishes turns and explicit memories. It is
// safe for concurrent use.
type Service struct {
	limits     Limits
	redactor   *redact.Redactor
	pub        streams.Publisher
	log        *slog.Logger
	now        func() time.Time
	ackTimeout time.Duration
	stored     StoredTurns
	streams    StreamReader
}

// NewService checks cfg and builds the service.
func NewService(cfg Config) (*Service, error) {
	if cfg.Publisher == nil {
		return nil, errors.New("building the ingest service: Publisher is required")
	}
	s := &Service{
		limits:     cfg.Limits.withDefaults(),
		redactor:   cfg.Redactor,
		pub:        cfg.Publisher,
		log:        cfg.Logger,
		now:        cfg.Now,
		ackTimeout: cfg.AckTimeout,
		stored:     cfg.Stored,
		streams:    cfg.Streams,
	}
	if s.streams == nil {
		s.streams, _ = cfg.Publisher.(StreamReader)
	}
	if s.limits.MaxIDLen > streams.MaxIDLength {
		return nil, fmt.Errorf("building the ingest service: Limits.MaxIDLen %d exceeds the %d that subjects allow",
			s.limits.MaxIDLen, streams.MaxIDLength)
	}
	if s.limits.MaxContentBytes > memory.MaxTurnContentBytes || s.limits.MaxMetadataBytes > memory.MaxMetadataBytes {
		return nil, fmt.Errorf("building the ingest service: Limits.MaxContentBytes %d or MaxMetadataBytes %d exceeds what the store holds (%d, %d)",
			s.limits.MaxContentBytes, s.limits.MaxMetadataBytes, memory.MaxTurnContentBytes, memory.MaxMetadataBytes)
	}
	if s.redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, fmt.Errorf("building the ingest service: default redactor: %w", err)
		}
		s.redactor = r
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ackTimeout <= 0 {
		s.ackTimeout = defaultAckTimeout
	}
	return s, nil
}

// MaxBodyBytes bounds a turns request body.
func (s *Service) MaxBodyBytes() int64 { return s.limits.MaxBodyBytes }

// TurnOutcome is the result for the turn at Index in the request.
type TurnOutcome struct {
	Index  int                `json:"index"`
	TurnID string             `json:"turn_id,omitempty"`
	Status string             `json:"status"`
	Error  *memory.FieldError `json:"error,omitempty"`
	// Retryable is set on failed turns: resend them with the same turn id.
	Retryable bool `json:"retryable,omitempty"`
}

// TurnsResult is the outcome of every turn of a request, in request order, and
// how many ended in each status.
type TurnsResult struct {
	Results    []TurnOutcome `json:"results"`
	Accepted   int           `json:"accepted"`
	Duplicates int           `json:"duplicates"`
	Rejected   int           `json:"rejected"`
	Failed     int           `json:"failed"`
}

// Ingest validates a request body of turns (DecodeTurns), redacts and publishes the
// valid ones for tenant, which only ever comes from authentication, and waits for
// JetStream's acks. A body that fails as a whole returns its *memory.FieldError;
// otherwise every turn has an outcome: invalid turns are rejected, and turns
// JetStream did not acknowledge are failed (and retryable).
func (s *Service) Ingest(ctx context.Context, tenant string, body []byte) (TurnsResult, error) {
	return s.IngestFor(ctx, tenant, nil, body)
}

// CodeForbidden is the error code of a body with a turn for a user the caller may
// not act for.
const CodeForbidden = "forbidden"

// IngestFor is Ingest for a caller limited to some users: when mayActFor (nil: every
// user) refuses the user of any valid turn, nothing of the body is published and the
// *memory.FieldError (code CodeForbidden) names that turn's user_id.
func (s *Service) IngestFor(ctx context.Context, tenant string, mayActFor func(userID string) bool, body []byte) (TurnsResult, error) {
	decoded, ferr := DecodeTurns(body, s.limits, s.now())
	if ferr != nil {
		return TurnsResult{}, ferr
	}
	return s.ingestDecoded(ctx, tenant, mayActFor, decoded)
}

// IngestFrom is IngestFor reading the body from r as it arrives (DecodeTurnsFrom), so
// that neither the raw body nor the JSON of each turn is held beside the decoded
// turns. Everything is still decoded and checked before the first turn is published: a
// body that fails as a whole (malformed at its last byte, one turn too many, a turn for
// a user the caller may not act for) publishes nothing.
func (s *Service) IngestFrom(ctx context.Context, tenant string, mayActFor func(userID string) bool, r io.Reader) (TurnsResult, error) {
	decoded, ferr := DecodeTurnsFrom(r, s.limits, s.now())
	if ferr != nil {
		return TurnsResult{}, ferr
	}
	return s.ingestDecoded(ctx, tenant, mayActFor, decoded)
}

// publishChunk is how many turns are redacted, encoded and published together, and
// publishDepth how many chunks may wait for their acks at once: a batch's encoded
// messages (and the client's copies of them until each is acknowledged) never add up
// to a second copy of the batch.
const (
	publishChunk = 128
	publishDepth = 2
)

// ingestDecoded redacts and publishes the valid turns of decoded, chunk by chunk, and
// drops each turn's content once its chunk is acknowledged.
func (s *Service) ingestDecoded(ctx context.Context, tenant string, mayActFor func(userID string) bool, decoded []TurnResult) (TurnsResult, error) {
	if mayActFor != nil {
		for _, tr := range decoded {
			if tr.Err == nil && !mayActFor(tr.Turn.UserID) {
				return TurnsResult{}, &memory.FieldError{Code: CodeForbidden, Field: joinPath(tr.Path, "user_id"),
					Message: fmt.Sprintf("this token may not act for user %q", tr.Turn.UserID)}
			}
		}
	}

	res := TurnsResult{Results: make([]TurnOutcome, len(decoded))}
	valid := make([]int, 0, len(decoded)) // indexes of the valid turns
	for i, tr := range decoded {
		out := &res.Results[i]
		out.Index = tr.Index
		if tr.Err != nil {
			out.Status, out.Error = StatusRejected, tr.Err
			continue
		}
		out.TurnID = tr.Turn.TurnID
		valid = append(valid, i)
	}
	// Turns already stored are not published again: the same content is a duplicate,
	// a different one a conflict (conflict.go says where the truth is). One look-up
	// for the whole batch: it needs only the ids.
	hashes := s.storedHashes(ctx, tenant, decoded, valid)

	// Chunks are pipelined: while one waits for its acks the next is redacted (CPU
	// work), at most publishDepth in flight. Each chunk waits at most ackTimeout, so
	// the redaction of a large batch never eats into the wait; a chunk whose wait ran
	// out fails the rest of the batch at once: JetStream is not answering.
	var (
		stalled  atomic.Bool
		wg       sync.WaitGroup
		inFlight = make(chan struct{}, publishDepth)
	)
	for len(valid) > 0 {
		chunk := valid[:min(publishChunk, len(valid))]
		valid = valid[len(chunk):]
		if stalled.Load() {
			for _, i := range chunk {
				failTurn(&res.Results[i])
				decoded[i].Turn = memory.Turn{}
			}
			continue
		}
		evs, at := s.prepareChunk(ctx, tenant, decoded, chunk, hashes, &res)
		inFlight <- struct{}{}
		wg.Go(func() {
			defer func() { <-inFlight }()
			if s.publishPrepared(ctx, tenant, decoded, evs, at, &res) {
				stalled.Store(true)
			}
			// Each goroutine touches only its own chunk's entries.
			for _, i := range chunk {
				decoded[i].Turn = memory.Turn{} // its content is on the stream now, or failed
			}
		})
	}
	wg.Wait()

	for _, out := range res.Results {
		switch out.Status {
		case StatusAccepted:
			res.Accepted++
		case StatusDuplicate:
			res.Duplicates++
		case StatusFailed:
			res.Failed++
		case StatusRejected:
			res.Rejected++
		}
	}
	return res, nil
}

// failTurn records that JetStream did not acknowledge a turn.
func failTurn(out *TurnOutcome) {
	out.Status, out.Retryable = StatusFailed, true
	out.Error = &memory.FieldError{Code: CodeUnavailable,
		Message: "JetStream did not acknowledge the turn; resend it with the same turn_id"}
}

// prepareChunk redacts the turns decoded[i] for i in chunk and returns those to
// publish (evs[j] is the turn at res.Results[at[j]]); the others' outcomes (stored
// already, or invalid) go into res.
func (s *Service) prepareChunk(ctx context.Context, tenant string, decoded []TurnResult, chunk []int,
	hashes map[string][]byte, res *TurnsResult) (evs []streams.TurnEvent, at []int) {
	evs = make([]streams.TurnEvent, 0, len(chunk))
	at = make([]int, 0, len(chunk))
	for _, i := range chunk {
		out := &res.Results[i]
		t := decoded[i].Turn
		t.Tenant = tenant
		if kinds := s.redactor.Turn(&t); len(kinds) > 0 {
			s.log.InfoContext(ctx, "redacted secrets from a turn", "tenant", tenant, "turn_id", t.TurnID, "kinds", kinds)
		}
		ev := streams.TurnEvent{V: streams.TurnEventVersion, Tenant: tenant, Turn: t}
		if err := ev.Validate(); err != nil {
			// DecodeTurns already enforces the same rules; this guards against the
			// two drifting apart, which would otherwise surface as endless 503s.
			out.Status = StatusRejected
			out.Error = &memory.FieldError{Code: memory.CodeInvalidField, Message: err.Error()}
			continue
		}
		if h, ok := hashes[t.TurnID]; ok {
			if bytes.Equal(h, memory.ContentHash(t.Content)) {
				out.Status = StatusDuplicate
			} else {
				out.Status, out.Error = StatusRejected, conflictError(decoded[i].Path, t.TurnID)
			}
			continue
		}
		evs = append(evs, ev)
		at = append(at, i)
	}
	return evs, at
}

// publishPrepared publishes evs, records each outcome in res and reports whether the
// wait for the acks ran out.
func (s *Service) publishPrepared(ctx context.Context, tenant string, decoded []TurnResult, evs []streams.TurnEvent,
	at []int, res *TurnsResult) (timedOut bool) {
	if len(evs) == 0 {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, s.ackTimeout)
	defer cancel()
	pubs, err := streams.PublishTurns(pctx, s.pub, evs)
	if err != nil {
		s.log.WarnContext(ctx, "publishing turns", "tenant", tenant, "turns", len(evs), "err", err)
	}
	for j, pr := range pubs {
		out := &res.Results[at[j]]
		switch {
		case pr.Err != nil:
			failTurn(out)
		case pr.Duplicate && s.originalDiffers(ctx, pr, evs[j]):
			out.Status, out.Error = StatusRejected, conflictError(decoded[at[j]].Path, evs[j].Turn.TurnID)
		case pr.Duplicate:
			out.Status = StatusDuplicate
		default:
			out.Status = StatusAccepted
		}
	}
	return pctx.Err() != nil
}
