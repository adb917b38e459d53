package httpapi_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// conflictEnv is the edge over ingest on real JetStream and, with a store, on
// PostgreSQL for the turns already stored.
func conflictEnv(t *testing.T, store *memory.Store) *env {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenantA, SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ingest.Config{Publisher: js, Logger: quietLogger()}
	if store != nil {
		cfg.Stored = store
	}
	svc, err := ingest.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: quietLogger()}))
	t.Cleanup(ts.Close)
	return &env{nats: srv, js: js, url: ts.URL + "/v1/turns", tokens: map[string]string{tenantA: tok}}
}

// TestPostTurnsReusedIDWithin: within the stream's duplicate window JetStream is the
// arbiter; a different content for a published turn id is a 409 naming the turn.
func TestPostTurnsReusedIDWithin(t *testing.T) {
	t.Parallel()
	e := conflictEnv(t, nil)
	tests := []struct {
		name, body string
		status     int
		field      string // of the request's error; "" for none
		statuses   []string
	}{
		{"first", turnJSON("u1", "t-17", "I prefer tea"), 202, "", []string{ingest.StatusAccepted}},
		{"same content", turnJSON("u1", "t-17", "I prefer tea"), 202, "", []string{ingest.StatusDuplicate}},
		{"different content", turnJSON("u1", "t-17", "I prefer coffee"), 409, "turn_id", []string{ingest.StatusRejected}},
		{"different content in a batch", batchJSON(turnJSON("u1", "t-17", "I prefer coffee")), 409, "turns[0].turn_id", []string{ingest.StatusRejected}},
		{"batch with a new turn and a conflict", batchJSON(turnJSON("u1", "t-18", "new"), turnJSON("u1", "t-17", "other")), 202, "",
			[]string{ingest.StatusAccepted, ingest.StatusRejected}},
		{"one id twice in a batch, two contents", batchJSON(turnJSON("u1", "t-19", "a"), turnJSON("u1", "t-19", "b")), 202, "",
			[]string{ingest.StatusAccepted, ingest.StatusRejected}},
		{"still the same content", turnJSON("u1", "t-17", "I prefer tea"), 202, "", []string{ingest.StatusDuplicate}},
	}
	for _, tc := range tests {
		r := e.post(t, tenantA, tc.body)
		if r.status != tc.status {
			t.Fatalf("%s: %d %+v, want %d", tc.name, r.status, r.body, tc.status)
		}
		if tc.field != "" && (r.body.Error == nil || r.body.Error.Field != tc.field || r.body.Error.Code != ingest.CodeConflict ||
			!strings.Contains(r.body.Error.Message, `"t-17" already stored with different content`)) {
			t.Fatalf("%s: error %+v, want conflict at %s", tc.name, r.body.Error, tc.field)
		}
		for i, want := range tc.statuses {
			got := r.body.Results[i]
			if got.Status != want {
				t.Fatalf("%s: turn %d %s, want %s", tc.name, i, got.Status, want)
			}
			if want == ingest.StatusRejected && (got.Error == nil || got.Error.Code != ingest.CodeConflict || !strings.HasSuffix(got.Error.Field, "turn_id")) {
				t.Fatalf("%s: turn %d error %+v", tc.name, i, got.Error)
			}
		}
	}
	// The stream holds each id once, with its first content.
	want := map[string]string{"t-17": "I prefer tea", "t-18": "new", "t-19": "a"}
	evs := stored(t, e.js, tenantA, "u1")
	if len(evs) != len(want) {
		t.Fatalf("%d turns in TURNS, want %d", len(evs), len(want))
	}
	for _, ev := range evs {
		if want[ev.Turn.TurnID] != ev.Turn.Content {
			t.Errorf("%s holds %q, want %q", ev.Turn.TurnID, ev.Turn.Content, want[ev.Turn.TurnID])
		}
	}
}

