package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Defaults of FloodConfig: the flood of the reliability report.
const (
	DefaultFloodBatches      = 4
	DefaultFloodBatchTurns   = 1000
	DefaultFloodContentBytes = 32 << 10
)

// FloodConfig configures RunFlood.
type FloodConfig struct {
	// Binary, DatabaseURL and WorkDir are as in ChaosConfig.
	Binary, DatabaseURL, WorkDir string
	// Batches requests of BatchTurns turns of ContentBytes each, sent at once by
	// tenant "flood-…". Defaults 4, 1,000 and 32 KiB (the most a turn may hold).
	Batches, BatchTurns, ContentBytes int
	// DrainTimeout bounds the wait for the flood to be extracted after the other
	// tenant's memory appeared (RSS is sampled meanwhile). Default 10m; the result says
	// whether it drained.
	DrainTimeout time.Duration
	Progress     io.Writer
	Logger       *slog.Logger
}

// FloodResult is what RunFlood measured.
type FloodResult struct {
	FloodTurns   int           `json:"flood_turns"`
	FloodBytes   int64         `json:"flood_bytes"`
	FloodSend    time.Duration `json:"flood_send_ns"`    // until every flood batch was accepted
	FloodResent  int           `json:"flood_resent"`     // requests sent again (503 beyond the body budget)
	OtherLatency time.Duration `json:"other_latency_ns"` // the other tenant's turn accepted → its memory stored
	// OtherStored is the first part of OtherLatency: the turn accepted → stored by the
	// extractor, i.e. reached by a worker handler past the flood; the rest is its
	// extraction and resolution.
	OtherStored time.Duration `json:"other_stored_ns"`
	// FloodQueuedAtOther is how many flood turns were still waiting for extraction
	// (pending or un-acked on TURNS) when the other tenant's memory appeared.
	FloodQueuedAtOther int           `json:"flood_queued_at_other"`
	Drained            bool          `json:"drained"`
	DrainTime          time.Duration `json:"drain_ns"` // the other's memory → the flood extracted
	APIPeakRSS         int64         `json:"api_peak_rss_bytes"`
	WorkerPeakRSS      int64         `json:"worker_peak_rss_bytes"`
}

