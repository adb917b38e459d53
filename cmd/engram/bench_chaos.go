package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/bench"
)

const benchChaosUsage = `Usage: engram bench chaos [flags]

Run engram as real processes (this binary: "serve --workers=false" and "worker all")
against a private NATS server, PostgreSQL (ENGRAM_DATABASE_URL) behind a proxy the run
cuts, and an embedding endpoint that turns faulty; send --turns turns, one user each
stating one preference, while injecting, in order and spread over the sending:

  kill-worker  SIGKILL the worker process and start it again
  postgres     cut PostgreSQL for --outage (connections refused and broken)
  nats         shut NATS down for --nats-down, restart it on the same store
  model        the embedding endpoint answers 500, 429, wrong dims or nothing for --outage

then wait for the workers to drain and count: every turn stored exactly once, every
user with exactly one memory, no dead letter. Exits non-zero when anything was lost,
duplicated or dead-lettered. Use a private database: the run adds a tenant
"chaos-<random>".
`

// benchChaosCommand runs "engram bench chaos". args excludes "bench chaos".
func benchChaosCommand(ctx context.Context, dbURL string, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench chaos", benchChaosUsage, stderr)
	cfg := bench.ChaosConfig{DatabaseURL: dbURL}
	fs.IntVar(&cfg.Turns, "turns", bench.DefaultChaosTurns, "turns to send")
	fs.DurationVar(&cfg.Outage, "outage", bench.DefaultChaosOutage, "how long PostgreSQL is cut and the model endpoint faulty")
	fs.DurationVar(&cfg.NATSDown, "nats-down", bench.DefaultChaosNATSDown, "how long NATS is down")
	faults := fs.String("faults", strings.Join(bench.ChaosFaults, ","), "faults to inject, in order (a name may repeat; empty: none)")
	fs.StringVar(&cfg.Binary, "binary", "", "engram binary to run (default: this one)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where the NATS store and the processes' logs go (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if cfg.Turns <= 0 {
		return usagef("bench chaos: --turns must be positive, got %d", cfg.Turns)
	}
	if err := positiveDurations("bench chaos", []durationFlag{{"outage", cfg.Outage}, {"nats-down", cfg.NATSDown}}); err != nil {
		return err
	}
	// An empty --faults injects none; a name must be a fault's, and an empty entry
	// ("nats,,model") is a typo, not a fault.
	cfg.Faults = []string{}
	if strings.TrimSpace(*faults) != "" {
		for f := range strings.SplitSeq(*faults, ",") {
			switch f = strings.TrimSpace(f); {
			case f == "":
				return usagef("bench chaos: --faults: an empty entry in %q", *faults)
			case !slices.Contains(bench.ChaosFaults, f):
				return usagef("bench chaos: --faults: unknown fault %q (want %s)", f, strings.Join(bench.ChaosFaults, ", "))
			}
			cfg.Faults = append(cfg.Faults, f)
		}
	}
	// Everything is checked: only now is the work directory made.
	if err := processBench("chaos", cfg.DatabaseURL, &cfg.Binary, &cfg.WorkDir); err != nil {
		return err
	}
	cfg.Progress, cfg.Logger = stderr, benchLogger(stderr)
	res, err := bench.RunChaos(ctx, cfg)
	if err := printBench("chaos", stdout, *asJSON, res, err, printBenchChaos); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("bench chaos: %d lost, %d duplicated, %d dead-lettered, %d of %d turns stored",
			res.Lost, res.Duplicated, res.DeadLetters, res.StoredTurns, res.Turns)
	}
	return nil
}

