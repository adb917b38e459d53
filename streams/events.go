package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Header names engram sets on every event.
const (
	HeaderMsgID  = jetstream.MsgIDHeader // "Nats-Msg-Id": the dedupe key
	HeaderTenant = "Engram-Tenant"       // the raw (unencoded) tenant
	HeaderEvent  = "Engram-Event"        // event kind and version, e.g. "turn.v1"
)

// Envelope versions and the matching Engram-Event header values.
const (
	TurnEventVersion      = 1
	CandidateEventVersion = 1
	TurnEventType         = "turn.v1"
	CandidateEventType    = "candidate.v1"
)

// defaultPublishTimeout bounds a batch publish whose context has no deadline, so a lost
// ack cannot hang an HTTP request forever.
const defaultPublishTimeout = 10 * time.Second

// TurnEvent is the envelope published on TURNS. Its JSON is the wire format of
// wire.go (wireTurnEvent), not memory.Turn's.
type TurnEvent struct {
	V      int
	Tenant string
	Turn   memory.Turn
}

// CandidateEvent is the envelope published on CANDIDATES. The tenant is the
// candidate's. Its JSON is the wire format of wire.go (wireCandidateEvent).
type CandidateEvent struct {
	V         int
	Candidate memory.Candidate
}

// turnMsgID is the Nats-Msg-Id of a turn: tenant + ":" + turn id.
func turnMsgID(tenant, turnID string) string { return tenant + ":" + turnID }

// candidateMsgID is the Nats-Msg-Id of a candidate: tenant + ":" + candidate id.
func candidateMsgID(tenant, candidateID string) string { return tenant + ":" + candidateID }

// Validate checks that the event has a known version and everything needed to route
// and deduplicate it.
func (ev TurnEvent) Validate() error {
	if ev.V != TurnEventVersion {
		return fmt.Errorf("turn event: unsupported version %d (want %d)", ev.V, TurnEventVersion)
	}
	t := ev.Turn
	for _, f := range []struct{ name, v string }{
		{"tenant", ev.Tenant}, {"turn.turn_id", t.TurnID}, {"turn.user_id", t.UserID}, {"turn.session_id", t.SessionID},
	} {
		if err := ValidateID(f.name, f.v); err != nil {
			return fmt.Errorf("turn event: %w", err)
		}
	}
	if t.Tenant != "" && t.Tenant != ev.Tenant {
		return fmt.Errorf("turn event: turn.tenant %q differs from tenant %q", t.Tenant, ev.Tenant)
	}
	if !t.Role.Valid() {
		return fmt.Errorf("turn event: turn.role: unknown role %q", t.Role)
	}
	// The store's rules, the same ingest applies: a turn published straight onto NATS
	// that PostgreSQL cannot hold is poison (dead-lettered at once, naming the field).
	if fe := memory.CheckTurn("turn", t); fe != nil {
		return fmt.Errorf("turn event: %w", fe)
	}
	// HTTP ingest's floor for times, so that NATS is no way around it. Zero is "not
	// given": DecodeTurnEvent and the consumer default it. The ceiling (how far ahead
	// of now) is the edge's alone: it is configurable there (ingest.Limits), and a
	// consumer's clock and settings may differ from the publisher's, so checking it
	// again here would dead-letter turns the edge accepted.
	for _, f := range []namedTime{{"turn.received_at", t.ReceivedAt}, {"turn.occurred_at", t.OccurredAt}} { // received_at first: occurred_at may be its copy
		if f.at.IsZero() {
			continue
		}
		if fe := memory.CheckSince1970(f.name, f.at); fe != nil {
			return fmt.Errorf("turn event: %w", fe)
		}
	}
	return nil
}

// namedTime is a time of an event with its field's path, for the checks above.
type namedTime struct {
	name string
	at   time.Time
}