// TestPostTurnsReusedIDConcurrently: requests in flight at once with one turn id and
// different contents: exactly one content wins, the others are 409, and resenders of
// the winning content get duplicates.
func TestPostTurnsReusedIDConcurrently(t *testing.T) {
	t.Parallel()
	e := conflictEnv(t, nil)
	const senders = 8
	type result struct {
		content string
		status  int
		turn    string
	}
	results := make([]result, senders*2)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range results {
		content := "content " + string(rune('A'+i%senders)) // each content sent twice
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.post(t, tenantA, turnJSON("u-race", "t-race", content))
			results[i] = result{content: content, status: r.status, turn: r.body.Results[0].Status}
		}()
	}
	close(start)
	wg.Wait()
	evs := stored(t, e.js, tenantA, "u-race")
	if len(evs) != 1 {
		t.Fatalf("%d messages for one turn id", len(evs))
	}
	winner := evs[0].Turn.Content
	accepted := 0
	for _, r := range results {
		switch {
		case r.turn == ingest.StatusAccepted:
			accepted++
			if r.content != winner || r.status != 202 {
				t.Errorf("accepted %q (%d), but the stream holds %q", r.content, r.status, winner)
			}
		case r.content == winner:
			if r.status != 202 || r.turn != ingest.StatusDuplicate {
				t.Errorf("the winning content resent: %d %s, want 202 duplicate", r.status, r.turn)
			}
		default:
			if r.status != 409 {
				t.Errorf("%q after %q won: %d %s, want 409", r.content, winner, r.status, r.turn)
			}
		}
	}
	if accepted != 1 {
		t.Fatalf("%d requests accepted, want 1", accepted)
	}
}

// TestPostTurnsReusedIDStored: after the duplicate window the stored row is the
// truth: a turn stored (and no longer deduplicated by the stream) is a duplicate
// with its content and a 409 with another, and neither is published again.
func TestPostTurnsReusedIDStored(t *testing.T) {
	t.Parallel()
	store := pgtest.Store(t)
	e := conflictEnv(t, store)
	// Stored by the extractor long ago: in PostgreSQL, not in this stream's window.
	if _, err := store.InsertTurn(testCtx(t), tenantA, memory.Turn{TurnID: "t-old", UserID: "u-old", SessionID: "s1",
		Role: memory.RoleUser, Content: "I prefer tea", OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	r := e.post(t, tenantA, turnJSON("u-old", "t-old", "I prefer tea"))
	if r.status != 202 || r.body.Results[0].Status != ingest.StatusDuplicate {
		t.Fatalf("same content: %d %+v", r.status, r.body)
	}
	r = e.post(t, tenantA, batchJSON(turnJSON("u-old", "t-old", "I prefer coffee")))
	if r.status != 409 || r.body.Error == nil || r.body.Error.Field != "turns[0].turn_id" ||
		r.body.Error.Message != `turns[0].turn_id: "t-old" already stored with different content` {
		t.Fatalf("different content: %d %+v", r.status, r.body.Error)
	}
	if evs := stored(t, e.js, tenantA, "u-old"); len(evs) != 0 {
		t.Fatalf("%d turns republished", len(evs))
	}
}

// TestInsertTurnConflict: the store keeps the first content of a turn id; a second
// with other content is ErrTurnConflict (and ErrInvalid, so a worker dead-letters it).
func TestInsertTurnConflict(t *testing.T) {
	t.Parallel()
	store := pgtest.Store(t)
	ctx := testCtx(t)
	turn := memory.Turn{TurnID: "t1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: "first",
		OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for i, tc := range []struct {
		content  string
		inserted bool
		err      error
	}{{"first", true, nil}, {"first", false, nil}, {"second", false, memory.ErrTurnConflict}} {
		turn.Content = tc.content
		ok, err := store.InsertTurn(ctx, tenantA, turn)
		if ok != tc.inserted || !errors.Is(err, tc.err) || (tc.err != nil && !errors.Is(err, memory.ErrInvalid)) {
			t.Fatalf("insert %d (%q): %v, %v", i, tc.content, ok, err)
		}
	}
	h, err := store.TurnContentHashes(ctx, tenantA, []string{"t1", "t-missing"})
	if err != nil || len(h) != 1 || string(h["t1"]) != string(memory.ContentHash("first")) {
		t.Fatalf("hashes %v, %v", h, err)
	}
}
