package memory_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestCoveredOwnerVectors checks the exact per-owner scans against a brute-force
// ranking, for a model small enough for memory_embeddings_owner_covered (migration
// 0014) and one too large for it: the search's vector side, the resolver's nearest
// read and the bare exact scan give the same neighbours either way, and the plans of
// the small model's scans read the covering index, those of the large one do not.
func TestCoveredOwnerVectors(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	rng := rand.New(rand.NewPCG(3, 5))
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		model   string
		dims    int
		covered bool
	}{{"small-300", 300, true}, {"large-700", 700, false}} {
		t.Run(tc.model, func(t *testing.T) {
			vec := func() []float32 {
				v := make([]float32, tc.dims)
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
				return v
			}
			user := "u-" + tc.model
			var ms []memory.BulkMemory
			for i := range 60 {
				ms = append(ms, memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatFact,
					Content: fmt.Sprintf("fact %d", i), Importance: 0.5, Confidence: 0.9, ValidFrom: at,
					Source: memory.SourceUser, Extractor: "test", Embedding: vec()})
			}
			// Another owner's vectors of the same model are never among the answers (and
			// make the table large enough for the planner to prefer an index).
			for i := range 3000 {
				ms = append(ms, memory.BulkMemory{ID: uuid.New(), UserID: "other", Type: memory.Semantic, Category: memory.CatFact,
					Content: fmt.Sprintf("other %d", i), Importance: 0.5, Confidence: 0.9, ValidFrom: at,
					Source: memory.SourceUser, Extractor: "test", Embedding: vec()})
			}
			if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				return tx.CopyMemories(e.ctx, ms, memory.BulkOptions{Model: tc.model, Dims: tc.dims})
			}); err != nil {
				t.Fatal(err)
			}
			// A steady state: statistics, and a visibility map that lets an index-only
			// scan skip the heap.
			owner, err := pgx.Connect(e.ctx, pgtest.OwnerURLOf(t, e.s.Pool().Config().ConnString()))
			if err != nil {
				t.Fatal(err)
			}
			defer owner.Close(e.ctx)
			if _, err := owner.Exec(e.ctx, "VACUUM (ANALYZE) memory_embeddings, memories"); err != nil {
				t.Fatal(err)
			}
			q := vec()
			type ranked struct {
				id   uuid.UUID
				dist float64
			}
			var want []ranked
			for _, m := range ms[:60] {
				want = append(want, ranked{m.ID, 1 - float64(llm.Cosine(q, m.Embedding))})
			}
			slices.SortFunc(want, func(a, b ranked) int { return cmp.Compare(a.dist, b.dist) })
			var wantIDs []uuid.UUID
			for _, w := range want[:10] {
				wantIDs = append(wantIDs, w.id)
			}

			var exact []uuid.UUID
			var near []memory.Neighbour
			var hits []memory.MemoryHit
			var plan []string
			if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				var err error
				if exact, err = tx.ExactNearest(e.ctx, tc.model, user, q, 10); err != nil {
					return err
				}
				if near, err = tx.NearestVectorsFirst(e.ctx, memory.NearestQuery{UserID: user, Model: tc.model, Vector: q, K: 10}); err != nil {
					return err
				}
				ms := memory.MemorySearch{UserID: user, Scope: memory.ScopeUser, Statuses: []string{"active"}, Now: at.Add(time.Hour),
					VectorOnly: true, Limit: 10, Vector: q, Model: tc.model, MaxDistance: 2}
				if hits, _, err = tx.MemoryCandidates(e.ctx, ms); err != nil {
					return err
				}
				plan, err = tx.ExplainMemoryCandidates(e.ctx, ms)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			var nearIDs, hitIDs []uuid.UUID
			for _, n := range near {
				nearIDs = append(nearIDs, n.Memory.ID)
			}
			slices.SortFunc(hits, func(a, b memory.MemoryHit) int { return cmp.Compare(a.VectorRank, b.VectorRank) })
			for _, h := range hits {
				hitIDs = append(hitIDs, h.Memory.ID)
			}
			for name, got := range map[string][]uuid.UUID{"exact scan": exact, "resolver's read": nearIDs, "search's vector side": hitIDs} {
				if !slices.Equal(got, wantIDs) {
					t.Errorf("%s: %v, want %v", name, got, wantIDs)
				}
			}
			if uses := strings.Contains(strings.Join(plan, "\n"), "memory_embeddings_owner_covered"); uses != tc.covered {
				t.Errorf("search plan reads the covering index: %v, want %v\n%s", uses, tc.covered, strings.Join(plan, "\n"))
			}
		})
	}
}