// DefaultTurnTimes fills in the times a turn's publisher left out, as ingest does for
// HTTP turns: received_at becomes stored, when the stream stored the message (the same
// on every redelivery, unlike the clock; now if unknown), and occurred_at received_at.
func DefaultTurnTimes(t *memory.Turn, stored time.Time) {
	if t.ReceivedAt.IsZero() {
		if stored.IsZero() {
			stored = time.Now()
		}
		t.ReceivedAt = stored.UTC()
	}
	if t.OccurredAt.IsZero() {
		t.OccurredAt = t.ReceivedAt
	}
}

// Subject is the subject the event is published on.
func (ev TurnEvent) Subject() (string, error) { return TurnSubject(ev.Tenant, ev.Turn.UserID) }

// MsgID is the event's Nats-Msg-Id.
func (ev TurnEvent) MsgID() string { return turnMsgID(ev.Tenant, ev.Turn.TurnID) }

// Validate checks that the event has a known version and a routable, well-formed
// candidate.
func (ev CandidateEvent) Validate() error {
	if ev.V != CandidateEventVersion {
		return fmt.Errorf("candidate event: unsupported version %d (want %d)", ev.V, CandidateEventVersion)
	}
	c := ev.Candidate
	if err := ValidateID("candidate.id", c.ID); err != nil {
		return fmt.Errorf("candidate event: %w", err)
	}
	if err := ValidateID("candidate.tenant", c.Tenant); err != nil {
		return fmt.Errorf("candidate event: %w", err)
	}
	if c.UserID != "" {
		if err := ValidateID("candidate.user_id", c.UserID); err != nil {
			return fmt.Errorf("candidate event: %w", err)
		}
	}
	switch {
	case !c.Scope.Valid():
		return fmt.Errorf("candidate event: candidate.scope: unknown scope %q", c.Scope)
	case !c.Type.Valid():
		return fmt.Errorf("candidate event: candidate.type: unknown type %q", c.Type)
	case !c.Category.Valid():
		return fmt.Errorf("candidate event: candidate.category: unknown category %q", c.Category)
	case c.Content == "":
		return errors.New("candidate event: candidate.content: must not be empty")
	}
	if fe := memory.CheckText("candidate.content", c.Content, 0); fe != nil {
		return fmt.Errorf("candidate event: %w", fe)
	}
	if fe := memory.CheckText("candidate.key", c.Key, 0); fe != nil {
		return fmt.Errorf("candidate event: %w", fe)
	}
	if fe := memory.CheckMetadata("candidate.metadata", c.Metadata, 0); fe != nil {
		return fmt.Errorf("candidate event: %w", fe)
	}
	// A time RFC 3339 cannot write fails every encoding of the event and, once stored,
	// of the memory's answers.
	times := []namedTime{{"candidate.valid_from", c.ValidFrom}, {"candidate.created_at", c.CreatedAt}}
	if c.ExpireAt != nil {
		times = append(times, namedTime{"candidate.expire_at", *c.ExpireAt})
	}
	for _, f := range times {
		if fe := memory.CheckTime(f.name, f.at); fe != nil {
			return fmt.Errorf("candidate event: %w", fe)
		}
	}
	return nil
}

// Subject is the subject the event is published on: engram.candidates.<tenant>.<user>;
// candidates without a user (global or agent scope) use "_" as the user token, which no
// encoded id can equal. A consumer compares it with the subject a message arrived on:
// erasure deletes by subject, so a body routed elsewhere would outlive its user's
// erasure.
func (ev CandidateEvent) Subject() (string, error) {
	c := ev.Candidate
	if c.UserID == "" {
		tok, err := idToken("candidate.tenant", c.Tenant)
		if err != nil {
			return "", err
		}
		return CandidateSubjectPrefix + tok + "." + noUserToken, nil
	}
	return CandidateSubject(c.Tenant, c.UserID)
}

// msgID is the event's Nats-Msg-Id.
func (ev CandidateEvent) msgID() string { return candidateMsgID(ev.Candidate.Tenant, ev.Candidate.ID) }

