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

// TestIVFFlatFewestProbes checks that the pass reads an IVFFlat index built at its
// default probes through the fewest lists whose sample still reaches the recall
// target: never below the floor, the count it keeps reaching the target and one list
// fewer falling short on the same sample (the bisection raises its lower bound only
// past a count measured short), recorded in the registry, and the same for an index
// whose measure was cleared (migration 0021); probes an operator configured are kept,
// and an index short of the target is still read further.
func TestIVFFlatFewestProbes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, _, opool := hnswStores(t)
	rng := rand.New(rand.NewPCG(9, 10))
	seedVectors(t, app, "acme", "big", 2000, rng)
	const target, lists = 0.9, 40
	// 40 lists of 50 vectors; the default reads all of them (DefaultIVFMinProbes).
	cfg := memory.HNSWConfig{Threshold: 100, IVFThreshold: 1000, IVFListRows: 50, SwapGrace: -1, RecallTarget: target}
	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Built) != 1 || rep.Built[0].Method != memory.MethodIVFFlat || rep.Built[0].Lists != lists {
		t.Fatalf("built %+v, want one IVFFlat index of %d lists", rep.Built, lists)
	}
	registry := func() memory.HNSWOwnerIndex {
		t.Helper()
		ixs, _, err := owner.HNSWIndexes(ctx)
		if err != nil || len(ixs) != 1 {
			t.Fatalf("registry %+v, %v; want one index", ixs, err)
		}
		return ixs[0]
	}
	built := rep.Built[0]
	if built.Probes >= lists || built.Probes < memory.MinIVFProbes || built.Recall < target {
		t.Errorf("built reading %d of %d lists at recall %.3f; want fewer than all, at least %d, recall >= %.2f",
			built.Probes, lists, built.Recall, memory.MinIVFProbes, target)
	}
	if got := registry(); got.Probes != built.Probes || float32(got.Recall) != float32(built.Recall) {
		t.Errorf("registry reads %d lists at %.3f, the pass reported %d at %.3f", got.Probes, got.Recall, built.Probes, built.Recall)
	}

	all := built
	all.Probes = lists
	for _, tc := range []struct {
		name             string
		from, fewest     int
		wantMin, wantMax int
		reaches          bool
	}{
		{"default reads lowered", lists, memory.MinIVFProbes, memory.MinIVFProbes, lists - 1, true},
		{"configured reads kept", lists, 0, lists, lists, true},
		// Two lists of 40 find far less than 0.9: read further, up to twice as many.
		{"short reads raised", 2, memory.MinIVFProbes, 3, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := all
			ix.Probes = tc.from
			got, r, fewer, err := owner.TuneIndexReads(ctx, ix, target, tc.fewest)
			if err != nil {
				t.Fatal(err)
			}
			if got.Probes < tc.wantMin || got.Probes > tc.wantMax || (r >= target) != tc.reaches {
				t.Fatalf("reads %d lists at recall %.3f; want %d-%d lists, reaching %.2f: %v", got.Probes, r, tc.wantMin, tc.wantMax, target, tc.reaches)
			}
			if tc.fewest > 0 && tc.reaches && got.Probes > tc.fewest && fewer >= target {
				t.Errorf("reads %d lists at %.3f, but %d lists reach %.3f on the same sample", got.Probes, r, got.Probes-1, fewer)
			}
		})
	}

	// An index whose measure was cleared is measured by the next pass and lowered.
	if _, err := opool.Exec(ctx, `UPDATE hnsw_owner_indexes SET recall = NULL, probes = $1`, lists); err != nil {
		t.Fatal(err)
	}
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || len(rep.Measured) != 1 {
		t.Fatalf("pass after the measure was cleared: %+v, %v; want one measured", rep, err)
	}
	// The registry keeps recall as real: 45 of 50 reads back as 0.89999998.
	if got := registry(); got.Probes >= lists || got.Probes < memory.MinIVFProbes || float32(got.Recall) < float32(target) {
		t.Errorf("re-measured: reads %d lists at %.3f; want fewer than %d, at least %d, recall >= %.2f",
			got.Probes, got.Recall, lists, memory.MinIVFProbes, target)
	}
}
