package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers a dead letter carries on top of the original message's headers.
const (
	HeaderDLQStage        = "Engram-Dlq-Stage"         // worker stage that gave up
	HeaderDLQSubject      = "Engram-Dlq-Subject"       // original subject
	HeaderDLQStream       = "Engram-Dlq-Stream"        // original stream
	HeaderDLQSeq          = "Engram-Dlq-Seq"           // original stream sequence
	HeaderDLQError        = "Engram-Dlq-Error"         // last error, one line, truncated
	HeaderDLQAttempts     = "Engram-Dlq-Attempts"      // deliveries made
	HeaderDLQFirstFailure = "Engram-Dlq-First-Failure" // RFC 3339 with nanoseconds
	HeaderDLQLastFailure  = "Engram-Dlq-Last-Failure"  // RFC 3339 with nanoseconds
	// HeaderDLQMsgID keeps the original Nats-Msg-Id: the dead letter needs its own, or
	// JetStream would drop it as a duplicate of the original.
	HeaderDLQMsgID = "Engram-Dlq-Msg-Id"

	dlqHeaderPrefix  = "Engram-Dlq-"
	natsHeaderPrefix = "Nats-"
	maxErrorHeader   = 2048
)

// deadLetter is everything needed to write one DLQ entry.
type deadLetter struct {
	Stage    string
	Subject  string
	Stream   string
	Seq      uint64
	Headers  nats.Header
	Data     []byte
	Err      error
	Attempts uint64
	First    time.Time
	Last     time.Time
}

// msgID is unique per original message, so a crash between the DLQ publish and the Term
// of the original does not leave two entries (within the DLQ's duplicate window).
func (d deadLetter) msgID() string {
	return "dlq:" + d.Stream + ":" + strconv.FormatUint(d.Seq, 10)
}

func (d deadLetter) message() (*nats.Msg, error) {
	stageTok, err := idToken("stage", d.Stage)
	if err != nil {
		return nil, fmt.Errorf("building dead letter for %s/%d: %w", d.Stream, d.Seq, err)
	}
	tenantTok := unknownTenantToken
	if t := deadLetterTenant(d.Subject, d.Headers); t != "" {
		tenantTok = EncodeToken(t)
	}
	m := nats.NewMsg(DLQSubjectPrefix + stageTok + "." + tenantTok)
	m.Data = d.Data
	for k, vs := range d.Headers {
		switch {
		case k == HeaderMsgID:
			m.Header[HeaderDLQMsgID] = slices.Clone(vs)
		case strings.HasPrefix(k, natsHeaderPrefix), strings.HasPrefix(k, dlqHeaderPrefix):
			// Nats-* are server directives for the original publish (dedupe,
			// expectations, TTL); replaying them into the DLQ would misfire.
		default:
			m.Header[k] = slices.Clone(vs)
		}
	}
	errText := "unknown error"
	if d.Err != nil {
		errText = d.Err.Error()
	}
	m.Header.Set(HeaderDLQStage, d.Stage)
	m.Header.Set(HeaderDLQSubject, d.Subject)
	m.Header.Set(HeaderDLQStream, d.Stream)
	m.Header.Set(HeaderDLQSeq, strconv.FormatUint(d.Seq, 10))
	m.Header.Set(HeaderDLQError, headerValue(errText, maxErrorHeader))
	m.Header.Set(HeaderDLQAttempts, strconv.FormatUint(d.Attempts, 10))
	m.Header.Set(HeaderDLQFirstFailure, d.First.UTC().Format(time.RFC3339Nano))
	m.Header.Set(HeaderDLQLastFailure, d.Last.UTC().Format(time.RFC3339Nano))
	m.Header.Set(HeaderMsgID, d.msgID())
	return m, nil
}

// deadLetterTenant is the tenant a dead letter of a message on subject with headers h
// is filed under, "" when unknown (the "_" token). The subject is what NATS authorised
// and what erasure deletes by, so its tenant wins over the Engram-Tenant header, which
// any publisher may set. The header counts only when the subject is not an engram event
// subject at all (engram.turns.*.*, engram.candidates.*.*, engram.dlq.*.*: say a
// message of a stream other than TURNS and CANDIDATES); an engram subject whose tenant
// token does not decode to a valid tenant leaves the tenant unknown rather than taking
// the header's.
func deadLetterTenant(subject string, h nats.Header) string {
	if isEventSubject(subject) {
		return subjectTenant(subject)
	}
	if t := h.Get(HeaderTenant); ValidateID("tenant", t) == nil {
		return t
	}
	return ""
}