// DecodeTurnEvent parses and validates a TURNS payload. An error means the payload is
// poison: retrying cannot fix it. A payload without a version is v1; an unknown
// version is a Permanent error.
func DecodeTurnEvent(data []byte) (TurnEvent, error) {
	var w wireTurnEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return TurnEvent{}, fmt.Errorf("decoding turn event: %w", err)
	}
	ev := w.event()
	if err := checkVersion("turn", ev.V, TurnEventVersion); err != nil {
		return TurnEvent{}, fmt.Errorf("decoding turn event: %w", err)
	}
	if ev.Turn.OccurredAt.IsZero() {
		// As ingest defaults occurred_at to when it received the turn; a turn without
		// either gets the message's time from the consumer (DefaultTurnTimes).
		ev.Turn.OccurredAt = ev.Turn.ReceivedAt
	}
	if err := ev.Validate(); err != nil {
		return TurnEvent{}, fmt.Errorf("decoding turn event: %w", err)
	}
	return ev, nil
}

// DecodeCandidateEvent parses and validates a CANDIDATES payload. An error means the
// payload is poison. A payload without a version is v1; an unknown version is a
// Permanent error.
func DecodeCandidateEvent(data []byte) (CandidateEvent, error) {
	var w wireCandidateEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return CandidateEvent{}, fmt.Errorf("decoding candidate event: %w", err)
	}
	ev := w.event()
	if err := checkVersion("candidate", ev.V, CandidateEventVersion); err != nil {
		return CandidateEvent{}, fmt.Errorf("decoding candidate event: %w", err)
	}
	if err := ev.Validate(); err != nil {
		return CandidateEvent{}, fmt.Errorf("decoding candidate event: %w", err)
	}
	return ev, nil
}

// ValidateTurnPayload is a WorkerConfig.Validate for TURNS consumers.
func ValidateTurnPayload(data []byte) error {
	_, err := DecodeTurnEvent(data)
	return err
}

// ValidateCandidatePayload is a WorkerConfig.Validate for CANDIDATES consumers.
func ValidateCandidatePayload(data []byte) error {
	_, err := DecodeCandidateEvent(data)
	return err
}

