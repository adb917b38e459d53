package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/internal/bench"
)

const benchGrowthUsage = `Usage: engram bench growth [flags]

The cost-of-growth table: for each size, a tenant of that many synthetic memories
(owners of --per-owner memories each, so the work grows in owners), seeded as
engram bench search seeds; then, after one unmeasured pass that warms the cache,
search and context latency in-process (as bench search measures them) and through
a real engram serve (API only, on this database),
engram serve's resident set after those calls, and the resolver's rate over owners
of the same shape (as bench resolve, in a tenant seeded apart and deleted
afterwards). Run it against a benchmark database: the growth-<size> tenants stay
(--reuse keeps a size's tenant when it already holds its memories).
`

// benchGrowthCommand runs "engram bench growth". pool is the owner role's (seeding);
// dbURL the application role's, for engram serve.
func benchGrowthCommand(ctx context.Context, pool *pgxpool.Pool, dbURL string, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench growth", benchGrowthUsage, stderr)
	cfg := bench.GrowthConfig{DatabaseURL: dbURL}
	sizes := fs.String("sizes", "10000,100000,1000000", "memory counts to measure (comma-separated)")
	fs.IntVar(&cfg.PerOwner, "per-owner", 1000, "memories per owner")
	fs.IntVar(&cfg.Queries, "queries", 200, "searches and context calls per size")
	fs.IntVar(&cfg.ResolveCandidates, "resolve-candidates", 2000, "candidates resolved per size")
	fs.BoolVar(&cfg.Reuse, "reuse", false, "keep a size's tenant when it already holds its memories")
	fs.StringVar(&cfg.Binary, "binary", "", "engram binary to run as serve (default: this one)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where the NATS store and serve's logs go (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return usagef("bench growth: --sizes: %q is not a positive memory count", s)
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	if err := positiveFlags("bench growth", []intFlag{{"per-owner", cfg.PerOwner}, {"queries", cfg.Queries},
		{"resolve-candidates", cfg.ResolveCandidates}}); err != nil {
		return err
	}
	for _, n := range cfg.Sizes {
		if n < cfg.PerOwner {
			return usagef("bench growth: --sizes: %d is less than one owner of --per-owner %d", n, cfg.PerOwner)
		}
	}
	if preflight(ctx) {
		return nil
	}
	if err := processBench("growth", cfg.DatabaseURL, &cfg.Binary, &cfg.WorkDir); err != nil {
		return err
	}
	cfg.Progress, cfg.Logger = stderr, benchLogger(stderr)
	res, err := bench.RunGrowth(ctx, pool, cfg)
	return printBench("growth", stdout, *asJSON, res, err, printBenchGrowth)
}

func printBenchGrowth(w io.Writer, r bench.GrowthResult) {
	fmt.Fprintf(w, "cost of growth: owners of %d memories, %d calls per path\n\n", r.PerOwner, r.Queries)
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "memories\towners\tsearch p95 ms\tcontext p95 ms\tserve search p95 ms\tserve context p95 ms\tserve RSS MB\tpeak MB\tresolve/s\tresolve p95 ms\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", x.Memories, x.Owners,
			x.Search.P95, x.Context.P95, x.ServeSearch.P95, x.ServeContext.P95,
			float64(x.ServeRSS)/(1<<20), float64(x.ServePeakRSS)/(1<<20), x.ResolvePerS, x.ResolveP95)
	}
	tw.Flush()
}
