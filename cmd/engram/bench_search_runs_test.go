package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/bench"
)

// searchRun is a bench search result with the given p95s (memories + turns, context),
// a heavy user when heavy > 0, and no turn log when search < 0 (the memory search's p95
// is then -search).
func searchRun(search, context, heavy float64) bench.SearchResult {
	r := bench.SearchResult{Memories: 1000, Owners: 10, Queries: 20,
		Search: bench.Latency{N: 20, P95: search - 1}, SearchTurns: &bench.Latency{N: 20, P95: search},
		Context: bench.Latency{N: 20, P95: context}, ExactScan: bench.Latency{N: 20, P95: 2}}
	if search < 0 {
		r.Search, r.SearchTurns = bench.Latency{N: 20, P95: -search}, nil
	}
	if heavy > 0 {
		r.HeavySearch, r.HeavyContext = &bench.Latency{N: 20, P95: heavy}, &bench.Latency{N: 20, P95: heavy / 2}
	}
	return r
}

// TestBenchSearchRuns: --runs judges the targets on the median of the runs' p95s, path
// by path (of an even count, the mean of the middle two), and prints every run's p95
// beside it, so one fast or slow run neither meets nor misses a target alone.
func TestBenchSearchRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		runs       []bench.SearchResult
		wantSearch float64
		wantHeavy  float64
		wantLine   string // in the targets line
		rowName    string // the summary row checked
		wantRow    string // that row, fields joined by spaces
	}{
		{
			name:       "odd count: the middle run",
			runs:       []bench.SearchResult{searchRun(11.5, 14, 20), searchRun(9.1, 12, 18), searchRun(9.8, 30, 16)},
			wantSearch: 9.8, wantHeavy: 18,
			wantLine: "search median p95 9.80 ms meets <= 10 ms; context median p95 14.00 ms meets",
			rowName:  "search (memories + turns)", wantRow: "search (memories + turns) 11.50 9.10 9.80 9.80",
		},
		{
			name:       "even count: the mean of the middle two",
			runs:       []bench.SearchResult{searchRun(9.5, 10, 0), searchRun(12.5, 10, 0), searchRun(8, 10, 0), searchRun(11.5, 10, 0)},
			wantSearch: 10.5,
			wantLine:   "search median p95 10.50 ms MISSES <= 10 ms",
			rowName:    "search (memories + turns)", wantRow: "search (memories + turns) 9.50 12.50 8.00 11.50 10.50",
		},
		{
			name:       "no turn log: the memory search is judged",
			runs:       []bench.SearchResult{searchRun(-7, 12, 0), searchRun(-12, 12, 0)},
			wantSearch: 0,
			wantLine:   "search median p95 9.50 ms meets <= 10 ms",
			rowName:    "search (memories)", wantRow: "search (memories) 7.00 12.00 9.50",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			all := searchRuns{Runs: tt.runs, Median: medianP95s(tt.runs)}
			if all.Median.SearchTurns != tt.wantSearch || all.Median.HeavySearch != tt.wantHeavy {
				t.Errorf("median search %v, heavy %v; want %v, %v", all.Median.SearchTurns, all.Median.HeavySearch, tt.wantSearch, tt.wantHeavy)
			}
			var out bytes.Buffer
			printBenchSearchRuns(&out, all)
			text := out.String()
			if !strings.Contains(text, tt.wantLine) {
				t.Errorf("no %q in:\n%s", tt.wantLine, text)
			}
			at := strings.Index(text, "p95 ms of each run")
			if at < 0 {
				t.Fatalf("no summary in:\n%s", text)
			}
			summary := text[at:]
			var row string
			for _, l := range strings.Split(summary, "\n") {
				if f := strings.Fields(l); strings.HasPrefix(strings.Join(f, " "), tt.rowName+" ") {
					row = strings.Join(f, " ")
				}
			}
			if row != tt.wantRow {
				t.Errorf("summary row %q, want %q", row, tt.wantRow)
			}
			if heavy := strings.Contains(summary, "heavy user search"); heavy != (tt.wantHeavy > 0) {
				t.Errorf("heavy user row printed: %v, want %v", heavy, tt.wantHeavy > 0)
			}
			if turns := strings.Contains(summary, "memories + turns"); turns != (tt.wantSearch > 0) {
				t.Errorf("memories + turns row printed: %v, want %v", turns, tt.wantSearch > 0)
			}
			for i := range tt.runs {
				if h := fmt.Sprintf("run %d of %d\n", i+1, len(tt.runs)); strings.Count(text, h) != 1 {
					t.Errorf("heading %q printed %d times", h, strings.Count(text, h))
				}
			}
			var js bytes.Buffer
			if err := printBench("search", &js, true, all, nil, printBenchSearchRuns); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Runs   []json.RawMessage  `json:"runs"`
				Median map[string]float64 `json:"median_p95_ms"`
			}
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatalf("JSON %s: %v", js.String(), err)
			}
			if len(got.Runs) != len(tt.runs) || got.Median["search_memories_turns"] != tt.wantSearch || got.Median["exact_scan"] != 2 {
				t.Errorf("JSON: %d runs, median %v", len(got.Runs), got.Median)
			}
		})
	}
}
