package memory_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// TestVectorSideFiltersBeforeLimit checks that the vector side applies the search's
// filters before its limit: the nearest vectors belong to memories of a type the
// search leaves out, and the side still returns limit memories of the asked type, in
// order of distance.
func TestVectorSideFiltersBeforeLimit(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	const model = "test-model"
	add := func(typ memory.Type, i int) memory.Memory {
		t.Helper()
		n := newMemory("u1", fmt.Sprintf("note %s %d", typ, i),
			memory.Embedding{Model: model, Vector: []float32{1, float32(i) / 100, 0, 0}})
		n.Type = typ
		m, err := e.s.CreateMemory(e.ctx, "acme", n)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for i := range 6 { // nearest to the query
		add(memory.Episodic, i)
	}
	var want []string
	for i := 10; i < 16; i++ {
		want = append(want, add(memory.Semantic, i).ID.String())
	}
	var hits []memory.MemoryHit
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		var err error
		hits, _, err = tx.MemoryCandidates(e.ctx, memory.MemorySearch{Query: "note", UserID: "u1",
			Types: []string{string(memory.Semantic)}, Statuses: []string{"active"}, Now: time.Now(),
			VectorOnly: true, Vector: []float32{1, 0, 0, 0}, Model: model, MaxDistance: 2, Limit: 4})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 4 {
		t.Fatalf("%d hits, want 4 (the limit)", len(hits))
	}
	got := make([]string, 4)
	for _, h := range hits {
		if h.Memory.Type != memory.Semantic {
			t.Fatalf("a %s memory passed the type filter", h.Memory.Type)
		}
		if h.VectorRank < 1 || h.VectorRank > 4 {
			t.Fatalf("vector rank %d", h.VectorRank)
		}
		got[h.VectorRank-1] = h.Memory.ID.String()
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("rank %d: %s, want %s (the %d-th nearest semantic memory)", i+1, got[i], want[i], i+1)
		}
	}
}

// TestKeywordSideCachedStats checks that statistics handed in (OwnerTextStats, as the
// retriever caches them) rank and score exactly as those the query counts itself, and
// that statistics lagging behind the rows (N below a term's document frequency) still
// give every match a positive score.
func TestKeywordSideCachedStats(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	for i, c := range []string{"Walks the dog at dawn", "Feeds the dog twice a day", "Collects vintage maps",
		"Plays chess on Sundays", "The dog sleeps in the hallway"} {
		if _, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u1", fmt.Sprintf("%s (%d)", c, i))); err != nil {
			t.Fatal(err)
		}
	}
	search := func(stats *memory.TextStats) map[string]float64 {
		t.Helper()
		out := map[string]float64{}
		if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
			hits, _, err := tx.MemoryCandidates(e.ctx, memory.MemorySearch{Query: "dog maps", UserID: "u1",
				Statuses: []string{"active"}, Now: time.Now(), KeywordOnly: true, Limit: 10, Stats: stats})
			for _, h := range hits {
				out[h.Memory.Content] = h.Keyword
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var stats memory.TextStats
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		var err error
		stats, err = tx.OwnerTextStats(e.ctx, memory.ScopeUser, "u1", "", []string{"active"}, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if stats.N != 5 || stats.AvgLen <= 0 {
		t.Fatalf("stats %+v, want N 5 and a positive mean length", stats)
	}
	counted, cached := search(nil), search(&stats)
	if len(counted) != 4 {
		t.Fatalf("%d matches, want 4: %v", len(counted), counted)
	}
	for c, s := range counted {
		if d := cached[c] - s; d > 1e-9 || d < -1e-9 {
			t.Errorf("%q: score %v with handed-in statistics, %v counted", c, cached[c], s)
		}
	}
	for c, s := range search(&memory.TextStats{N: 1, AvgLen: stats.AvgLen}) {
		if s <= 0 {
			t.Errorf("%q: score %v with lagging statistics, want > 0", c, s)
		}
	}
}

// TestCopyTurns checks the bulk turn load: the turns are stored in the tenant with
// their search text, a repeated load changes nothing, and the keyword side finds them.
func TestCopyTurns(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	ts := []memory.BulkTurn{
		{TurnID: "b1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: "Booked the ferry to the island", OccurredAt: at},
		{TurnID: "b2", UserID: "u1", SessionID: "s1", Role: memory.RoleAssistant, Content: "Noted the booking", OccurredAt: at.Add(time.Minute)},
	}
	for range 2 {
		if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error { return tx.CopyTurns(e.ctx, ts) }); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		var err error
		n, err = tx.CountTurns(e.ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d turns after loading two twice, want 2", n)
	}
	hits := e.turns("acme", memory.TurnSearch{Query: "ferry", UserID: "u1"})
	if len(hits) != 1 || hits[0].TurnID != "b1" {
		t.Errorf("ferry: %v, want b1", turnIDs(hits))
	}
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		return tx.CopyTurns(e.ctx, []memory.BulkTurn{{TurnID: "b3", UserID: "u1", SessionID: "s1", Role: "robot", Content: "x", OccurredAt: at}})
	}); err == nil {
		t.Error("a turn with an invalid role was loaded")
	}
}