// RunFlood starts the API and the worker as processes (as RunChaos does, without
// faults), sends one tenant's flood of large turns, then one turn of another tenant,
// and measures how long that turn waits for its memory, how much of the flood was still
// queued then, and both processes' peak RSS.
func RunFlood(ctx context.Context, cfg FloodConfig) (FloodResult, error) {
	if cfg.Binary == "" || cfg.DatabaseURL == "" || cfg.WorkDir == "" {
		return FloodResult{}, errors.New("flood: the binary, a database URL and a work directory are required")
	}
	// A zero field takes its default; a negative one, or one past the API's limits, is
	// a mistake.
	limits := ingest.DefaultLimits()
	switch {
	case cfg.Batches < 0 || cfg.BatchTurns < 0 || cfg.ContentBytes < 0:
		return FloodResult{}, fmt.Errorf("flood: batches %d, batch turns %d and content bytes %d must not be negative",
			cfg.Batches, cfg.BatchTurns, cfg.ContentBytes)
	case cfg.BatchTurns > limits.MaxBatch:
		return FloodResult{}, fmt.Errorf("flood: batch turns %d exceed the API's limit of %d turns per request", cfg.BatchTurns, limits.MaxBatch)
	case cfg.ContentBytes > limits.MaxContentBytes:
		return FloodResult{}, fmt.Errorf("flood: content bytes %d exceed the API's limit of %d per turn", cfg.ContentBytes, limits.MaxContentBytes)
	case cfg.DrainTimeout < 0:
		return FloodResult{}, fmt.Errorf("flood: the drain timeout must not be negative, got %s", cfg.DrainTimeout)
	}
	cfg.Batches = orInt(cfg.Batches, DefaultFloodBatches)
	cfg.BatchTurns = orInt(cfg.BatchTurns, DefaultFloodBatchTurns)
	cfg.ContentBytes = orInt(cfg.ContentBytes, DefaultFloodContentBytes)
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 10 * time.Minute
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	progress := func(format string, args ...any) { fmt.Fprintf(cfg.Progress, "flood: "+format+"\n", args...) }
	ns, natsURL, err := startRunNATS(ctx, "flood", cfg.WorkDir)
	if err != nil {
		return FloodResult{}, err
	}
	defer ns.Shutdown()
	suffix, err := httpapi.NewToken()
	if err != nil {
		return FloodResult{}, err
	}
	floodTenant, otherTenant := "flood-"+suffix[len(suffix)-8:], "other-"+suffix[len(suffix)-8:]
	floodTok, err := httpapi.NewToken()
	if err != nil {
		return FloodResult{}, err
	}
	otherTok, err := httpapi.NewToken()
	if err != nil {
		return FloodResult{}, err
	}
	addr, err := freeAddr()
	if err != nil {
		return FloodResult{}, err
	}
	env := []string{
		"ENGRAM_DATABASE_URL=" + cfg.DatabaseURL, "ENGRAM_NATS_URL=" + natsURL,
		"ENGRAM_TOKENS=" + floodTenant + "=" + httpapi.HashToken(floodTok) + "," + otherTenant + "=" + httpapi.HashToken(otherTok),
		"ENGRAM_CONSOLIDATE_CRON=off", "ENGRAM_WORKER_HTTP_ADDR=off", "ENGRAM_LOG_LEVEL=warn",
	}
	logf := func(err error) { cfg.Logger.Warn("flood: a process exited", "err", err) }
	api := &process{name: "api", bin: cfg.Binary, args: []string{"serve", "--workers=false", "--http-addr", addr},
		env: append(append([]string(nil), env...), "ENGRAM_DATA_DIR="+filepath.Join(cfg.WorkDir, "api")),
		log: filepath.Join(cfg.WorkDir, "api.log"), onExit: func(_ *process, err error) { logf(err) }}
	worker := &process{name: "worker", bin: cfg.Binary, args: []string{"worker", "all"},
		env: append(append([]string(nil), env...), "ENGRAM_DATA_DIR="+filepath.Join(cfg.WorkDir, "worker")),
		log: filepath.Join(cfg.WorkDir, "worker.log"), onExit: func(_ *process, err error) { logf(err) }}
	defer api.stop()
	defer worker.stop()
	if err := api.start(); err != nil {
		return FloodResult{}, err
	}
	if err := waitHealthy(ctx, "http://"+addr+"/healthz", time.Minute); err != nil {
		return FloodResult{}, fmt.Errorf("flood: the API did not come up (see %s): %w", api.log, err)
	}
	if err := worker.start(); err != nil {
		return FloodResult{}, err
	}
	pool, err := memory.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return FloodResult{}, fmt.Errorf("flood: %w", err)
	}
	defer pool.Close()
	store := memory.NewStore(pool)
	nc, err := nats.Connect(natsURL, nats.Name("engram-flood"), nats.MaxReconnects(-1))
	if err != nil {
		return FloodResult{}, fmt.Errorf("flood: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return FloodResult{}, err
	}

	var res FloodResult
	res.FloodTurns = cfg.Batches * cfg.BatchTurns
	base := "I prefer the quiet coach on the morning train. "
	filler := strings.Repeat("build step 42 finished with status ok, cache hit, 0 warnings; ", cfg.ContentBytes/62+1)
	content := (base + filler)[:cfg.ContentBytes]
	url := "http://" + addr
	floodC := client.New(url, floodTok, client.WithRetry(client.Retry{MaxElapsedTime: 10 * time.Minute}))
	progress("sending %d batches of %d turns of %d bytes (tenant %s)", cfg.Batches, cfg.BatchTurns, cfg.ContentBytes, floodTenant)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	at := time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)
	for b := range cfg.Batches {
		wg.Go(func() {
			turns := make([]client.Turn, cfg.BatchTurns)
			for i := range turns {
				n := b*cfg.BatchTurns + i
				turns[i] = client.Turn{TurnID: fmt.Sprintf("flood-%06d", n), UserID: fmt.Sprintf("fu-%03d", n%50),
					SessionID: fmt.Sprintf("fs-%03d", n%50), Role: client.RoleUser,
					OccurredAt: at.Add(time.Duration(n) * time.Second), Content: content}
			}
			for {
				out, err := floodC.AddTurns(ctx, turns...)
				if err == nil && out.Accepted+out.Duplicates == len(turns) {
					return
				}
				mu.Lock()
				res.FloodResent++
				if ctx.Err() != nil {
					sendErr = ctx.Err()
				}
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
				time.Sleep(time.Second)
			}
		})
	}
	wg.Wait()
	if sendErr != nil {
		return res, fmt.Errorf("flood: sending: %w", sendErr)
	}
	res.FloodSend = time.Since(start)
	res.FloodBytes = int64(res.FloodTurns) * int64(cfg.ContentBytes)
	progress("flood accepted in %s (%d requests resent); sending the other tenant's turn", res.FloodSend.Round(time.Millisecond), res.FloodResent)

	otherC := client.New(url, otherTok)
	if _, err := otherC.AddTurns(ctx, client.Turn{TurnID: "other-1", UserID: "ou-1", SessionID: "os-1", Role: client.RoleUser,
		OccurredAt: at, Content: "I prefer aisle seats on long flights."}); err != nil {
		return res, fmt.Errorf("flood: sending the other tenant's turn: %w", err)
	}
	sent := time.Now()
	for {
		if res.OtherStored == 0 {
			turns, err := store.ConsoleTurns(ctx, otherTenant, []string{"other-1"})
			if err != nil {
				return res, err
			}
			if len(turns) > 0 {
				res.OtherStored = time.Since(sent)
			}
		}
		users, err := store.ConsoleUsers(ctx, otherTenant)
		if err != nil {
			return res, err
		}
		if len(users) > 0 {
			res.OtherLatency = time.Since(sent)
			if res.OtherStored == 0 { // stored and extracted between two polls
				res.OtherStored = res.OtherLatency
			}
			break
		}
		if time.Since(sent) > cfg.DrainTimeout {
			return res, fmt.Errorf("flood: the other tenant's memory did not appear within %s", cfg.DrainTimeout)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	queued := func() int {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cons, err := js.Consumer(rctx, streams.TurnsStream, streams.ExtractorConsumer)
		if err != nil {
			return -1
		}
		info, err := cons.Info(rctx)
		if err != nil {
			return -1
		}
		return int(info.NumPending) + info.NumAckPending
	}
	res.FloodQueuedAtOther = queued()
	progress("the other tenant's turn stored after %s, its memory after %s, with %d flood turns still queued; waiting for the flood to drain",
		res.OtherStored.Round(time.Millisecond), res.OtherLatency.Round(time.Millisecond), res.FloodQueuedAtOther)
	drainStart := time.Now()
	for last := time.Now(); time.Since(drainStart) < cfg.DrainTimeout; {
		if q := queued(); q == 0 {
			res.Drained, res.DrainTime = true, time.Since(drainStart)
			break
		} else if time.Since(last) > 15*time.Second {
			progress("%d flood turns queued", q)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	res.APIPeakRSS, res.WorkerPeakRSS = api.peakRSS(), worker.peakRSS()
	return res, nil
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
