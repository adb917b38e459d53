package bench_test

import (
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestRunLargeRuns runs the large-owner benchmark small enough for the test suite,
// with three runs: each owner has every run's search, the one the run-by-run
// progress names, and the median the targets judge.
func TestRunLargeRuns(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Minute)
	app := pgtest.URL(t)
	ownerPool, err := memory.ConnectOwner(ctx, pgtest.OwnerURLOf(t, app), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ownerPool.Close()
	appPool, err := memory.Connect(ctx, app, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer appPool.Close()
	res, err := bench.RunLarge(ctx, memory.NewStore(appPool), memory.NewStore(ownerPool), bench.LargeConfig{
		OwnerMemories: 400, Ladder: []int{300}, SmallOwners: 3, SmallMemories: 20,
		Queries: 6, SearchQueries: 4, Writes: 2, NoShared: true, Runs: 3, Tenant: "bench-large-runs",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Owners) != 4 {
		t.Fatalf("owners %d, want the user, the global scope, one ladder owner and the small ones", len(res.Owners))
	}
	for _, o := range res.Owners {
		if len(o.SearchRuns) != 3 {
			t.Fatalf("%s: %d runs of searches, want 3", o.Name, len(o.SearchRuns))
		}
		for i, l := range o.SearchRuns {
			if l.N != 4 || l.P95 <= 0 {
				t.Errorf("%s: run %d timed %d searches (p95 %.2f), want 4", o.Name, i+1, l.N, l.P95)
			}
		}
		if o.Search != o.SearchRuns[0] {
			t.Errorf("%s: the search %+v is not the first run's %+v", o.Name, o.Search, o.SearchRuns[0])
		}
		if want := bench.MedianP95(o.SearchRuns); o.SearchP95 != want || want <= 0 {
			t.Errorf("%s: median p95 %.2f, want %.2f", o.Name, o.SearchP95, want)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{9, 1}, 5},
		{[]float64{30, 10, 20}, 20},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := bench.Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
