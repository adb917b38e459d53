package streams_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

func TestPublishTurnDeduplicates(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	ev := turnEvent("acme", "u.1", "turn-1")
	for i, wantDup := range []bool{false, true, true} {
		dup, err := streams.PublishTurn(testCtx(t), js, ev)
		if err != nil || dup != wantDup {
			t.Fatalf("publish %d: duplicate=%v err=%v, want duplicate=%v", i, dup, err, wantDup)
		}
	}
	if n := streamMsgs(t, js, streams.TurnsStream); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
	// Same turn id under another tenant is another turn.
	if dup, err := streams.PublishTurn(testCtx(t), js, turnEvent("other", "u.1", "turn-1")); err != nil || dup {
		t.Fatalf("other tenant: duplicate=%v err=%v", dup, err)
	}
	s, _ := js.Stream(testCtx(t), streams.TurnsStream)
	raw, err := s.GetMsg(testCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Subject != "engram.turns.acme.u_2E1" ||
		raw.Header.Get(streams.HeaderMsgID) != "acme:turn-1" ||
		raw.Header.Get(streams.HeaderTenant) != "acme" ||
		raw.Header.Get(streams.HeaderEvent) != streams.TurnEventType {
		t.Fatalf("stored message: subject %q headers %v", raw.Subject, raw.Header)
	}
}

func TestPublishTurnsBatch(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	evs := make([]streams.TurnEvent, 100)
	for i := range evs {
		// Every tenth event repeats the previous one: a client retry inside a batch.
		id := i
		if i%10 == 9 {
			id = i - 1
		}
		evs[i] = turnEvent("acme", fmt.Sprintf("u%d", i%7), fmt.Sprintf("t%d", id))
	}
	start := time.Now()
	res, err := streams.PublishTurns(testCtx(t), js, evs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100 turns acked in %s", time.Since(start))
	dups := 0
	for i, r := range res {
		if r.Err != nil || r.Stream != streams.TurnsStream || r.MsgID != evs[i].MsgID() {
			t.Fatalf("result %d: %+v", i, r)
		}
		if r.Duplicate {
			dups++
		}
	}
	if dups != 10 {
		t.Errorf("%d duplicates, want 10", dups)
	}
	if n := streamMsgs(t, js, streams.TurnsStream); n != 90 {
		t.Errorf("%d stored, want 90", n)
	}

	// An invalid event fails alone; the others are still published.
	bad := turnEvent("acme", "u1", "")
	res, err = streams.PublishTurns(testCtx(t), js, []streams.TurnEvent{turnEvent("acme", "u1", "ok"), bad})
	if err == nil || res[0].Err != nil || res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "turn_id") {
		t.Fatalf("mixed batch: err=%v results=%+v", err, res)
	}
}

func TestPublishCandidates(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	c := func(id, user string) streams.CandidateEvent {
		return streams.CandidateEvent{Candidate: memory.Candidate{
			ID: id, Tenant: "acme", UserID: user, Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatPreference, Content: "Prefers tea", Source: memory.SourceUser,
		}}
	}
	global := c("c3", "")
	global.Candidate.Scope = memory.ScopeGlobal
	res, err := streams.PublishCandidates(testCtx(t), js, []streams.CandidateEvent{c("c1", "bob"), c("c1", "bob"), c("c2", "bob"), global})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Duplicate || !res[1].Duplicate || res[2].Duplicate || res[3].Duplicate {
		t.Fatalf("results %+v", res)
	}
	if n := streamMsgs(t, js, streams.CandidatesStream); n != 3 {
		t.Fatalf("%d stored, want 3", n)
	}
	s, _ := js.Stream(testCtx(t), streams.CandidatesStream)
	raw, err := s.GetMsg(testCtx(t), res[3].Seq)
	if err != nil || raw.Subject != "engram.candidates.acme._" {
		t.Fatalf("global candidate subject %v, %v", raw, err)
	}
	if dup, err := streams.PublishCandidate(testCtx(t), js, c("c2", "bob")); err != nil || !dup {
		t.Fatalf("single publish: dup=%v err=%v", dup, err)
	}
	got, err := streams.DecodeCandidateEvent(raw.Data)
	if err != nil || got.V != 1 || got.Candidate.ID != "c3" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	good := turnEvent("acme", "u1", "t1")
	good.V = 1
	enc := func(mut func(*streams.TurnEvent)) []byte {
		ev := good
		mut(&ev)
		b, _ := json.Marshal(ev)
		return b
	}
	tests := []struct {
		name, wantErr string
		data          []byte
	}{
		{"not json", "invalid character", []byte("nope")},
		{"no version", "unsupported version 0", enc(func(e *streams.TurnEvent) { e.V = 0 })},
		{"future version", "unsupported version 2", enc(func(e *streams.TurnEvent) { e.V = 2 })},
		{"no tenant", "tenant", enc(func(e *streams.TurnEvent) { e.Tenant = "" })},
		{"no turn id", "turn.turn_id", enc(func(e *streams.TurnEvent) { e.Turn.TurnID = "" })},
		{"no user", "turn.user_id", enc(func(e *streams.TurnEvent) { e.Turn.UserID = "" })},
		{"no session", "turn.session_id", enc(func(e *streams.TurnEvent) { e.Turn.SessionID = "" })},
		{"bad role", "turn.role", enc(func(e *streams.TurnEvent) { e.Turn.Role = "robot" })},
		{"tenant mismatch", "differs", enc(func(e *streams.TurnEvent) { e.Turn.Tenant = "evil" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := streams.DecodeTurnEvent(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
	if _, err := streams.DecodeTurnEvent(enc(func(*streams.TurnEvent) {})); err != nil {
		t.Fatalf("good event rejected: %v", err)
	}
	if _, err := streams.DecodeCandidateEvent([]byte(`{"v":1,"candidate":{"id":"c","tenant":"t"}}`)); err == nil {
		t.Fatal("candidate without scope/type/category/content accepted")
	}
}

// Payloads as engram wrote them before the wire types existed (memory.Turn and
// memory.Candidate marshalled as they were): they must keep decoding, and what is
// published now must be the same bytes.
const (
	v1TurnPayload      = `{"v":1,"tenant":"acme","turn":{"tenant":"acme","turn_id":"t-1","user_id":"u.1","session_id":"s1","role":"tool","content":"ran it","tool":{"name":"shell","status":"failure","error":"exit 1"},"occurred_at":"2025-01-02T03:04:05Z","received_at":"2025-01-02T03:04:06Z","metadata":{"lang":"en"}}}`
	v1CandidatePayload = `{"v":1,"candidate":{"id":"c1","tenant":"acme","user_id":"bob","scope":"user","type":"semantic","category":"preference","content":"Prefers tea","importance":0.5,"confidence":0.8,"source_turn_ids":["t-1"],"valid_from":"2025-01-02T03:04:05Z","source":"user","trusted":true,"extractor":"rules","extractor_version":"3","created_at":"2025-01-02T03:04:07Z"}}`
)

func TestDecodeV1Payloads(t *testing.T) {
	t.Parallel()
	wantTurn := streams.TurnEvent{V: 1, Tenant: "acme", Turn: memory.Turn{
		Tenant: "acme", TurnID: "t-1", UserID: "u.1", SessionID: "s1", Role: memory.RoleTool, Content: "ran it",
		Tool:       &memory.ToolCall{Name: "shell", Status: "failure", Error: "exit 1"},
		OccurredAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), ReceivedAt: time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC),
		Metadata: map[string]any{"lang": "en"},
	}}
	got, err := streams.DecodeTurnEvent([]byte(v1TurnPayload))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantTurn) {
		t.Fatalf("decoded %#v\nwant %#v", got, wantTurn)
	}
	if b, err := json.Marshal(wantTurn); err != nil || string(b) != v1TurnPayload {
		t.Fatalf("encoded %s, %v\nwant    %s", b, err, v1TurnPayload)
	}

	wantCand := streams.CandidateEvent{V: 1, Candidate: memory.Candidate{
		ID: "c1", Tenant: "acme", UserID: "bob", Scope: memory.ScopeUser, Type: memory.Semantic,
		Category: memory.CatPreference, Content: "Prefers tea", Importance: 0.5, Confidence: 0.8,
		SourceTurnIDs: []string{"t-1"}, ValidFrom: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Source: memory.SourceUser, Trusted: true, Extractor: "rules", ExtractorVersion: "3",
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 7, 0, time.UTC),
	}}
	gotC, err := streams.DecodeCandidateEvent([]byte(v1CandidatePayload))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotC, wantCand) {
		t.Fatalf("decoded %#v\nwant %#v", gotC, wantCand)
	}
	if b, err := json.Marshal(wantCand); err != nil || string(b) != v1CandidatePayload {
		t.Fatalf("encoded %s, %v\nwant    %s", b, err, v1CandidatePayload)
	}
}

func TestDecodeVersions(t *testing.T) {
	t.Parallel()
	// No version field: v1.
	noV := strings.Replace(v1TurnPayload, `"v":1,`, "", 1)
	if ev, err := streams.DecodeTurnEvent([]byte(noV)); err != nil || ev.V != 1 {
		t.Fatalf("turn without a version: %+v, %v", ev, err)
	}
	noV = strings.Replace(v1CandidatePayload, `"v":1,`, "", 1)
	if ev, err := streams.DecodeCandidateEvent([]byte(noV)); err != nil || ev.V != 1 {
		t.Fatalf("candidate without a version: %+v, %v", ev, err)
	}
	// A version from the future is permanent: only a newer consumer can read it.
	v2 := strings.Replace(v1TurnPayload, `"v":1,`, `"v":2,`, 1)
	if _, err := streams.DecodeTurnEvent([]byte(v2)); err == nil || !streams.IsPermanent(err) ||
		!strings.Contains(err.Error(), "unsupported version 2") {
		t.Fatalf("turn v2: err %v, want a permanent unsupported-version error", err)
	}
	v2 = strings.Replace(v1CandidatePayload, `"v":1,`, `"v":2,`, 1)
	if _, err := streams.DecodeCandidateEvent([]byte(v2)); err == nil || !streams.IsPermanent(err) ||
		!strings.Contains(err.Error(), "unsupported version 2") {
		t.Fatalf("candidate v2: err %v, want a permanent unsupported-version error", err)
	}
}
