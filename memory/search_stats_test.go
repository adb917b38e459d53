package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestStoredTextStats checks the stored statistics of an owner (migration 0013): a
// refresh counts what OwnerTextStats and TurnTextStats count, with the frequent terms
// (held by FrequentTermMinDF rows and FrequentTermShare of them, document frequencies
// exact); a counts-only refresh keeps the stored terms; an owner with nothing to count
// has no row; each tenant reads its own rows only; and a bad key is refused.
func TestStoredTextStats(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	const n = 240
	texts := frequentCorpus(n) // "plonk" in all, "grommet" in 9 of 10, "kestrel" in 1 of 100
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	var turns []memory.BulkTurn
	var mems []memory.BulkMemory
	for i, text := range texts {
		turns = append(turns, memory.BulkTurn{TurnID: fmt.Sprintf("t%04d", i), UserID: "u1", SessionID: "s1",
			Role: memory.RoleUser, Content: text, OccurredAt: at.Add(time.Duration(i) * time.Minute)})
		if i < n/2 {
			mems = append(mems, memory.BulkMemory{ID: uuid.New(), UserID: "u1", Type: memory.Semantic, Category: memory.CatFact,
				Content: text, Importance: 0.5, Confidence: 0.9, ValidFrom: at, Source: memory.SourceUser, Extractor: "test",
				Embedding: []float32{1, 0}})
		}
	}
	e.copyRows("acme", turns, mems)
	now := time.Now().UTC()
	memKey := memory.StatsKey{Layer: memory.StatsMemories, Scope: memory.ScopeUser, Subject: "u1"}
	turnKey := memory.StatsKey{Layer: memory.StatsTurns, Scope: memory.ScopeUser, Subject: "u1"}
	terms := func(s memory.TextStats) map[string]float64 {
		out := map[string]float64{}
		for _, f := range s.Frequent {
			out[f.Term] = f.DF
		}
		return out
	}

	for _, tc := range []struct {
		name  string
		key   memory.StatsKey
		count func(tx *memory.Tx) (memory.TextStats, error)
		docs  float64
	}{
		{"memories", memKey, func(tx *memory.Tx) (memory.TextStats, error) {
			return tx.OwnerTextStats(e.ctx, memory.ScopeUser, "u1", "", []string{"active"}, now)
		}, n / 2},
		{"turns", turnKey, func(tx *memory.Tx) (memory.TextStats, error) { return tx.TurnTextStats(e.ctx, "u1") }, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got memory.TextStats
			var stored memory.StoredTextStats
			var ok bool
			if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				var err error
				if want, err = tc.count(tx); err != nil {
					return err
				}
				if got, err = tx.RefreshTextStats(e.ctx, tc.key, now, true); err != nil {
					return err
				}
				stored, ok, err = tx.ReadTextStats(e.ctx, tc.key)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !ok || got.N != tc.docs || got.N != want.N || got.AvgLen != want.AvgLen {
				t.Fatalf("refreshed N %v avgdl %v (stored: %v), counted %v %v, want N %v", got.N, got.AvgLen, ok, want.N, want.AvgLen, tc.docs)
			}
			// plonk is in every row, grommet in 9 of 10; kestrel (1 in 100) is not frequent.
			wantTerms := map[string]float64{"plonk": tc.docs, "grommet": tc.docs * 9 / 10}
			if g := terms(got); len(g) != 2 || g["plonk"] != wantTerms["plonk"] || g["grommet"] != wantTerms["grommet"] {
				t.Fatalf("frequent terms %v, want %v", g, wantTerms)
			}
			if stored.Stats.N != got.N || !slices.Equal(stored.Stats.Frequent, got.Frequent) ||
				!stored.CountedAt.Equal(now.Truncate(time.Microsecond)) || !stored.TermsAt.Equal(stored.CountedAt) {
				t.Fatalf("stored %+v, refreshed %+v at %v", stored, got, now)
			}
		})
	}

	// A counts-only refresh moves N and the time it was counted, not the terms.
	later := now.Add(time.Hour)
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		if _, err := tx.CreateMemory(e.ctx, memory.NewMemory{UserID: "u1", Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatFact, Content: "plonk ptarmigan", Importance: 0.5, Confidence: 0.9,
			Source: memory.SourceUser, Extractor: "test", Actor: "test"}); err != nil {
			return err
		}
		got, err := tx.RefreshTextStats(e.ctx, memKey, later, false)
		if err != nil {
			return err
		}
		st, _, err := tx.ReadTextStats(e.ctx, memKey)
		if err != nil {
			return err
		}
		if got.N != n/2+1 || st.Stats.N != n/2+1 || !st.CountedAt.Equal(later.Truncate(time.Microsecond)) ||
			!st.TermsAt.Equal(now.Truncate(time.Microsecond)) || terms(st.Stats)["plonk"] != n/2 {
			return fmt.Errorf("after a counts-only refresh: %+v (returned %+v)", st, got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Another tenant sees none of it; an owner with nothing to count has no row.
	if err := e.s.InTx(e.ctx, "globex", func(tx *memory.Tx) error {
		if _, ok, err := tx.ReadTextStats(e.ctx, memKey); err != nil || ok {
			return fmt.Errorf("globex reads acme's stored statistics: %v %v", ok, err)
		}
		got, err := tx.RefreshTextStats(e.ctx, memKey, now, true)
		if err != nil || got.N != 0 {
			return fmt.Errorf("globex's u1 has no memories, refreshed %+v, %v", got, err)
		}
		if _, ok, err := tx.ReadTextStats(e.ctx, memKey); err != nil || ok {
			return fmt.Errorf("a row for an owner without rows: %v %v", ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		if _, ok, err := tx.ReadTextStats(e.ctx, memKey); err != nil || !ok {
			return fmt.Errorf("globex's refresh removed acme's row: %v %v", ok, err)
		}
		// Forgetting the user's memories drops their statistics and keeps the turns'.
		if _, _, err := tx.DeleteUserMemories(e.ctx, "u1"); err != nil {
			return err
		}
		if _, ok, err := tx.ReadTextStats(e.ctx, memKey); err != nil || ok {
			return fmt.Errorf("memory statistics after the memories were forgotten: %v %v", ok, err)
		}
		if _, ok, err := tx.ReadTextStats(e.ctx, turnKey); err != nil || !ok {
			return fmt.Errorf("turn statistics after the memories were forgotten: %v %v", ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []memory.StatsKey{
		{Layer: "notes", Scope: memory.ScopeUser, Subject: "u1"},
		{Layer: memory.StatsTurns, Scope: memory.ScopeAgent, Subject: "a1"},
		{Layer: memory.StatsMemories, Scope: memory.ScopeGlobal, Subject: "u1"},
		{Layer: memory.StatsMemories, Scope: memory.ScopeUser},
	} {
		err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
			_, err := tx.RefreshTextStats(e.ctx, bad, now, true)
			return err
		})
		if !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("key %+v: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestFrequentMinDF checks the threshold from which a term is frequent, and that the
// SQL the statistics and the keyword side use agrees with it: a share of a small
// owner, 1 % of a large one, and never above LargeOwnerFrequentMaxDF rows, so that a
// term of a million-memory owner is frequent from 1,000 rows and not 10,000.
func TestFrequentMinDF(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	for _, tc := range []struct {
		n, want float64
	}{
		{0, 0},
		{800, 100},
		{memory.LargeOwnerDocs - 8, (memory.LargeOwnerDocs - 8) * memory.FrequentTermShare},
		{memory.LargeOwnerDocs, memory.LargeOwnerDocs * memory.LargeOwnerFrequentShare},
		{50_000, 500},
		{100_000, memory.LargeOwnerFrequentMaxDF},
		{1_000_000, memory.LargeOwnerFrequentMaxDF},
	} {
		if got := memory.FrequentMinDF(tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("FrequentMinDF(%v) = %v, want %v", tc.n, got, tc.want)
		}
		var got float64
		err := s.Pool().QueryRow(context.Background(), `SELECT `+memory.FrequentMinDFSQL("$1::float8")+`::float8`, tc.n).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("in SQL, of %v: %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestPairsEstimate checks the rows a pair of terms is expected in, between the
// independent estimate and the rarer term's rows, in Go and in SQL alike.
func TestPairsEstimate(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	for _, tc := range []struct {
		name        string
		dfA, dfB, n float64
		want        float64
	}{
		{"no rows", 0, 0, 0, 0},
		{"each in every row", 100, 100, 100, 100},
		{"both in 40 % of 12,000", 4800, 4800, 12_000, math.Sqrt(1920 * 4800)},
		{"in 5,236 and 5,380 of a million", 5236, 5380, 1_000_000, math.Sqrt(5236 * 5380 / 1e6 * 5236)},
		{"a rare and a frequent term", 10, 500_000, 1_000_000, math.Sqrt(5 * 10)},
		{"no owner rows known: N taken as the larger count", 30, 40, 0, 30},
		{"a cached N below a count", 500, 800, 600, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := memory.PairsEstimate(tc.dfA, tc.dfB, tc.n); math.Abs(got-tc.want) > 1e-9*max(1, tc.want) {
				t.Errorf("PairsEstimate(%v, %v, %v) = %v, want %v", tc.dfA, tc.dfB, tc.n, got, tc.want)
			}
			var got float64
			err := s.Pool().QueryRow(context.Background(), `SELECT `+
				memory.PairsEstimateSQL("$1::float8", "$2::float8", "$3::float8")+`::float8`, tc.dfA, tc.dfB, tc.n).Scan(&got)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-9*max(1, tc.want) {
				t.Errorf("in SQL: %v, want %v", got, tc.want)
			}
			// Between the independent estimate and the rarer term's rows, N never
			// below a term's count.
			lo, hi := tc.dfA*tc.dfB/max(tc.n, tc.dfA, tc.dfB, 1), min(tc.dfA, tc.dfB)
			if got < lo-1e-9 || got > hi+1e-9 {
				t.Errorf("%v outside [%v, %v]", got, lo, hi)
			}
		})
	}
}
