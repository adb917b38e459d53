package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/internal/bench"
)

const benchResolveUsage = `Usage: engram bench resolve [flags]

Seed owners that already hold memories (memories, versions, hash-embedder
vectors and the ledger rows of the candidates they came from, bulk-loaded with
COPY in tenant-scoped transactions), then resolve
synthetic candidates — 40% new facts, 30% restatements, 15% refinements, 15%
contradictions — spread over the owners, and report candidates/s and latency per
candidate; then resolve candidates for one large owner (--large-workers at once, as
the worker handles a backlog of one owner: they share transactions): by the exact
scan, then,
after a maintenance pass has given it its HNSW index (it crosses the threshold,
10,000 or --large-owner if smaller), through the index, with the recall@10 of the
resolver's neighbours through it against the exact scan (--no-hnsw: the exact
scan only). Seeding 1,000 × 1,000 takes about a minute. Run it against a
benchmark database: the seeded tenant ("bench-<random>") stays unless --cleanup.
Every candidate goes through the worker's path (consolidator.ResolveQueued): the
candidates of one owner handled at the same moment are resolved in one transaction.
Each phase also reports what a candidate cost the machine's cores (from /proc:
this process, PostgreSQL's processes on this machine) and the rate that cost allows
with every core busy: a phase with its cores busy is bounded by CPU, one without
(one owner's candidates, applied in order) by waiting.
Targets: ≥ 1,000 candidates/s across 1,000 owners × 1,000 memories, ≥ 300/s
for the one owner of 10,000.
`

// benchResolveCommand runs "engram bench resolve". args excludes "bench resolve".
// Progress goes to stderr, the report to stdout.
func benchResolveCommand(ctx context.Context, pool *pgxpool.Pool, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench resolve", benchResolveUsage, stderr)
	var cfg bench.ResolveConfig
	fs.IntVar(&cfg.Owners, "owners", 1000, "owners to seed")
	fs.IntVar(&cfg.PerOwner, "per-owner", 1000, "memories per owner")
	fs.IntVar(&cfg.Candidates, "candidates", 5000, "candidates to resolve across owners")
	fs.IntVar(&cfg.Concurrency, "concurrency", 8, "resolving workers")
	fs.IntVar(&cfg.LargeOwner, "large-owner", 10000, "memories of the one large owner (negative: skip)")
	fs.IntVar(&cfg.LargeCandidates, "large-candidates", 500, "candidates resolved for the large owner")
	fs.IntVar(&cfg.LargeWorkers, "large-workers", 8, "workers resolving the large owner's candidates at once (1: one at a time, a transaction each)")
	fs.StringVar(&cfg.Tenant, "tenant", "", "tenant to seed (default: a fresh bench-<random>)")
	fs.BoolVar(&cfg.Cleanup, "cleanup", false, "delete the seeded tenant afterwards")
	fs.BoolVar(&cfg.NoHNSW, "no-hnsw", false, "resolve the large owner by the exact scan only (no HNSW index built)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the resolving phases to `FILE`")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench resolve", []intFlag{{"owners", cfg.Owners}, {"per-owner", cfg.PerOwner}, {"candidates", cfg.Candidates},
		{"concurrency", cfg.Concurrency}, {"large-candidates", cfg.LargeCandidates}, {"large-workers", cfg.LargeWorkers}}); err != nil {
		return err
	}
	if err := checkOutputFile("bench resolve", "cpuprofile", *cpuProfile); err != nil {
		return err
	}
	if cfg.LargeOwner == 0 {
		cfg.LargeOwner = -1
	}
	if err := checkTenantFlag(cfg.Tenant, false); err != nil {
		return err
	}
	if preflight(ctx) {
		return nil
	}
	cfg.Progress = stderr
	profile, closeProfile, err := cpuProfileFile("bench resolve", *cpuProfile)
	if err != nil {
		return err
	}
	defer closeProfile()
	cfg.CPUProfile = profile
	res, err := bench.RunResolve(ctx, pool, cfg)
	return printBench("resolve", stdout, *asJSON, res, err, printBenchResolve)
}

