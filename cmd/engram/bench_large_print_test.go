package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/bench"
)

// TestPrintBenchLargeBefore: the exact-path search column shows what was timed, and
// "–" for a run that kept its indexes and so timed no search on the exact path (it
// used to print 0.00, which reads as a measured 0 ms).
func TestPrintBenchLargeBefore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before bench.Latency
		want   string
	}{
		{"timed", bench.Latency{N: 40, P95: 812.5}, "812.50"},
		{"kept indexes", bench.Latency{}, "–"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			printBenchLarge(&out, bench.LargeResult{Memories: 1000, Owners: []bench.LargeOwner{{
				Name: "large user", Memories: 1000, ExactScan: bench.Latency{N: 50, P95: 9.5},
				VectorSide: bench.Latency{N: 50, P95: 3.5}, VectorRecall: 1,
				SearchBefore: tt.before, Search: bench.Latency{N: 40, P95: 7.25},
				SearchRuns: []bench.Latency{{N: 40, P95: 7.25}}, SearchP95: 7.25,
			}}}, 400)
			var row []string
			for _, l := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(l); len(f) > 2 && f[0] == "large" && f[1] == "user" {
					row = f
				}
			}
			// large user | memories | exact | vector side | recall | path | before | search | ...
			if len(row) < 9 || row[7] != tt.want || row[8] != "7.25" {
				t.Errorf("row %q: want the exact-path search %q and the search 7.25", row, tt.want)
			}
		})
	}
}

// TestPrintBenchLargeRuns: with several runs the table shows the median p95, a table
// lists each run's, and the targets judge the median with the recall, owner by owner.
func TestPrintBenchLargeRuns(t *testing.T) {
	t.Parallel()
	owner := func(name string, recall float64, p95s ...float64) bench.LargeOwner {
		o := bench.LargeOwner{Name: name, Memories: 1000, SearchRecall: recall}
		for _, p := range p95s {
			o.SearchRuns = append(o.SearchRuns, bench.Latency{N: 80, P95: p})
		}
		o.Search = o.SearchRuns[0]
		o.SearchP95 = bench.MedianP95(o.SearchRuns)
		return o
	}
	tests := []struct {
		name  string
		owner bench.LargeOwner
		want  []string
	}{
		{"median meets", owner("large user", 0.97, 34.5, 26.2, 28.0), []string{
			"search p95 (median of 3 runs)", "large user  34.50  26.20  28.00  28.00",
			"target: large user of 1000 search p95 28.00 ms (median of 3 runs) at recall@10 0.970 meets"}},
		{"median misses", owner("global scope", 0.99, 29.0, 31.0, 30.5), []string{
			"global scope  29.00  31.00  30.50  30.50",
			"target: global scope of 1000 search p95 30.50 ms (median of 3 runs) at recall@10 0.990 MISSES"}},
		{"even count", owner("large user", 0.97, 20, 40), []string{
			"search p95 (median of 2 runs)", "target: large user of 1000 search p95 30.00 ms (median of 2 runs) at recall@10 0.970 meets"}},
		{"recall misses", owner("large user", 0.94, 12, 13, 14), []string{
			"search p95 13.00 ms (median of 3 runs) at recall@10 0.940 MISSES"}},
		{"one run", owner("large user", 0.96, 29.5), []string{
			"target: large user of 1000 search p95 29.50 ms at recall@10 0.960 meets"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			printBenchLarge(&out, bench.LargeResult{Memories: 1000, Owners: []bench.LargeOwner{tt.owner}}, 400)
			text := strings.Join(strings.Fields(out.String()), " ")
			for _, w := range tt.want {
				if !strings.Contains(text, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if len(tt.owner.SearchRuns) == 1 && strings.Contains(out.String(), "each run") {
				t.Errorf("one run printed a table of runs:\n%s", out.String())
			}
		})
	}
}
