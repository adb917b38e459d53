package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/engramhq/engram/internal/bench"
)

const benchLatencyUsage = `Usage: engram bench latency [flags]

Run engram as real processes (this binary: "serve --workers=false" and "worker all")
against a private NATS server and PostgreSQL (ENGRAM_DATABASE_URL, a private
database: the run adds a tenant "lat-<random>"), send background turns and searches
of other users at --bg-turns and --bg-searches per second, and measure for --turns
turns of --users users (--concurrency at a time) the time from the 202 of
POST /v1/turns to the first /v1/search that returns the turn's memory, polling
every --poll from when the turn's candidate is on CANDIDATES
(no memory exists before it). The resolution is the poll interval plus a
search's round trip; "finding search sent" is when the search that found it left. Prints p50/p95/p99/max and the hops in between:
extract (202 → candidate made), publish (→ on CANDIDATES), resolve (→ memory
written) and visible (→ found by a search). Target: p95 <= 100 ms offline.

--llm configures a chat model as the extractor (and the resolver's judge): an
endpoint of the run that answers at once; its answer time is measured and
subtracted per turn. The micro-batch quiet window then applies (300ms unless
--batch-quiet). --batch-quiet sets ENGRAM_EXTRACT_BATCH_QUIET for the worker
(auto, off or a duration), e.g. 300ms for the window the offline extractor had
before.
`

// benchLatencyCommand runs "engram bench latency". args excludes "bench latency".
func benchLatencyCommand(ctx context.Context, dbURL string, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench latency", benchLatencyUsage, stderr)
	cfg := bench.LatencyConfig{DatabaseURL: dbURL}
	fs.IntVar(&cfg.Turns, "turns", bench.DefaultLatencyTurns, "turns to measure")
	fs.IntVar(&cfg.Users, "users", bench.DefaultLatencyUsers, "users the measured turns are spread over")
	fs.IntVar(&cfg.Concurrency, "concurrency", bench.DefaultLatencyConcurrency, "measured turns in flight at once")
	fs.DurationVar(&cfg.Poll, "poll", bench.DefaultLatencyPoll, "interval between the searches looking for a turn's memory (the resolution)")
	fs.DurationVar(&cfg.Timeout, "timeout", bench.DefaultLatencyTimeout, "how long to wait for one turn's memory")
	fs.IntVar(&cfg.BackgroundTurns, "bg-turns", bench.DefaultLatencyBgTurns, "background turns per second (0: none)")
	fs.IntVar(&cfg.BackgroundSearches, "bg-searches", bench.DefaultLatencyBgSearches, "background searches per second (0: none)")
	fs.StringVar(&cfg.BatchQuiet, "batch-quiet", "", "the worker's ENGRAM_EXTRACT_BATCH_QUIET: auto, off or a duration (default: auto)")
	fs.BoolVar(&cfg.LLM, "llm", false, "extract with a chat model (an instant fake endpoint of the run)")
	fs.StringVar(&cfg.Binary, "binary", "", "engram binary to run (default: this one)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where the NATS store and the processes' logs go (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench latency", []intFlag{{"turns", cfg.Turns}, {"users", cfg.Users}, {"concurrency", cfg.Concurrency}}); err != nil {
		return err
	}
	if err := nonNegativeFlags("bench latency", []intFlag{{"bg-turns", cfg.BackgroundTurns}, {"bg-searches", cfg.BackgroundSearches}}); err != nil {
		return err
	}
	if cfg.Poll <= 0 || cfg.Timeout <= 0 {
		return usagef("bench latency: --poll and --timeout must be positive")
	}
	switch cfg.BatchQuiet {
	case "", "auto", "off":
	default:
		if d, err := time.ParseDuration(cfg.BatchQuiet); err != nil || d < 0 {
			return usagef("bench latency: --batch-quiet=%q: want auto, off or a duration such as 300ms", cfg.BatchQuiet)
		}
	}
	// 0 means the default to the config; the flags' 0 means none.
	if cfg.BackgroundTurns == 0 {
		cfg.BackgroundTurns = -1
	}
	if cfg.BackgroundSearches == 0 {
		cfg.BackgroundSearches = -1
	}
	if err := processBench("latency", cfg.DatabaseURL, &cfg.Binary, &cfg.WorkDir); err != nil {
		return err
	}
	cfg.Progress, cfg.Logger = stderr, benchLogger(stderr)
	res, err := bench.RunLatency(ctx, cfg)
	if err := printBench("latency", stdout, *asJSON, res, err, printBenchLatency); err != nil {
		return err
	}
	if res.Missing > 0 {
		return fmt.Errorf("bench latency: %d of %d turns' memories did not appear within %s", res.Missing, res.Turns, cfg.Timeout)
	}
	return nil
}

func printBenchLatency(w io.Writer, r bench.LatencyResult) {
	fmt.Fprintf(w, "turn → retrievable: %d turns of %d users (%d at a time), %s extractor, batch quiet %s, poll %.1f ms (the resolution)\n",
		r.Turns, r.Users, r.Concurrency, r.Extractor, r.BatchQuiet, r.PollMs)
	fmt.Fprintf(w, "background: %d turns, %d searches (%d errors) in %.1f s\n\n", r.BackgroundTurns, r.BackgroundSearches, r.BackgroundErrors, r.Seconds)
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "stage\tn\tp50 ms\tp95 ms\tp99 ms\tmax ms\tmean ms\t")
	row := func(name string, s bench.LatencyStats) {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", name, s.N, s.P50, s.P95, s.P99, s.Max, s.Mean)
	}
	row("202 → retrievable", r.Retrievable)
	row("  (finding search sent)", r.RetrievableSent)
	if r.RetrievableLessModel != nil {
		row("  less model time", *r.RetrievableLessModel)
		row("  model time", *r.ModelTime)
	}
	for _, h := range r.Hops {
		row("  "+h.Name, h.Stats)
	}
	tw.Flush()
	for _, h := range r.Hops {
		fmt.Fprintf(w, "  %s: %s\n", h.Name, h.What)
	}
	if r.ModelCalls > 0 {
		fmt.Fprintf(w, "model calls: %d\n", r.ModelCalls)
	}
	switch {
	case r.Missing > 0:
		fmt.Fprintf(w, "%d turns' memories did not appear\n", r.Missing)
	case r.TargetMs > 0 && r.Pass:
		fmt.Fprintf(w, "p95 %.1f ms meets the target of %.0f ms\n", r.Retrievable.P95, r.TargetMs)
	case r.TargetMs > 0:
		fmt.Fprintf(w, "p95 %.1f ms MISSES the target of %.0f ms\n", r.Retrievable.P95, r.TargetMs)
	}
}
