package memory_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestResolveReadsOwnerIndex: the resolver's nearest read goes through the owner's
// HNSW index when it has a ready one (plan and answer), gets the exact scan's
// neighbours on a small owner, keeps the exact scan for everyone else, and stays
// exact when the index cannot supply K live memories or was dropped meanwhile.
func TestResolveReadsOwnerIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, pool, _ := hnswStores(t)
	// Its first read of the registry (after the build) holds for the whole test: the
	// last case reads through an entry made stale by a drop.
	memory.FreezeOwnerIndexes(app)

	rng := rand.New(rand.NewPCG(3, 4))
	seedVectors(t, app, "acme", "big", 90, rng)
	seedVectors(t, app, "acme", "small", 40, rng)
	// The resolver's ef_search (100) covers the whole graph of 90, so the index's answer
	// is exact and any difference from the exact scan is the path's, not the
	// approximation's.
	cfg := memory.HNSWConfig{Threshold: 60}
	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Built) != 1 || rep.Built[0].UserID != "big" {
		t.Fatalf("built %+v, want big's index only", rep.Built)
	}
	index := rep.Built[0].Name

	queries := make([][]float32, 10)
	for i := range queries {
		queries[i] = randomVector(rng)
	}
	for _, c := range []struct {
		user      string
		wantIndex string
	}{{"big", index}, {"small", ""}} {
		t.Run(c.user, func(t *testing.T) {
			for _, vec := range queries {
				q := memory.NearestQuery{UserID: c.user, Model: hnswModel, Vector: vec, K: 10}
				rd, exact, plan := resolveAndExact(t, app, q)
				if rd.Index != c.wantIndex {
					t.Fatalf("read through index %q, want %q", rd.Index, c.wantIndex)
				}
				if got := slices.ContainsFunc(plan, func(l string) bool { return strings.Contains(l, index) }); got != (c.wantIndex != "") {
					t.Fatalf("plan uses the owner index: %v, want %v:\n%s", got, c.wantIndex != "", strings.Join(plan, "\n"))
				}
				if !slices.Equal(neighbourIDs(rd.Nearest), neighbourIDs(exact)) {
					t.Fatalf("neighbours %v, exact scan %v", neighbourIDs(rd.Nearest), neighbourIDs(exact))
				}
				for i := range exact {
					if d := rd.Nearest[i].Similarity - exact[i].Similarity; d > 1e-6 || d < -1e-6 {
						t.Fatalf("similarity %v of %s, exact %v", rd.Nearest[i].Similarity, exact[i].Memory.ID, exact[i].Similarity)
					}
				}
			}
		})
	}

	// Fewer than K live memories, the farthest of the owner: neither the exact scan's
	// first K+slack vectors nor the index scan can show that they are all there is, so
	// the exact scan answers (Index "").
	q := memory.NearestQuery{Model: hnswModel, Vector: queries[0], K: 10}
	for _, user := range []string{"big", "small"} {
		q.UserID = user
		all := q
		all.K = 1000
		_, ranked, _ := resolveAndExact(t, app, all)
		keep := neighbourIDs(ranked[len(ranked)-5:])
		pgtest.Exec(t, pool, "acme", `UPDATE memories SET status = 'archived' WHERE user_id = $1 AND NOT id = ANY($2)`, user, keep)
		rd, exact, _ := resolveAndExact(t, app, q)
		if rd.Index != "" || len(rd.Nearest) != 5 || !slices.Equal(neighbourIDs(rd.Nearest), neighbourIDs(exact)) {
			t.Errorf("%s with 5 live memories: index %q, neighbours %v; want the exact scan's %v", user, rd.Index, neighbourIDs(rd.Nearest), neighbourIDs(exact))
		}
		pgtest.Exec(t, pool, "acme", `UPDATE memories SET status = 'active' WHERE user_id = $1`, user)
	}

	// The index dropped by another store while this one still holds it ready: the
	// statement planned for it answers exactly without it.
	pgtest.Exec(t, pool, "acme", `DELETE FROM memories WHERE user_id = 'big' AND id IN
		(SELECT id FROM memories WHERE user_id = 'big' ORDER BY id LIMIT 70)`)
	if rep, err := owner.MaintainHNSW(ctx, cfg, nil); err != nil || len(rep.Dropped) != 1 {
		t.Fatalf("dropping the shrunk owner's index: %+v, %v", rep, err)
	}
	q.UserID = "big"
	rd, exact, plan := resolveAndExact(t, app, q)
	if rd.Index != index || slices.ContainsFunc(plan, func(l string) bool { return strings.Contains(l, index) }) {
		t.Fatalf("after the drop: read for index %q with plan\n%s\nwant the cached choice %q without the index", rd.Index, strings.Join(plan, "\n"), index)
	}
	if !slices.Equal(neighbourIDs(rd.Nearest), neighbourIDs(exact)) {
		t.Fatalf("after the drop: neighbours %v, exact scan %v", neighbourIDs(rd.Nearest), neighbourIDs(exact))
	}
}

// resolveAndExact runs q as the resolver reads it, by the exact scan (Nearest), and
// the plan of the resolver's read, in one transaction.
func resolveAndExact(t *testing.T, s *memory.Store, q memory.NearestQuery) (memory.ResolveRead, []memory.Neighbour, []string) {
	t.Helper()
	ctx := context.Background()
	var rd memory.ResolveRead
	var exact []memory.Neighbour
	var plan []string
	err := s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		var err error
		if rd, err = tx.ResolveReads(ctx, memory.ResolveQuery{Nearest: q}); err != nil {
			return err
		}
		if exact, err = tx.Nearest(ctx, q); err != nil {
			return err
		}
		plan, err = tx.ExplainResolveNearest(ctx, q)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rd, exact, plan
}

func neighbourIDs(ns []memory.Neighbour) []uuid.UUID {
	ids := make([]uuid.UUID, len(ns))
	for i, n := range ns {
		ids[i] = n.Memory.ID
	}
	return ids
}

func randomVector(rng *rand.Rand) []float32 {
	v := make([]float32, 16)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	return v
}
