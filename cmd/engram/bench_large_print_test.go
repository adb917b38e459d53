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
