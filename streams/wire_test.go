package streams

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// fullTurn and fullCandidate set every field, so a round trip that drops one fails.
func fullTurn() memory.Turn {
	return memory.Turn{
		Tenant: "acme", TurnID: "turn-1", UserID: "u.1", AgentID: "agent-7", SessionID: "s1", TaskID: "task-3",
		Role: memory.RoleTool, Content: "pip install failed: 网络错误",
		Tool:       &memory.ToolCall{Name: "shell", Status: "failure", Error: "exit 1"},
		OccurredAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
		ReceivedAt: time.Date(2025, 1, 2, 3, 4, 6, 987654321, time.UTC),
		Metadata: map[string]any{"channel": "web", "n": 3.5, "ok": true, "tags": []any{"a", "b"},
			"nested": map[string]any{"x": "y"}, "none": nil},
		Deleted: true,
	}
}

func fullCandidate() memory.Candidate {
	exp := time.Date(2026, 3, 1, 0, 0, 0, 5, time.UTC)
	return memory.Candidate{
		ID: "cand-1", Tenant: "acme", UserID: "bob", AgentID: "agent-7", SessionID: "s1", Scope: memory.ScopeSession,
		Type: memory.Procedural, Category: memory.CatSkill, Key: "deploy.retry", Content: "Retry the deploy with more memory",
		Importance: 0.75, Confidence: 0.625,
		SourceTurnIDs: []string{"turn-1", "turn-2"}, SourceMemoryIDs: []string{"0190a0b1-0000-7000-8000-000000000001"},
		ValidFrom: time.Date(2025, 1, 2, 3, 4, 5, 1, time.UTC), ExpireAt: &exp,
		Source: memory.SourceAssistant, Trusted: true,
		Extractor: "llm", ExtractorVersion: "4", Model: "gpt-x",
		Metadata:  map[string]any{"why": "tool result", "score": 0.5},
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 9, 0, time.UTC),
	}
}

// requireAllSet fails when a field of v is zero: a new domain field must get a wire
// field (or a deliberate decision) before this test passes again.
func requireAllSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Errorf("%s.%s is not set in the fixture", rv.Type().Name(), rv.Type().Field(i).Name)
		}
	}
}

func TestWireTurnRoundTrip(t *testing.T) {
	t.Parallel()
	ev := TurnEvent{V: TurnEventVersion, Tenant: "acme", Turn: fullTurn()}
	requireAllSet(t, ev.Turn)
	requireAllSet(t, *ev.Turn.Tool)

	// memory → wire → bytes → wire → memory.
	b, err := json.Marshal(ev.wire())
	if err != nil {
		t.Fatal(err)
	}
	var w wireTurnEvent
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.event(); !reflect.DeepEqual(got, ev) {
		t.Fatalf("round trip changed the event:\n got %#v\nwant %#v", got, ev)
	}
	// The published payload and the event's own JSON are the same bytes, and decode
	// to the same event.
	m, err := ev.message()
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := json.Marshal(ev); string(m.Data) != string(b) || string(own) != string(b) {
		t.Fatalf("payload %s\nwire    %s\nown     %s", m.Data, b, own)
	}
	got, err := DecodeTurnEvent(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ev) {
		t.Fatalf("decoded %#v\nwant %#v", got, ev)
	}
	// A turn without a tool call keeps a nil Tool.
	ev.Turn.Tool = nil
	if got := ev.wire().Turn.turn(); got.Tool != nil {
		t.Fatalf("tool %+v from a turn without one", got.Tool)
	}
}

func TestWireCandidateRoundTrip(t *testing.T) {
	t.Parallel()
	ev := CandidateEvent{V: CandidateEventVersion, Candidate: fullCandidate()}
	requireAllSet(t, ev.Candidate)

	b, err := json.Marshal(ev.wire())
	if err != nil {
		t.Fatal(err)
	}
	var w wireCandidateEvent
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.event(); !reflect.DeepEqual(got, ev) {
		t.Fatalf("round trip changed the event:\n got %#v\nwant %#v", got, ev)
	}
	m, err := ev.message()
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != string(b) {
		t.Fatalf("payload %s\nwire    %s", m.Data, b)
	}
	got, err := DecodeCandidateEvent(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ev) {
		t.Fatalf("decoded %#v\nwant %#v", got, ev)
	}
}
