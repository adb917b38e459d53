package bench_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestBenchSearch runs the search benchmark on a fresh database when
// ENGRAM_BENCH_SEARCH=memories:owners[:queries] is set, e.g.
//
//	ENGRAM_BENCH_SEARCH=100000:1000 go test -run TestBenchSearch -v -timeout 1h ./internal/bench/
//
// It is skipped otherwise: seeding takes minutes.
func TestBenchSearch(t *testing.T) {
	spec := os.Getenv("ENGRAM_BENCH_SEARCH")
	if spec == "" {
		t.Skip("set ENGRAM_BENCH_SEARCH=memories:owners[:queries] to run the search benchmark")
	}
	parts := strings.Split(spec, ":")
	num := func(i, def int) int {
		if i >= len(parts) {
			return def
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			t.Fatalf("ENGRAM_BENCH_SEARCH: %v", err)
		}
		return n
	}
	cfg := bench.SearchConfig{Memories: num(0, 100000), Owners: num(1, 1000), Queries: num(2, 300),
		NoHNSW: os.Getenv("ENGRAM_BENCH_NO_HNSW") != "", Progress: os.Stderr}
	pool := pgtest.Pool(t)
	res, err := bench.RunSearch(testCtx(t, 50*time.Minute), pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("%s", b)
}