// isEventSubject reports whether subject has the shape of a turn, candidate or DLQ
// subject, whose third (DLQ: fourth) token is the tenant.
func isEventSubject(subject string) bool {
	toks := strings.Split(subject, ".")
	return len(toks) == 4 && toks[0] == "engram" && (toks[1] == "turns" || toks[1] == "candidates" || toks[1] == "dlq")
}

// headerValue makes s safe for a NATS header (a line break would corrupt the protocol)
// and bounds its length.
func headerValue(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

func publishDeadLetter(ctx context.Context, p Publisher, d deadLetter) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	if _, err := p.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("publishing dead letter for %s/%d to %s: %w", d.Stream, d.Seq, m.Subject, err)
	}
	return nil
}

// DLQEntry is one dead letter as read back from the DLQ stream.
type DLQEntry struct {
	ID             uint64      `json:"id"` // sequence in the DLQ stream
	Stage          string      `json:"stage"`
	Tenant         string      `json:"tenant,omitempty"`
	Subject        string      `json:"subject"` // original subject
	Stream         string      `json:"stream"`  // original stream
	Seq            uint64      `json:"seq"`     // original stream sequence
	MsgID          string      `json:"msg_id,omitempty"`
	Error          string      `json:"error"`
	Attempts       int         `json:"attempts"`
	FirstFailure   time.Time   `json:"first_failure"`
	LastFailure    time.Time   `json:"last_failure"`
	DeadLetteredAt time.Time   `json:"dead_lettered_at"`
	Headers        nats.Header `json:"headers,omitempty"` // original headers, Nats-Msg-Id restored
	Data           []byte      `json:"data,omitempty"`    // original payload
}

func entryFrom(seq uint64, subject string, ts time.Time, h nats.Header, data []byte) DLQEntry {
	e := DLQEntry{
		ID:             seq,
		Stage:          h.Get(HeaderDLQStage),
		Subject:        h.Get(HeaderDLQSubject),
		Stream:         h.Get(HeaderDLQStream),
		MsgID:          h.Get(HeaderDLQMsgID),
		Error:          h.Get(HeaderDLQError),
		DeadLetteredAt: ts,
		Headers:        nats.Header{},
		Data:           data,
	}
	e.Seq, _ = strconv.ParseUint(h.Get(HeaderDLQSeq), 10, 64)
	e.Attempts, _ = strconv.Atoi(h.Get(HeaderDLQAttempts))
	e.FirstFailure, _ = time.Parse(time.RFC3339Nano, h.Get(HeaderDLQFirstFailure))
	e.LastFailure, _ = time.Parse(time.RFC3339Nano, h.Get(HeaderDLQLastFailure))
	if e.Stage == "" {
		e.Stage, _ = stageFromDLQSubject(subject)
	}
	// The original subject's tenant, else the DLQ subject's (which the header chose
	// only when the original subject could not tell); never the header over a subject.
	e.Tenant = subjectTenant(e.Subject)
	if e.Tenant == "" {
		e.Tenant = subjectTenant(subject)
	}
	for k, vs := range h {
		if strings.HasPrefix(k, dlqHeaderPrefix) || strings.HasPrefix(k, natsHeaderPrefix) {
			continue
		}
		e.Headers[k] = slices.Clone(vs)
	}
	if e.MsgID != "" {
		e.Headers.Set(HeaderMsgID, e.MsgID)
	}
	return e
}

// subjectTenant is the valid tenant of an engram subject, "" when it has none.
func subjectTenant(subject string) string {
	if t, err := tenantFromSubject(subject); err == nil && ValidateID("tenant", t) == nil {
		return t
	}
	return ""
}

// DLQFilter selects dead letters. Zero fields select everything.
type DLQFilter struct {
	Stage string    // only this stage
	Since time.Time // only entries dead-lettered at or after Since
	Limit int       // at most this many, oldest first; 0 means no limit
	IDs   []uint64  // only these DLQ sequences
}

func (f DLQFilter) match(e DLQEntry) bool {
	return (f.Stage == "" || e.Stage == f.Stage) && (f.Since.IsZero() || !e.DeadLetteredAt.Before(f.Since))
}

