package main

import (
	"context"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/bench"
)

const benchIngestUsage = `Usage: engram bench ingest [flags]

Measure POST /v1/turns (token auth, validation, redaction, durable JetStream ack)
against raw JetStream async publishing of the same payloads, and report both
rates and their ratio (target >= 0.25). The turns go to a throw-away tenant
"bench-<random>" and are purged afterwards unless --keep; run it against a
development server, since workers consuming TURNS would process them.
`

// benchIngestCommand runs "engram bench ingest". args excludes "bench ingest".
// Progress goes to stderr, the report to stdout.
func benchIngestCommand(ctx context.Context, js jetstream.JetStream, args []string, stdout, stderr io.Writer) error {
	fs := usageFlagSet("engram bench ingest", benchIngestUsage, stderr)
	var cfg bench.IngestConfig
	fs.IntVar(&cfg.Turns, "turns", bench.DefaultIngestTurns, "turns to send through each path")
	fs.IntVar(&cfg.Batch, "batch", bench.DefaultIngestBatch, "turns per request (at most 1000)")
	fs.IntVar(&cfg.Concurrency, "concurrency", bench.DefaultIngestConcurrency, "concurrent HTTP clients (and raw publishers)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the benchmark's turns in TURNS instead of purging them")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := positiveFlags("bench ingest", []intFlag{{"turns", cfg.Turns}, {"batch", cfg.Batch}, {"concurrency", cfg.Concurrency}}); err != nil {
		return err
	}
	if err := atMostFlags("bench ingest", []limitFlag{{"batch", cfg.Batch, ingest.DefaultLimits().MaxBatch, "API's limit of turns per request"}}); err != nil {
		return err
	}
	if preflight(ctx) {
		return nil
	}
	cfg.Progress = stderr
	cfg.Logger = benchLogger(stderr)

	res, err := bench.RunIngest(ctx, js, cfg)
	return printBench("ingest", stdout, *asJSON, res, err, printBenchIngest)
}

func printBenchIngest(w io.Writer, r bench.IngestResult) {
	fmt.Fprintf(w, "ingest benchmark: %d turns, batches of %d, concurrency %d, avg payload %d B\n\n",
		r.Turns, r.Batch, r.Concurrency, r.AvgPayloadBytes)
	tw := newTabWriter(w, true)
	fmt.Fprintln(tw, "path\tcount\tseconds\tper second\tbatch p50 ms\tbatch p99 ms\t")
	for _, row := range []struct {
		name string
		p    bench.IngestPhase
	}{{"POST /v1/turns (durable ack)", r.HTTP}, {"raw JetStream async publish", r.Raw}} {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%.1f\t%.1f\t\n",
			row.name, row.p.Count, row.p.Seconds, row.p.PerSecond, row.p.BatchP50Ms, row.p.BatchP99Ms)
	}
	tw.Flush()
	verdict := "meets the target"
	if !r.Pass {
		verdict = "BELOW the target"
	}
	fmt.Fprintf(w, "\nratio HTTP/raw %.2f (target >= %.2f): %s\n", r.Ratio, r.Target, verdict)
}
