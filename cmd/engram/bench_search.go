package main

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/internal/bench"
)

const benchSearchUsage = `Usage: engram bench search [flags]

Seed a benchmark tenant with synthetic memories over many owners (local hashing
embedder, COPY in tenant-scoped transactions), then measure /v1/search and
/v1/context latency (p50/p95/p99) next to a bare exact per-owner vector scan, and
compare with a partial HNSW index with iterative scans (recall@10 against the
exact scan). The tenant's earlier memories are replaced; run it against a
benchmark database: the HNSW index is built on the shared table and dropped
afterwards unless --keep-index.
Targets: search p95 < 15 ms and context p95 < 30 ms at 1,000,000 memories.
`

// benchSearchCommand runs "engram bench search". args excludes "bench search".
// Progress goes to stderr, the report to stdout.
func benchSearchCommand(ctx context.Context, pool *pgxpool.Pool, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench search", benchSearchUsage, stderr)
	var cfg bench.SearchConfig
	fs.IntVar(&cfg.Memories, "memories", 100_000, "memories to seed")
	fs.IntVar(&cfg.Owners, "owners", 1000, "owners (users) the memories are spread over")
	fs.IntVar(&cfg.Queries, "queries", 500, "queries per measured path")
	fs.StringVar(&cfg.Tenant, "tenant", "engram-bench", "benchmark tenant (its memories are replaced)")
	fs.BoolVar(&cfg.Reuse, "reuse", false, "keep the tenant's memories when it already holds --memories of them")
	fs.BoolVar(&cfg.NoHNSW, "no-hnsw", false, "skip the HNSW comparison (its index build takes minutes at 1M)")
	fs.BoolVar(&cfg.KeepIndex, "keep-index", false, "leave the HNSW index in place afterwards")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"memories", cfg.Memories}, {"owners", cfg.Owners}, {"queries", cfg.Queries}} {
		if f.v <= 0 {
			return usagef("bench search: --%s must be positive, got %d", f.name, f.v)
		}
	}
	if preflight(ctx) {
		return nil
	}
	cfg.Progress = stderr
	res, err := bench.RunSearch(ctx, pool, cfg)
	if err != nil {
		return fmt.Errorf("bench search: %w", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return fmt.Errorf("bench search: writing the result: %w", err)
		}
		return nil
	}
	printBenchSearch(stdout, res)
	return nil
}

func printBenchSearch(w io.Writer, r bench.SearchResult) {
	fmt.Fprintf(w, "search benchmark: %d memories over %d owners, %d queries per path\n", r.Memories, r.Owners, r.Queries)
	if r.SeedSeconds > 0 {
		fmt.Fprintf(w, "seeded in %.1f s (%.0f memories/s)\n", r.SeedSeconds, r.SeedRowsPerS)
	}
	fmt.Fprintln(w)
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "path\tp50 ms\tp95 ms\tp99 ms\trecall@10\t")
	row := func(name string, l bench.Latency, recall string) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%s\t\n", name, l.P50, l.P95, l.P99, recall)
	}
	row("search (hybrid, exact per-owner vectors)", r.Search, fmt.Sprintf("%.3f", r.SearchVectorRecall))
	row("context (budget 1500)", r.Context, "")
	row("exact per-owner scan (baseline)", r.ExactScan, "1.000")
	if r.HNSW != nil {
		row("HNSW, iterative relaxed_order, ef 40", *r.HNSW, fmt.Sprintf("%.3f", r.HNSWRecall))
	}
	tw.Flush()
	if r.HNSW != nil {
		fmt.Fprintf(w, "\nHNSW build %.1f s; search plan uses HNSW: %v\n", r.HNSWBuildSeconds, r.SearchUsesHNSW)
	}
	verdict := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "MISSES"
	}
	fmt.Fprintf(w, "targets: search p95 %.2f ms %s < 15 ms; context p95 %.2f ms %s < 30 ms (targets are for 1M memories)\n",
		r.Search.P95, verdict(r.Search.P95 < 15), r.Context.P95, verdict(r.Context.P95 < 30))
}