// DLQ reads, replays and purges dead letters. Reads never consume: they use an ordered
// consumer or get messages by sequence.
type DLQ struct {
	js jetstream.JetStream
}

// NewDLQ returns a DLQ on js. The DLQ stream must exist (EnsureTopology).
func NewDLQ(js jetstream.JetStream) *DLQ { return &DLQ{js: js} }

func (d *DLQ) stream(ctx context.Context) (jetstream.Stream, error) {
	s, err := d.js.Stream(ctx, DLQStream)
	if err != nil {
		return nil, fmt.Errorf("opening stream %s: %w", DLQStream, err)
	}
	return s, nil
}

// Get returns the dead letter with DLQ sequence id. A missing one wraps
// jetstream.ErrMsgNotFound.
func (d *DLQ) Get(ctx context.Context, id uint64) (DLQEntry, error) {
	s, err := d.stream(ctx)
	if err != nil {
		return DLQEntry{}, err
	}
	raw, err := s.GetMsg(ctx, id)
	if err != nil {
		return DLQEntry{}, fmt.Errorf("getting dead letter %d: %w", id, err)
	}
	return entryFrom(raw.Sequence, raw.Subject, raw.Time, raw.Header, raw.Data), nil
}

// List returns the dead letters f selects, oldest first.
func (d *DLQ) List(ctx context.Context, f DLQFilter) ([]DLQEntry, error) {
	var out []DLQEntry
	if len(f.IDs) > 0 {
		for _, id := range f.IDs {
			e, err := d.Get(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("listing dead letters: %w", err)
			}
			if f.match(e) {
				out = append(out, e)
			}
			if f.Limit > 0 && len(out) >= f.Limit {
				break
			}
		}
		return out, nil
	}
	filter, err := dlqStageFilter(f.Stage)
	if err != nil {
		return nil, fmt.Errorf("listing dead letters: %w", err)
	}
	err = d.scan(ctx, filter, f.Since, false, func(m jetstream.Msg, meta *jetstream.MsgMetadata) bool {
		out = append(out, entryFrom(meta.Sequence.Stream, m.Subject(), meta.Timestamp, m.Headers(), m.Data()))
		return f.Limit <= 0 || len(out) < f.Limit
	})
	if err != nil {
		return nil, fmt.Errorf("listing dead letters: %w", err)
	}
	return out, nil
}

// scan reads the DLQ stream without consuming it, calling fn for each message on filter
// from since (or the start) until fn returns false or the stream's end.
func (d *DLQ) scan(ctx context.Context, filter string, since time.Time, headersOnly bool,
	fn func(jetstream.Msg, *jetstream.MsgMetadata) bool) error {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		HeadersOnly:       headersOnly,
		InactiveThreshold: 30 * time.Second, // a leaked reader goes away on its own
	}
	if !since.IsZero() {
		cfg.DeliverPolicy = jetstream.DeliverByStartTimePolicy
		cfg.OptStartTime = &since
	}
	cons, err := d.js.OrderedConsumer(ctx, DLQStream, cfg)
	if err != nil {
		return fmt.Errorf("creating reader on %s: %w", DLQStream, err)
	}
	defer func() {
		if info := cons.CachedInfo(); info != nil {
			// Best effort: the inactive threshold cleans up if this fails.
			_ = d.js.DeleteConsumer(context.WithoutCancel(ctx), DLQStream, info.Name)
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return fmt.Errorf("reading %s: %w", DLQStream, err)
		}
		n, done := 0, false
		for m := range batch.Messages() {
			if done {
				continue // drain the batch
			}
			n++
			meta, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("reading %s: %w", DLQStream, err)
			}
			if !fn(m, meta) || meta.NumPending == 0 {
				done = true
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("reading %s: %w", DLQStream, err)
		}
		if done || n == 0 {
			return nil
		}
	}
}

// ReplayOutcome is what happened to one dead letter during a replay.
type ReplayOutcome struct {
	ID        uint64 `json:"id"`
	Subject   string `json:"subject"`
	Stream    string `json:"stream,omitempty"` // stream the republished message landed in
	Seq       uint64 `json:"seq,omitempty"`    // its new sequence
	Duplicate bool   `json:"duplicate,omitempty"`
	Error     string `json:"error,omitempty"`
}

// ReplayResult summarises a replay.
type ReplayResult struct {
	Replayed int             `json:"replayed"`
	Failed   int             `json:"failed"`
	Outcomes []ReplayOutcome `json:"outcomes"`
}

