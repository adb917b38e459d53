package memory_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/engramhq/engram/memory"
)

// TestOwnerIndexRecall checks that the maintenance pass measures an index before
// searches rely on it: a build below the recall target is built again and then read
// further (ef_search up to twice its setting), the measure is recorded and listed, a
// measured index is not measured again, and one without a measure (built before
// measures were taken) is measured by the next pass.
func TestOwnerIndexRecall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, _, opool := hnswStores(t)
	rng := rand.New(rand.NewPCG(5, 8))
	seedVectors(t, app, "acme", "big", 1500, rng)
	seedVectors(t, app, "acme", "fine", 400, rng)

	recallOf := func(user string) (float64, int, bool) {
		t.Helper()
		ixs, _, err := owner.HNSWIndexes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range ixs {
			if ix.Tenant == "acme" && ix.UserID == user {
				return ix.Recall, ix.EfSearch, ix.RecallText() != "-"
			}
		}
		t.Fatalf("no index of %q listed", user)
		return 0, 0, false
	}

	tests := []struct {
		name string
		user string
		cfg  memory.HNSWConfig
		// rebuilt: the first build fell short and was built again; raised: the reads
		// were raised past cfg.EfSearch.
		rebuilt, raised bool
	}{
		// A sparse graph read one candidate deep cannot find 0.99 of 1,500 random
		// vectors' neighbours.
		{"short of the target", "big", memory.HNSWConfig{Threshold: 1000, EfSearch: 1, M: 2, EfConstruction: 4, RecallTarget: 0.99}, true, true},
		// A graph of 400 read 400 deep finds every neighbour: nothing to do.
		{"at the target", "fine", memory.HNSWConfig{Threshold: 300, EfSearch: 400, RecallTarget: 0.9,
			Tenants: []string{"acme"}}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := owner.MaintainHNSW(ctx, tc.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got *memory.HNSWOwnerIndex
			for i := range rep.Built {
				if rep.Built[i].UserID == tc.user {
					got = &rep.Built[i]
				}
			}
			if got == nil {
				t.Fatalf("no index built for %q: %+v", tc.user, rep)
			}
			if got.RecallText() == "-" || got.Recall < 0 || got.Recall > 1 {
				t.Fatalf("built index not measured: %+v", *got)
			}
			if (rep.RecallRebuilds > 0) != tc.rebuilt {
				t.Errorf("recall rebuilds %d, want rebuilt %v (recall %.3f)", rep.RecallRebuilds, tc.rebuilt, got.Recall)
			}
			if raised := got.EfSearch > tc.cfg.EfSearch; raised != tc.raised || got.EfSearch > 2*tc.cfg.EfSearch {
				t.Errorf("ef_search %d from %d, want raised %v and at most twice", got.EfSearch, tc.cfg.EfSearch, tc.raised)
			}
			if tc.raised && got.Recall >= tc.cfg.RecallTarget {
				t.Errorf("reads raised though recall %.3f reached %.2f", got.Recall, tc.cfg.RecallTarget)
			}
			r, ef, ok := recallOf(tc.user)
			if !ok || float32(r) != float32(got.Recall) || ef != got.EfSearch {
				t.Errorf("registry has recall %.3f (measured %v) at ef_search %d, the pass reported %.3f at %d", r, ok, ef, got.Recall, got.EfSearch)
			}
		})
	}

	// Measured indexes are kept as they are.
	cfg := memory.HNSWConfig{Threshold: 300, EfSearch: 400, RecallTarget: 0.9}
	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || len(rep.Measured) != 0 || rep.Kept != 2 {
		t.Fatalf("second pass: %+v, %v; want both kept, none measured", rep, err)
	}
	// An index without a measure (built before measures were taken) is measured, as
	// it is read (ef_search 1 of the sparse graph), and read further.
	if _, err := opool.Exec(ctx, `UPDATE hnsw_owner_indexes SET recall = NULL, ef_search = 1 WHERE user_id = 'big'`); err != nil {
		t.Fatal(err)
	}
	if _, ok := func() (float64, bool) { r, _, ok := recallOf("big"); return r, ok }(); ok {
		t.Fatal("the cleared measure is still listed")
	}
	cfg.RecallTarget = 0.99
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || len(rep.Measured) != 1 || rep.Measured[0].UserID != "big" {
		t.Fatalf("third pass: %+v, %v; want big measured", rep, err)
	}
	if m := rep.Measured[0]; m.EfSearch != 2 || m.RecallText() == "-" || rep.RecallRebuilds != 0 {
		t.Errorf("measured %+v (rebuilds %d); want read at ef_search 2 and not rebuilt (searches read it)", m, rep.RecallRebuilds)
	}
	if _, ef, ok := recallOf("big"); !ok || ef != 2 {
		t.Errorf("registry: measured %v, ef_search %d; want measured at 2", ok, ef)
	}
}