func printBenchChaos(w io.Writer, r bench.ChaosResult) {
	fmt.Fprintf(w, "chaos run: %d turns (tenant %s), sent in %s, drained %s later\n",
		r.Turns, r.Tenant, r.SendTime.Round(time.Millisecond), r.DrainTime.Round(time.Millisecond))
	for _, f := range r.Faults {
		fmt.Fprintf(w, "  fault %-12s after %6d turns, %s\n", f.Name, f.AfterSent, f.Down.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "accepted %d (%d requests resent), stored %d turn rows (%d distinct), %d memories for %d users\n",
		r.Accepted, r.Resent, r.StoredTurns, r.DistinctTurns, r.Memories, r.UsersWithMemory)
	fmt.Fprintf(w, "lost %d, duplicated %d, dead letters %d; model requests %d (%d faulty); unexpected restarts %d\n",
		r.Lost, r.Duplicated, r.DeadLetters, r.ModelRequests, r.ModelFaults, r.Restarts)
	fmt.Fprintf(w, "peak RSS: API %.0f MB, worker %.0f MB\n", float64(r.APIPeakRSS)/(1<<20), float64(r.WorkerPeakRSS)/(1<<20))
	verdict := "OK: every turn stored once, one memory per user, nothing dead-lettered"
	if !r.OK {
		verdict = "FAILED"
	}
	fmt.Fprintln(w, verdict)
}

const benchFloodUsage = `Usage: engram bench flood [flags]

Run engram as real processes (as bench chaos does, without faults) against
ENGRAM_DATABASE_URL; send one tenant's flood (--batches requests of --batch-turns turns
of --content-bytes each, at once), then one turn of another tenant; report how long
that turn waited for its memory, how many flood turns were still queued then, how long
the flood took to extract, and the API's and the worker's peak RSS. --binary runs
another engram build (e.g. an older one, for a baseline). Use a private database.
`

// benchFloodCommand runs "engram bench flood". args excludes "bench flood".
func benchFloodCommand(ctx context.Context, dbURL string, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench flood", benchFloodUsage, stderr)
	cfg := bench.FloodConfig{DatabaseURL: dbURL}
	fs.IntVar(&cfg.Batches, "batches", bench.DefaultFloodBatches, "concurrent flood requests")
	fs.IntVar(&cfg.BatchTurns, "batch-turns", bench.DefaultFloodBatchTurns, "turns per flood request (at most 1000)")
	fs.IntVar(&cfg.ContentBytes, "content-bytes", bench.DefaultFloodContentBytes, "bytes of content per flood turn (at most 32768)")
	fs.DurationVar(&cfg.DrainTimeout, "drain-timeout", 10*time.Minute, "how long to wait for the flood to be extracted")
	fs.StringVar(&cfg.Binary, "binary", "", "engram binary to run (default: this one)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where the NATS store and the processes' logs go (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench flood", []intFlag{{"batches", cfg.Batches}, {"batch-turns", cfg.BatchTurns}, {"content-bytes", cfg.ContentBytes}}); err != nil {
		return err
	}
	limits := ingest.DefaultLimits()
	if err := atMostFlags("bench flood", []limitFlag{{"batch-turns", cfg.BatchTurns, limits.MaxBatch, "API's limit of turns per request"},
		{"content-bytes", cfg.ContentBytes, limits.MaxContentBytes, "API's limit of content bytes per turn"}}); err != nil {
		return err
	}
	if err := positiveDurations("bench flood", []durationFlag{{"drain-timeout", cfg.DrainTimeout}}); err != nil {
		return err
	}
	if err := processBench("flood", cfg.DatabaseURL, &cfg.Binary, &cfg.WorkDir); err != nil {
		return err
	}
	cfg.Progress, cfg.Logger = stderr, benchLogger(stderr)
	res, err := bench.RunFlood(ctx, cfg)
	return printBench("flood", stdout, *asJSON, res, err, func(w io.Writer, r bench.FloodResult) { printBenchFlood(w, r, cfg.DrainTimeout) })
}

func printBenchFlood(stdout io.Writer, res bench.FloodResult, drainTimeout time.Duration) {
	fmt.Fprintf(stdout, "flood: %d turns, %.0f MB, accepted in %s (%d requests resent)\n",
		res.FloodTurns, float64(res.FloodBytes)/(1<<20), res.FloodSend.Round(time.Millisecond), res.FloodResent)
	fmt.Fprintf(stdout, "other tenant's turn → memory: %s (turn stored after %s), with %d flood turns still queued\n",
		res.OtherLatency.Round(time.Millisecond), res.OtherStored.Round(time.Millisecond), res.FloodQueuedAtOther)
	if res.Drained {
		fmt.Fprintf(stdout, "flood extracted %s after that\n", res.DrainTime.Round(time.Millisecond))
	} else {
		fmt.Fprintf(stdout, "flood NOT extracted within %s\n", drainTimeout)
	}
	fmt.Fprintf(stdout, "peak RSS: API %.0f MB, worker %.0f MB\n", float64(res.APIPeakRSS)/(1<<20), float64(res.WorkerPeakRSS)/(1<<20))
}

// benchLogger is a process benchmark's logger: warnings and errors on stderr, beside
// its progress lines.
func benchLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// intFlag is a count flag's name and value, for positiveFlags and nonNegativeFlags.
type intFlag struct {
	name string
	v    int
}

// positiveFlags is a usage error naming the first of flags that is not positive.
func positiveFlags(cmd string, flags []intFlag) error {
	for _, f := range flags {
		if f.v <= 0 {
			return usagef("%s: --%s must be positive, got %d", cmd, f.name, f.v)
		}
	}
	return nil
}

// nonNegativeFlags is a usage error naming the first of flags that is negative.
func nonNegativeFlags(cmd string, flags []intFlag) error {
	for _, f := range flags {
		if f.v < 0 {
			return usagef("%s: --%s must not be negative, got %d", cmd, f.name, f.v)
		}
	}
	return nil
}

// limitFlag is a count flag's name, value and the most it may be (what the limit is,
// for the message), for atMostFlags.
type limitFlag struct {
	name string
	v    int
	max  int
	what string
}

// atMostFlags is a usage error naming the first of flags above its limit.
func atMostFlags(cmd string, flags []limitFlag) error {
	for _, f := range flags {
		if f.v > f.max {
			return usagef("%s: --%s must be at most %d (the %s), got %d", cmd, f.name, f.max, f.what, f.v)
		}
	}
	return nil
}

// durationFlag is a duration flag's name and value, for positiveDurations.
type durationFlag struct {
	name string
	v    time.Duration
}

// positiveDurations is a usage error naming the first of flags that is not positive.
func positiveDurations(cmd string, flags []durationFlag) error {
	for _, f := range flags {
		if f.v <= 0 {
			return usagef("%s: --%s must be positive, got %s", cmd, f.name, f.v)
		}
	}
	return nil
}

// printBench reports a benchmark's run: its error, or its result on stdout as JSON or
// through print.
func printBench[R any](name string, stdout io.Writer, asJSON bool, res R, err error, print func(io.Writer, R)) error {
	if err != nil {
		return fmt.Errorf("bench %s: %w", name, err)
	}
	if asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return fmt.Errorf("bench %s: writing the result: %w", name, err)
		}
		return nil
	}
	print(stdout, res)
	return nil
}

// processBench checks and completes what a benchmark of real engram processes needs: a
// private database, the binary to run (this one by default) and a work directory.
func processBench(name, databaseURL string, binary, workDir *string) error {
	if databaseURL == "" {
		return usagef("bench %s: set ENGRAM_DATABASE_URL to a private database", name)
	}
	if *binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench %s: finding this binary: %w", name, err)
		}
		*binary = exe
	}
	if *workDir == "" {
		dir, err := os.MkdirTemp("", "engram-"+name+"-")
		if err != nil {
			return fmt.Errorf("bench %s: making a work directory: %w", name, err)
		}
		*workDir = dir
	}
	return nil
}