// replayMsgID is the Nats-Msg-Id a replayed message gets: fresh, so the original's
// dedupe entry does not swallow it, yet deterministic, so replaying the same dead letter
// twice (a crash before its deletion) is deduplicated.
func replayMsgID(originalMsgID string, dlqID uint64) string {
	if originalMsgID == "" {
		return "replay:" + strconv.FormatUint(dlqID, 10)
	}
	return originalMsgID + ":replay:" + strconv.FormatUint(dlqID, 10)
}

// Replay republishes the selected dead letters (payload and original headers) to their
// original subjects and deletes each entry once JetStream has acked its republish. An
// empty filter replays everything. The error is non-nil when any entry failed; the
// result says which.
func (d *DLQ) Replay(ctx context.Context, f DLQFilter) (ReplayResult, error) {
	entries, err := d.List(ctx, f)
	if err != nil {
		return ReplayResult{}, fmt.Errorf("replaying dead letters: %w", err)
	}
	res := ReplayResult{Outcomes: make([]ReplayOutcome, 0, len(entries))}
	if len(entries) == 0 {
		return res, nil
	}
	s, err := d.stream(ctx)
	if err != nil {
		return res, fmt.Errorf("replaying dead letters: %w", err)
	}
	var firstErr error
	for _, e := range entries {
		out := d.replayOne(ctx, s, e)
		if out.Error != "" {
			res.Failed++
			if firstErr == nil {
				firstErr = fmt.Errorf("dead letter %d: %s", e.ID, out.Error)
			}
		} else {
			res.Replayed++
		}
		res.Outcomes = append(res.Outcomes, out)
	}
	if firstErr != nil {
		return res, fmt.Errorf("replaying dead letters: %d of %d failed: %w", res.Failed, len(entries), firstErr)
	}
	return res, nil
}

func (d *DLQ) replayOne(ctx context.Context, s jetstream.Stream, e DLQEntry) ReplayOutcome {
	out := ReplayOutcome{ID: e.ID, Subject: e.Subject}
	if e.Subject == "" {
		out.Error = "entry has no " + HeaderDLQSubject + " header"
		return out
	}
	m := nats.NewMsg(e.Subject)
	m.Data = e.Data
	for k, vs := range e.Headers {
		m.Header[k] = slices.Clone(vs)
	}
	m.Header.Set(HeaderMsgID, replayMsgID(e.MsgID, e.ID))
	ack, err := d.js.PublishMsg(ctx, m)
	if err != nil {
		out.Error = fmt.Sprintf("republishing to %s: %v", e.Subject, err)
		return out
	}
	out.Stream, out.Seq, out.Duplicate = ack.Stream, ack.Sequence, ack.Duplicate
	if err := s.DeleteMsg(ctx, e.ID); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		// Republished but still listed: a second replay is deduplicated by the msg id.
		out.Error = fmt.Sprintf("republished as %s/%d but deleting the entry failed: %v", ack.Stream, ack.Sequence, err)
	}
	return out
}

// Purge deletes the dead letters of stage (every stage when empty) that were
// dead-lettered before before (all of them when before is zero), and returns how many.
func (d *DLQ) Purge(ctx context.Context, before time.Time, stage string) (int, error) {
	filter, err := dlqStageFilter(stage)
	if err != nil {
		return 0, fmt.Errorf("purging dead letters: %w", err)
	}
	// Find the first entry to keep; purge-by-sequence then removes everything older on
	// the filter in one server call.
	count, cutoff := 0, uint64(0)
	err = d.scan(ctx, filter, time.Time{}, true, func(_ jetstream.Msg, meta *jetstream.MsgMetadata) bool {
		if !before.IsZero() && !meta.Timestamp.Before(before) {
			cutoff = meta.Sequence.Stream
			return false
		}
		count++
		cutoff = meta.Sequence.Stream + 1
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("purging dead letters: %w", err)
	}
	if count == 0 {
		return 0, nil
	}
	s, err := d.stream(ctx)
	if err != nil {
		return 0, fmt.Errorf("purging dead letters: %w", err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(filter), jetstream.WithPurgeSequence(cutoff)); err != nil {
		return 0, fmt.Errorf("purging dead letters on %s before sequence %d: %w", filter, cutoff, err)
	}
	return count, nil
}
