package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/retriever"
)

const benchSearchUsage = `Usage: engram bench search [flags]

Seed a benchmark tenant with synthetic memories over many owners (local hashing
embedder, COPY in tenant-scoped transactions) and a turn log (--turns over the same
owners, plus --heavy-turns for one heavy user), then measure /v1/search (memories;
memories + turns) and /v1/context (with the user's latest session) latency
(p50/p95/p99), for the heavy user apart, next to a bare exact per-owner vector scan, and
compare with a partial HNSW index with iterative scans (recall@10 against the
exact scan). The tenant's earlier memories are replaced; run it against a
benchmark database: the HNSW index is built on the shared table and dropped
afterwards unless --keep-index.
Targets at 1,000,000 memories and 1,000,000 turns: search (memories + turns) p95
<= 10 ms, context p95 <= 20 ms, the heavy user's search and context p95 <= 30 ms.
Every owner's text statistics (document count, mean length, frequent terms) are
counted and stored before the measurement, the state the retriever keeps in the
background once an owner has been searched; --cold-stats measures first searches.
Use --explain for the executed plans and --cpuprofile for where the Go time goes.
--runs N measures N times in one process and judges the targets on the median of the
runs' p95: on a machine whose speed wanders one run's p95 says little. The tenant is
seeded once; each run draws its own queries and stores the owners' statistics again;
the HNSW comparison, --explain and --cpuprofile are the first run's only.
`

// benchSearchCommand runs "engram bench search". args excludes "bench search".
// Progress goes to stderr, the report to stdout.
func benchSearchCommand(ctx context.Context, pool *pgxpool.Pool, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench search", benchSearchUsage, stderr)
	var cfg bench.SearchConfig
	fs.IntVar(&cfg.Memories, "memories", 100_000, "memories to seed")
	fs.IntVar(&cfg.Owners, "owners", 1000, "owners (users) the memories are spread over")
	fs.IntVar(&cfg.Queries, "queries", 500, "queries per measured path")
	fs.IntVar(&cfg.Turns, "turns", 1_000_000, "turns of the turn log, spread over the owners (0: no turn log)")
	fs.IntVar(&cfg.HeavyTurns, "heavy-turns", 50_000, "extra turns of one heavy user (the first owner; 0: none)")
	fs.StringVar(&cfg.Tenant, "tenant", "engram-bench", "benchmark tenant (its memories are replaced)")
	fs.BoolVar(&cfg.Reuse, "reuse", false, "keep the tenant's memories when it already holds --memories of them")
	fs.BoolVar(&cfg.NoHNSW, "no-hnsw", false, "skip the HNSW comparison (its index build takes minutes at 1M)")
	fs.BoolVar(&cfg.KeepIndex, "keep-index", false, "leave the HNSW index in place afterwards")
	fs.IntVar(&cfg.ContextTurns, "context-turns", retriever.DefaultConfig().ContextTurns, "earlier unextracted turns a context call may offer when no memory matches (ENGRAM_CONTEXT_TURNS; 0: none)")
	fs.BoolVar(&cfg.ColdStats, "cold-stats", false, "measure owners' first searches: no stored text statistics (default: every owner's are stored first, as after an earlier search)")
	fs.BoolVar(&cfg.Explain, "explain", false, "print the executed plans (EXPLAIN ANALYZE, BUFFERS) of the first query's statements")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the measured calls to `FILE`")
	runs := fs.Int("runs", 1, "measure this many times, the tenant seeded once; targets judged on the median p95")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench search", []intFlag{{"memories", cfg.Memories}, {"owners", cfg.Owners}, {"queries", cfg.Queries}, {"runs", *runs}}); err != nil {
		return err
	}
	if err := nonNegativeFlags("bench search", []intFlag{{"turns", cfg.Turns}, {"heavy-turns", cfg.HeavyTurns}, {"context-turns", cfg.ContextTurns}}); err != nil {
		return err
	}
	if err := checkOutputFile("bench search", "cpuprofile", *cpuProfile); err != nil {
		return err
	}
	if err := checkTenantFlag(cfg.Tenant, true); err != nil {
		return err
	}
	if preflight(ctx) {
		return nil
	}
	cfg.Progress = stderr
	profile, closeProfile, err := cpuProfileFile("bench search", *cpuProfile)
	if err != nil {
		return err
	}
	defer closeProfile()
	cfg.CPUProfile = profile
	if *runs == 1 {
		res, err := bench.RunSearch(ctx, pool, cfg)
		return printBench("search", stdout, *asJSON, res, err, printBenchSearch)
	}
	var all searchRuns
	for i := range *runs {
		fmt.Fprintf(stderr, "run %d of %d\n", i+1, *runs)
		cfg.Round = i
		res, err := bench.RunSearch(ctx, pool, cfg)
		if err != nil {
			return fmt.Errorf("bench search: run %d of %d: %w", i+1, *runs, err)
		}
		all.Runs = append(all.Runs, res)
		// The later runs measure the tenant the first one seeded, with queries of their
		// own; the one-off parts (the HNSW build, plans, the profile) are the first run's.
		cfg.Reuse, cfg.NoHNSW, cfg.Explain, cfg.CPUProfile = true, true, false, nil
	}
	all.Median = medianP95s(all.Runs)
	return printBench("search", stdout, *asJSON, all, nil, printBenchSearchRuns)
}