func printBenchResolve(w io.Writer, r bench.ResolveResult) {
	fmt.Fprintf(w, "resolver benchmark: tenant %s, %d owners × %d memories", r.Tenant, r.Owners, r.PerOwner)
	if r.LargeOwnerSize > 0 {
		fmt.Fprintf(w, " + one owner of %d", r.LargeOwnerSize)
	}
	fmt.Fprintf(w, "\nseeded %d memories in %.1f s (%.0f rows/s)\n\n", r.SeededRows, r.SeedSeconds, r.SeedRowsPerSec)
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "phase\tcandidates\tworkers\tper s\tp50 ms\tp95 ms\tp99 ms\terrors\t")
	phases := resolvePhases(r)
	for _, ph := range phases {
		p := ph.p
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t\n", ph.name, p.Candidates, p.Concurrency, p.PerSecond,
			p.P50Ms, p.P95Ms, p.P99Ms, p.Errors)
	}
	tw.Flush()
	printResolveCPU(w, phases)
	if ix := r.LargeIndex; ix != nil {
		fmt.Fprintf(w, "\nowner index: the maintenance pass (threshold %d) built %s over %d vectors in %.1f s (m %d, ef_construction %d, ef_search %d, the resolver's %d)\n",
			ix.Threshold, ix.Index, ix.Vectors, ix.BuildSeconds, ix.M, ix.EfConstruction, ix.EfSearch, ix.ResolveEfSearch)
		fmt.Fprintf(w, "resolver's neighbours through it: recall@10 %.3f against the exact scan over %d candidates (%d read through the index)\n",
			ix.RecallAt10, ix.RecallQueries, ix.IndexedReads)
	}
	fmt.Fprintln(w, "\ndecisions across owners:")
	kinds := make([]string, 0, len(r.Across.Decisions))
	for k := range r.Across.Decisions {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	dt := newTabWriter(w, false)
	for _, k := range kinds {
		fmt.Fprintf(dt, "  %s\t%d\n", k, r.Across.Decisions[k])
	}
	dt.Flush()
	verdict := func(v, target float64) string {
		if v < target {
			return "MISSES"
		}
		return "meets"
	}
	fmt.Fprintf(w, "target: %.0f candidates/s across owners %s ≥ %d/s\n", r.Across.PerSecond,
		verdict(r.Across.PerSecond, benchResolveAcrossTarget), benchResolveAcrossTarget)
	if r.Large != nil {
		fmt.Fprintf(w, "target: %.0f candidates/s for the owner of %d %s ≥ %d/s\n", r.Large.PerSecond, r.LargeOwnerSize,
			verdict(r.Large.PerSecond, benchResolveLargeTarget), benchResolveLargeTarget)
	}
}

// namedPhase is a phase of the resolver benchmark with its name in the tables.
type namedPhase struct {
	name string
	p    *bench.ResolvePhase
}

// resolvePhases are r's phases that ran, in order, named for the tables.
func resolvePhases(r bench.ResolveResult) []namedPhase {
	phases := []namedPhase{{"across owners", &r.Across}}
	if r.LargeExact != nil {
		phases = append(phases, namedPhase{fmt.Sprintf("one owner of %d, exact scan", r.LargeOwnerSize), r.LargeExact})
	}
	if r.Large != nil {
		path := "exact scan"
		if r.LargeIndex != nil {
			path = "owner index"
		}
		phases = append(phases, namedPhase{fmt.Sprintf("one owner of %d, %s", r.LargeOwnerSize, path), r.Large})
	}
	return phases
}

// printResolveCPU says, per phase, what a candidate cost the machine's cores and the
// rate that cost allows with every core busy: a phase whose cores were busy is bounded
// by CPU, one whose were not (one owner's candidates, applied in order) by waiting.
func printResolveCPU(w io.Writer, phases []namedPhase) {
	tw := newTabWriter(w, true)
	header := false
	for _, ph := range phases {
		if ph.p.CPU == nil {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nCPU per candidate (from /proc; PostgreSQL: its processes on this machine):")
			fmt.Fprintln(tw, "phase\tmachine ms\tengram ms\tpostgres ms\tcores busy\tat this cost, all cores allow\t")
			header = true
		}
		u := *ph.p.CPU
		machine, engram, pg := u.PerItemMs(ph.p.Candidates)
		pgs := fmt.Sprintf("%.2f", pg)
		if !u.PostgresLocal {
			pgs = "elsewhere"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%.0f%% of %d\t%.0f/s\t\n", ph.name, machine, engram, pgs, 100*u.Busy, u.Cores,
			u.CoreBound(ph.p.Candidates))
	}
	tw.Flush()
}

// The resolver's targets (issue 17): across owners, and for one large owner.
const (
	benchResolveAcrossTarget = 1000
	benchResolveLargeTarget  = 300
)
