package streams

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/engramhq/engram/memory"
)

// The wire types are the JSON contract of the TURNS and CANDIDATES streams. They have
// their own tags so that the domain model (memory.Turn, memory.Candidate), whose JSON is
// also the HTTP response format, can change without changing what is in the streams,
// and messages written by an older build keep decoding. The field names are those of
// envelope v1 as it was first written; add fields only as optional ones (omitempty),
// and bump the version for anything a v1 reader would misread.

// wireTurnEvent is the envelope of a TURNS message. V is a pointer so that a missing
// version (absent = 1) is told apart from an explicit, invalid 0.
type wireTurnEvent struct {
	V      *int     `json:"v"`
	Tenant string   `json:"tenant"`
	Turn   wireTurn `json:"turn"`
}

type wireTurn struct {
	Tenant     string         `json:"tenant,omitempty"`
	TurnID     string         `json:"turn_id"`
	UserID     string         `json:"user_id"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id"`
	TaskID     string         `json:"task_id,omitempty"`
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	Tool       *wireToolCall  `json:"tool,omitempty"`
	OccurredAt time.Time      `json:"occurred_at"`
	ReceivedAt time.Time      `json:"received_at"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Deleted    bool           `json:"deleted,omitempty"`
}

type wireToolCall struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// wireCandidateEvent is the envelope of a CANDIDATES message.
type wireCandidateEvent struct {
	V         *int          `json:"v"`
	Candidate wireCandidate `json:"candidate"`
}

type wireCandidate struct {
	ID        string `json:"id"`
	Tenant    string `json:"tenant"`
	UserID    string `json:"user_id"`
	AgentID   string `json:"agent_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Scope     string `json:"scope"`

	Type       string  `json:"type"`
	Category   string  `json:"category"`
	Key        string  `json:"key,omitempty"`
	Content    string  `json:"content"`
	Importance float64 `json:"importance"`
	Confidence float64 `json:"confidence"`

	SourceTurnIDs   []string `json:"source_turn_ids,omitempty"`
	SourceMemoryIDs []string `json:"source_memory_ids,omitempty"`

	ValidFrom time.Time  `json:"valid_from"`
	ExpireAt  *time.Time `json:"expire_at,omitempty"`

	Source  string `json:"source"`
	Trusted bool   `json:"trusted"`

	Extractor        string         `json:"extractor"`
	ExtractorVersion string         `json:"extractor_version"`
	Model            string         `json:"model,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	CreatedAt        time.Time      `json:"created_at"`
}

func toWireTurn(t memory.Turn) wireTurn {
	w := wireTurn{
		Tenant: t.Tenant, TurnID: t.TurnID, UserID: t.UserID, AgentID: t.AgentID,
		SessionID: t.SessionID, TaskID: t.TaskID, Role: string(t.Role), Content: t.Content,
		OccurredAt: t.OccurredAt, ReceivedAt: t.ReceivedAt, Metadata: t.Metadata, Deleted: t.Deleted,
	}
	if t.Tool != nil {
		w.Tool = &wireToolCall{Name: t.Tool.Name, Status: t.Tool.Status, Error: t.Tool.Error}
	}
	return w
}

func (w wireTurn) turn() memory.Turn {
	t := memory.Turn{
		Tenant: w.Tenant, TurnID: w.TurnID, UserID: w.UserID, AgentID: w.AgentID,
		SessionID: w.SessionID, TaskID: w.TaskID, Role: memory.Role(w.Role), Content: w.Content,
		OccurredAt: w.OccurredAt, ReceivedAt: w.ReceivedAt, Metadata: w.Metadata, Deleted: w.Deleted,
	}
	if w.Tool != nil {
		t.Tool = &memory.ToolCall{Name: w.Tool.Name, Status: w.Tool.Status, Error: w.Tool.Error}
	}
	return t
}

func toWireCandidate(c memory.Candidate) wireCandidate {
	return wireCandidate{
		ID: c.ID, Tenant: c.Tenant, UserID: c.UserID, AgentID: c.AgentID, SessionID: c.SessionID,
		Scope: string(c.Scope), Type: string(c.Type), Category: string(c.Category), Key: c.Key,
		Content: c.Content, Importance: c.Importance, Confidence: c.Confidence,
		SourceTurnIDs: c.SourceTurnIDs, SourceMemoryIDs: c.SourceMemoryIDs,
		ValidFrom: c.ValidFrom, ExpireAt: c.ExpireAt, Source: string(c.Source), Trusted: c.Trusted,
		Extractor: c.Extractor, ExtractorVersion: c.ExtractorVersion, Model: c.Model,
		Metadata: c.Metadata, CreatedAt: c.CreatedAt,
	}
}

func (w wireCandidate) candidate() memory.Candidate {
	return memory.Candidate{
		ID: w.ID, Tenant: w.Tenant, UserID: w.UserID, AgentID: w.AgentID, SessionID: w.SessionID,
		Scope: memory.Scope(w.Scope), Type: memory.Type(w.Type), Category: memory.Category(w.Category),
		Key: w.Key, Content: w.Content, Importance: w.Importance, Confidence: w.Confidence,
		SourceTurnIDs: w.SourceTurnIDs, SourceMemoryIDs: w.SourceMemoryIDs,
		ValidFrom: w.ValidFrom, ExpireAt: w.ExpireAt, Source: memory.Source(w.Source), Trusted: w.Trusted,
		Extractor: w.Extractor, ExtractorVersion: w.ExtractorVersion, Model: w.Model,
		Metadata: w.Metadata, CreatedAt: w.CreatedAt,
	}
}

func (ev TurnEvent) wire() wireTurnEvent {
	v := ev.V
	return wireTurnEvent{V: &v, Tenant: ev.Tenant, Turn: toWireTurn(ev.Turn)}
}

func (w wireTurnEvent) event() TurnEvent {
	return TurnEvent{V: versionOr1(w.V), Tenant: w.Tenant, Turn: w.Turn.turn()}
}

func (ev CandidateEvent) wire() wireCandidateEvent {
	v := ev.V
	return wireCandidateEvent{V: &v, Candidate: toWireCandidate(ev.Candidate)}
}

func (w wireCandidateEvent) event() CandidateEvent {
	return CandidateEvent{V: versionOr1(w.V), Candidate: w.Candidate.candidate()}
}

// versionOr1 is the envelope version of a decoded message: payloads without one are v1.
func versionOr1(v *int) int {
	if v == nil {
		return 1
	}
	return *v
}

// MarshalJSON encodes the event in its wire format, not memory.Turn's JSON. V is
// written as it is (0 stays 0); publishing fills in the current version first.
func (ev TurnEvent) MarshalJSON() ([]byte, error) { return json.Marshal(ev.wire()) }

// UnmarshalJSON decodes the wire format; a missing version is 1. It does not
// validate: DecodeTurnEvent does.
func (ev *TurnEvent) UnmarshalJSON(data []byte) error {
	var w wireTurnEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*ev = w.event()
	return nil
}

// MarshalJSON encodes the event in its wire format, not memory.Candidate's JSON.
func (ev CandidateEvent) MarshalJSON() ([]byte, error) { return json.Marshal(ev.wire()) }

// UnmarshalJSON decodes the wire format; a missing version is 1. It does not
// validate: DecodeCandidateEvent does.
func (ev *CandidateEvent) UnmarshalJSON(data []byte) error {
	var w wireCandidateEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*ev = w.event()
	return nil
}

// checkVersion refuses an envelope version this build does not know. Retrying cannot
// help (only a newer consumer can read it), so the error is permanent.
func checkVersion(kind string, got, want int) error {
	if got != want {
		return Permanent(fmt.Errorf("%s event: unsupported version %d (want %d)", kind, got, want))
	}
	return nil
}