// searchRuns is the result of "engram bench search --runs N": every run's, and the
// median of their p95s by path.
type searchRuns struct {
	Runs   []bench.SearchResult `json:"runs"`
	Median searchP95s           `json:"median_p95_ms"`
}

// searchP95s are the p95s the targets judge, in ms. A path a run did not measure (no
// turn log, no heavy user) is 0, which no timed path is.
type searchP95s struct {
	Search       float64 `json:"search"`
	SearchTurns  float64 `json:"search_memories_turns,omitempty"`
	Context      float64 `json:"context"`
	HeavySearch  float64 `json:"heavy_search_memories_turns,omitempty"`
	HeavyContext float64 `json:"heavy_context,omitempty"`
	ExactScan    float64 `json:"exact_scan"`
}

// searchPaths names searchP95s' fields, in the order the summary prints them.
var searchPaths = []struct {
	name  string
	field func(*searchP95s) *float64
}{
	{"search (memories)", func(p *searchP95s) *float64 { return &p.Search }},
	{"search (memories + turns)", func(p *searchP95s) *float64 { return &p.SearchTurns }},
	{"context", func(p *searchP95s) *float64 { return &p.Context }},
	{"heavy user search", func(p *searchP95s) *float64 { return &p.HeavySearch }},
	{"heavy user context", func(p *searchP95s) *float64 { return &p.HeavyContext }},
	{"exact per-owner scan (baseline)", func(p *searchP95s) *float64 { return &p.ExactScan }},
}

// runsP95s reads each run's p95s by path.
func runsP95s(runs []bench.SearchResult) []searchP95s {
	out := make([]searchP95s, len(runs))
	for i, r := range runs {
		out[i] = p95s(r)
	}
	return out
}

// p95s reads r's p95s by path.
func p95s(r bench.SearchResult) searchP95s {
	out := searchP95s{Search: r.Search.P95, Context: r.Context.P95, ExactScan: r.ExactScan.P95}
	if r.SearchTurns != nil {
		out.SearchTurns = r.SearchTurns.P95
	}
	if r.HeavySearch != nil {
		out.HeavySearch, out.HeavyContext = r.HeavySearch.P95, r.HeavyContext.P95
	}
	return out
}

// medianP95s is the median, path by path, of the runs' p95s (of an even count, the
// mean of the middle two).
func medianP95s(runs []bench.SearchResult) searchP95s {
	var out searchP95s
	if len(runs) == 0 {
		return out
	}
	ps := runsP95s(runs)
	for _, path := range searchPaths {
		xs := make([]float64, 0, len(ps))
		for i := range ps {
			xs = append(xs, *path.field(&ps[i]))
		}
		*path.field(&out) = bench.Median(xs)
	}
	return out
}

// printBenchSearchRuns prints the first run's report, each later run's table, and the
// p95 of every run by path beside their median, which the targets judge.
func printBenchSearchRuns(w io.Writer, all searchRuns) {
	for i, r := range all.Runs {
		fmt.Fprintf(w, "run %d of %d\n", i+1, len(all.Runs))
		if i == 0 {
			printBenchSearchReport(w, r)
		} else {
			printBenchSearchTable(w, r)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "p95 ms of each run and their median (%d runs)\n", len(all.Runs))
	tw := newTabWriter(w, true)
	head := "path\t"
	for i := range all.Runs {
		head += fmt.Sprintf("run %d\t", i+1)
	}
	fmt.Fprintln(tw, head+"median\t")
	med, ps := all.Median, runsP95s(all.Runs)
	for _, path := range searchPaths {
		if *path.field(&med) == 0 {
			continue // a path no run measured
		}
		line := path.name + "\t"
		for i := range ps {
			line += fmt.Sprintf("%.2f\t", *path.field(&ps[i]))
		}
		fmt.Fprintf(tw, "%s%.2f\t\n", line, *path.field(&med))
	}
	tw.Flush()
	printSearchTargets(w, "median ", all.Median)
}

func printBenchSearch(w io.Writer, r bench.SearchResult) {
	printBenchSearchReport(w, r)
	printSearchTargets(w, "", p95s(r))
}

// printBenchSearchReport prints everything of one run but the targets.
func printBenchSearchReport(w io.Writer, r bench.SearchResult) {
	fmt.Fprintf(w, "search benchmark: %d memories over %d owners, %d turns (+%d of one heavy user), %d queries per path\n",
		r.Memories, r.Owners, r.Turns, r.HeavyTurns, r.Queries)
	if r.SeedSeconds > 0 {
		fmt.Fprintf(w, "seeded in %.1f s (%.0f memories/s)\n", r.SeedSeconds, r.SeedRowsPerS)
	}
	if r.TurnSeedSecs > 0 {
		fmt.Fprintf(w, "seeded %d turns in %.1f s\n", r.Turns+r.HeavyTurns, r.TurnSeedSecs)
	}
	switch {
	case r.ColdStats:
		fmt.Fprintln(w, "text statistics: none stored (every search is its owner's first)")
	case r.StatsSeconds > 0:
		fmt.Fprintf(w, "text statistics of every owner counted and stored in %.1f s (as after each owner's first search)\n", r.StatsSeconds)
	}
	fmt.Fprintln(w)
	printBenchSearchTable(w, r)
	if r.HeavySearch != nil {
		fmt.Fprintf(w, "heavy user's keyword top 10 against the full match (every turn holding a query term, by BM25): %.3f\n",
			r.HeavyKeywordAgreement)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Plans)) {
		fmt.Fprintf(w, "\nplan of %s (first query):\n%s\n", name, strings.Join(r.Plans[name], "\n"))
	}
	if r.HNSW != nil {
		fmt.Fprintf(w, "\nHNSW build %.1f s; search plan uses HNSW: %v\n", r.HNSWBuildSeconds, r.SearchUsesHNSW)
	}
}