// Publisher is the part of jetstream.JetStream the publish helpers use.
type Publisher interface {
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
	PublishMsgAsync(msg *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// PublishResult is the outcome of one event of a batch publish.
type PublishResult struct {
	MsgID     string `json:"msg_id"`
	Stream    string `json:"stream,omitempty"`
	Seq       uint64 `json:"seq,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Err       error  `json:"-"`
}

func newMsg(subject, tenant, msgID, eventType string, data []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set(HeaderMsgID, msgID)
	m.Header.Set(HeaderTenant, tenant)
	m.Header.Set(HeaderEvent, eventType)
	return m
}

func (ev TurnEvent) normalized() TurnEvent {
	if ev.V == 0 {
		ev.V = TurnEventVersion
	}
	if ev.Turn.Tenant == "" {
		ev.Turn.Tenant = ev.Tenant
	}
	return ev
}

func (ev CandidateEvent) normalized() CandidateEvent {
	if ev.V == 0 {
		ev.V = CandidateEventVersion
	}
	return ev
}

// message builds the NATS message for a turn, its payload in the wire format; V 0 is
// taken as the current version.
func (ev TurnEvent) message() (*nats.Msg, error) {
	ev = ev.normalized()
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	subj, err := ev.Subject()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(ev.wire())
	if err != nil {
		return nil, fmt.Errorf("encoding turn event: %w", err)
	}
	return newMsg(subj, ev.Tenant, ev.MsgID(), TurnEventType, data), nil
}

func (ev CandidateEvent) message() (*nats.Msg, error) {
	ev = ev.normalized()
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	subj, err := ev.Subject()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(ev.wire())
	if err != nil {
		return nil, fmt.Errorf("encoding candidate event: %w", err)
	}
	return newMsg(subj, ev.Candidate.Tenant, ev.msgID(), CandidateEventType, data), nil
}

// PublishTurn publishes one turn and waits for JetStream's ack. duplicate reports that
// the stream already held this turn (same tenant and turn id within the duplicate
// window); that is success, not an error.
func PublishTurn(ctx context.Context, p Publisher, ev TurnEvent) (duplicate bool, err error) {
	m, err := ev.message()
	if err != nil {
		return false, fmt.Errorf("publishing turn %s: %w", ev.MsgID(), err)
	}
	ack, err := p.PublishMsg(ctx, m)
	if err != nil {
		return false, fmt.Errorf("publishing turn %s: %w", ev.MsgID(), err)
	}
	return ack.Duplicate, nil
}

// PublishCandidate publishes one candidate and waits for JetStream's ack.
func PublishCandidate(ctx context.Context, p Publisher, ev CandidateEvent) (duplicate bool, err error) {
	m, err := ev.message()
	if err != nil {
		return false, fmt.Errorf("publishing candidate %s: %w", ev.msgID(), err)
	}
	ack, err := p.PublishMsg(ctx, m)
	if err != nil {
		return false, fmt.Errorf("publishing candidate %s: %w", ev.msgID(), err)
	}
	return ack.Duplicate, nil
}

// PublishTurns publishes a batch asynchronously and returns once JetStream has acked (or
// refused) every turn, so a caller can answer only for what is durable. Results are in
// input order; the error is non-nil when any turn failed (its result carries the cause)
// or ctx ended first. Without a deadline on ctx, a 10 s bound applies.
func PublishTurns(ctx context.Context, p Publisher, evs []TurnEvent) ([]PublishResult, error) {
	msgs := make([]*nats.Msg, len(evs))
	res := make([]PublishResult, len(evs))
	for i, ev := range evs {
		res[i].MsgID = ev.MsgID()
		msgs[i], res[i].Err = ev.message()
	}
	return publishBatch(ctx, p, "turn", msgs, res)
}

// PublishCandidates is PublishTurns for candidates.
func PublishCandidates(ctx context.Context, p Publisher, evs []CandidateEvent) ([]PublishResult, error) {
	msgs := make([]*nats.Msg, len(evs))
	res := make([]PublishResult, len(evs))
	for i, ev := range evs {
		res[i].MsgID = ev.msgID()
		msgs[i], res[i].Err = ev.message()
	}
	return publishBatch(ctx, p, "candidate", msgs, res)
}

func publishBatch(ctx context.Context, p Publisher, kind string, msgs []*nats.Msg, res []PublishResult) ([]PublishResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultPublishTimeout)
		defer cancel()
	}
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		if m == nil || ctx.Err() != nil {
			continue
		}
		// The msg id travels in the header, so no publish options are needed.
		futures[i], res[i].Err = p.PublishMsgAsync(m)
	}
	for i, f := range futures {
		if f == nil {
			if res[i].Err == nil {
				res[i].Err = ctx.Err()
			}
			continue
		}
		select {
		case ack := <-f.Ok():
			res[i].Stream, res[i].Seq, res[i].Duplicate = ack.Stream, ack.Sequence, ack.Duplicate
		case err := <-f.Err():
			res[i].Err = err
		case <-ctx.Done():
			res[i].Err = ctx.Err()
		}
	}
	failed, first := 0, -1
	for i := range res {
		if res[i].Err != nil {
			res[i].Err = fmt.Errorf("publishing %s %s: %w", kind, res[i].MsgID, res[i].Err)
			failed++
			if first < 0 {
				first = i
			}
		}
	}
	if failed > 0 {
		return res, fmt.Errorf("publishing %ss: %d of %d failed: %w", kind, failed, len(res), res[first].Err)
	}
	return res, nil
}
