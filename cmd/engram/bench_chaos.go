package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

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
	fs := flag.NewFlagSet("engram bench chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchChaosUsage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	cfg := bench.ChaosConfig{DatabaseURL: dbURL}
	fs.IntVar(&cfg.Turns, "turns", bench.DefaultChaosTurns, "turns to send")
	fs.DurationVar(&cfg.Outage, "outage", bench.DefaultChaosOutage, "how long PostgreSQL is cut and the model endpoint faulty")
	fs.DurationVar(&cfg.NATSDown, "nats-down", bench.DefaultChaosNATSDown, "how long NATS is down")
	faults := fs.String("faults", strings.Join(bench.ChaosFaults, ","), "faults to inject, in order (a name may repeat)")
	fs.StringVar(&cfg.Binary, "binary", "", "engram binary to run (default: this one)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where the NATS store and the processes' logs go (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("bench chaos: %w", err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("bench chaos: unexpected argument %q", fs.Arg(0))
	}
	if cfg.Turns <= 0 {
		return fmt.Errorf("bench chaos: --turns must be positive, got %d", cfg.Turns)
	}
	if cfg.DatabaseURL == "" {
		return errors.New("bench chaos: set ENGRAM_DATABASE_URL to a private database")
	}
	cfg.Faults = nil
	for f := range strings.SplitSeq(*faults, ",") {
		if f = strings.TrimSpace(f); f != "" {
			cfg.Faults = append(cfg.Faults, f)
		}
	}
	if cfg.Faults == nil {
		cfg.Faults = []string{}
	}
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench chaos: finding this binary: %w", err)
		}
		cfg.Binary = exe
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "engram-chaos-")
		if err != nil {
			return fmt.Errorf("bench chaos: %w", err)
		}
		cfg.WorkDir = dir
	}
	cfg.Progress = stderr
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err := bench.RunChaos(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench chaos: %w", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return fmt.Errorf("bench chaos: writing the result: %w", err)
		}
	} else {
		printBenchChaos(stdout, res)
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
