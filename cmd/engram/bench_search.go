package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
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
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench search", []intFlag{{"memories", cfg.Memories}, {"owners", cfg.Owners}, {"queries", cfg.Queries}}); err != nil {
		return err
	}
	if err := nonNegativeFlags("bench search", []intFlag{{"turns", cfg.Turns}, {"heavy-turns", cfg.HeavyTurns}, {"context-turns", cfg.ContextTurns}}); err != nil {
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
	res, err := bench.RunSearch(ctx, pool, cfg)
	return printBench("search", stdout, *asJSON, res, err, printBenchSearch)
}

func printBenchSearch(w io.Writer, r bench.SearchResult) {
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
	verdict := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "MISSES"
	}
	search := r.Search
	if r.SearchTurns != nil {
		search = *r.SearchTurns
	}
	fmt.Fprintf(w, "targets (for 1M memories and 1M turns): search p95 %.2f ms %s <= 10 ms; context p95 %.2f ms %s <= 20 ms",
		search.P95, verdict(search.P95 <= 10), r.Context.P95, verdict(r.Context.P95 <= 20))
	if r.HeavySearch != nil {
		fmt.Fprintf(w, "; heavy user search p95 %.2f ms %s, context p95 %.2f ms %s <= 30 ms",
			r.HeavySearch.P95, verdict(r.HeavySearch.P95 <= 30), r.HeavyContext.P95, verdict(r.HeavyContext.P95 <= 30))
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
