package bench_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestBenchSmoke runs the resolver benchmark small enough for the test suite. The
// full-size run uses the same code:
//
//	ENGRAM_BENCH_OWNERS=1000 ENGRAM_BENCH_PER_OWNER=1000 ENGRAM_BENCH_CANDIDATES=5000 \
//	ENGRAM_BENCH_LARGE=10000 go test ./internal/bench -run TestBenchSmoke -v -timeout 30m
func TestBenchSmoke(t *testing.T) {
	t.Parallel()
	var progress io.Writer
	if os.Getenv("ENGRAM_BENCH_OWNERS") != "" {
		progress = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// The owner role, as `engram bench resolve` runs: the large owner's phase builds
	// its HNSW index.
	pool, err := memory.ConnectOwner(ctx, pgtest.OwnerDatabaseURL(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	res, err := bench.RunResolve(ctx, pool, bench.ResolveConfig{
		Owners:          envInt("ENGRAM_BENCH_OWNERS", 20),
		PerOwner:        envInt("ENGRAM_BENCH_PER_OWNER", 200),
		Candidates:      envInt("ENGRAM_BENCH_CANDIDATES", 400),
		LargeOwner:      envInt("ENGRAM_BENCH_LARGE", 2000),
		LargeCandidates: envInt("ENGRAM_BENCH_LARGE_CANDIDATES", 100),
		Concurrency:     envInt("ENGRAM_BENCH_CONCURRENCY", 8),
		Progress:        progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("%s", b)
	if res.Across.Errors > 0 || res.Large == nil || res.Large.Errors > 0 || res.LargeExact == nil || res.LargeExact.Errors > 0 {
		t.Fatalf("errors while resolving: %+v", res)
	}
	if ix := res.LargeIndex; ix == nil || ix.RecallQueries == 0 || ix.IndexedReads != ix.RecallQueries {
		t.Fatalf("the large owner's index phase: %+v; want every recall read through the index", ix)
	}
	if runtime.GOOS == "linux" {
		// What the rate is bounded by rides on every phase: CPU read from /proc.
		for name, ph := range map[string]*bench.ResolvePhase{"across owners": &res.Across, "large owner": res.Large} {
			if u := ph.CPU; u == nil || u.Cores < 1 || u.EngramSeconds <= 0 || u.MachineSeconds <= 0 || u.Busy <= 0 {
				t.Errorf("%s: CPU use %+v; want the cores, this process's and the machine's CPU time, and how busy it was", name, u)
			}
		}
	}
	for _, k := range []consolidator.DecisionKind{consolidator.KindAdd, consolidator.KindConfirm, consolidator.KindUpdate, consolidator.KindSupersede} {
		if res.Across.Decisions[string(k)] == 0 {
			t.Errorf("no %s decisions in the benchmark mix: %v", k, res.Across.Decisions)
		}
	}
}