// printBenchSearchTable prints a run's latency table.
func printBenchSearchTable(w io.Writer, r bench.SearchResult) {
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "path\tp50 ms\tp95 ms\tp99 ms\trecall@10\t")
	row := func(name string, l bench.Latency, recall string) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%s\t\n", name, l.P50, l.P95, l.P99, recall)
	}
	row("search (memories, hybrid, exact per-owner vectors)", r.Search, fmt.Sprintf("%.3f", r.SearchVectorRecall))
	if r.SearchTurns != nil {
		row("search (memories + turns)", *r.SearchTurns, "")
	}
	row("context (budget 1500)", r.Context, "")
	if r.HeavySearch != nil {
		row(fmt.Sprintf("heavy user search (memories + turns, %d turns)", r.HeavyTurns+r.Turns/r.Owners), *r.HeavySearch, "")
		row("heavy user context", *r.HeavyContext, "")
	}
	row("exact per-owner scan (baseline)", r.ExactScan, "1.000")
	if r.HNSW != nil {
		row("HNSW, iterative relaxed_order, ef 40", *r.HNSW, fmt.Sprintf("%.3f", r.HNSWRecall))
	}
	tw.Flush()
}

// printSearchTargets judges p (one run's p95s, or the median of several: which says
// "median ") against the targets: the search is the memories + turns one where there
// is a turn log.
func printSearchTargets(w io.Writer, which string, p searchP95s) {
	verdict := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "MISSES"
	}
	search := p.Search
	if p.SearchTurns > 0 {
		search = p.SearchTurns
	}
	fmt.Fprintf(w, "targets (for 1M memories and 1M turns): search %sp95 %.2f ms %s <= 10 ms; context %sp95 %.2f ms %s <= 20 ms",
		which, search, verdict(search <= 10), which, p.Context, verdict(p.Context <= 20))
	if p.HeavySearch > 0 {
		fmt.Fprintf(w, "; heavy user search %sp95 %.2f ms %s, context %sp95 %.2f ms %s <= 30 ms",
			which, p.HeavySearch, verdict(p.HeavySearch <= 30), which, p.HeavyContext, verdict(p.HeavyContext <= 30))
	}
	fmt.Fprintln(w)
}

// cpuProfileFile creates the --cpuprofile file of a bench command; with no path it
// returns a nil writer (no profile) and a close that does nothing.
func cpuProfileFile(command, path string) (io.Writer, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: --cpuprofile: %w", command, err)
	}
	return f, func() { _ = f.Close() }, nil
}

// checkOutputFile is a usage error when the file that flag --name names (path, none
// when empty) cannot be created: its directory is missing or no directory, or the
// path is a directory. It creates nothing, so a command checks its output files before
// it opens anything, not after a long run. cmd prefixes the message ("bench search"),
// if set.
func checkOutputFile(cmd, name, path string) error {
	if path == "" {
		return nil
	}
	prefix := ""
	if cmd != "" {
		prefix = cmd + ": "
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s--%s: %s is a directory", prefix, name, path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s--%s: cannot create %s: directory %s does not exist", prefix, name, path, dir)
	case err != nil:
		return usagef("%s--%s: cannot create %s: %v", prefix, name, path, err)
	case !fi.IsDir():
		return usagef("%s--%s: cannot create %s: %s is not a directory", prefix, name, path, dir)
	}
	return nil
}
