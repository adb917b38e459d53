package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/natsserver"
	"github.com/engramhq/engram/internal/readiness"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
)

// TestMain runs the package's tests and examples with a whole engram in process (what
// `engram dev` runs: PostgreSQL, embedded JetStream, the offline extractor, the
// resolver, the retriever, working memory and the lifecycle operations), reachable
// at $ENGRAM_URL with the token $ENGRAM_TOKEN, so the examples are executed as
// written against the real server.
func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	url, token, stop, err := startEngram(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting engram:", err)
		os.Exit(1)
	}
	os.Setenv("ENGRAM_URL", url)
	os.Setenv("ENGRAM_TOKEN", token)
	code := m.Run()
	cancel()
	stop()
	os.Exit(code)
}

// startEngram assembles engram's services and workers as cmd/engram's pipeline does,
// with the hashing embedder in place of a model.
func startEngram(ctx context.Context) (url, token string, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	quiet := slog.New(slog.DiscardHandler)
	dbURL, drop, err := pgtest.NewDatabase(ctx, "client")
	if err != nil {
		return "", "", nil, err
	}
	stops = append(stops, drop)
	pool, err := memory.Connect(ctx, dbURL, 8)
	if err != nil {
		return "", "", nil, err
	}
	stops = append(stops, pool.Close)
	store := memory.NewStore(pool)
	dir, err := os.MkdirTemp("", "engram-client-")
	if err != nil {
		return "", "", nil, err
	}
	stops = append(stops, func() { os.RemoveAll(dir) })
	ns, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
	if err != nil {
		return "", "", nil, err
	}
	stops = append(stops, ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return "", "", nil, err
	}
	stops = append(stops, nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		return "", "", nil, err
	}
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		return "", "", nil, err
	}
	red, err := redact.New(redact.Config{})
	if err != nil {
		return "", "", nil, err
	}
	in, err := ingest.NewService(ingest.Config{Limits: ingest.DefaultLimits(), Redactor: red, Publisher: js, Logger: quiet})
	if err != nil {
		return "", "", nil, err
	}
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		return "", "", nil, err
	}
	ep, err := extractor.NewPipeline(extractor.PipelineConfig{Store: store, Publisher: js, Extractor: extractor.NewOffline(),
		Redactor: red, Logger: quiet})
	if err != nil {
		return "", "", nil, err
	}
	extract, err := streams.NewWorker(js, ep.WorkerConfig(streams.WorkerConfig{Logger: quiet}), ep.Handle)
	if err != nil {
		return "", "", nil, err
	}
	res := consolidator.NewResolver(store, emb, nil, consolidator.DefaultResolverConfig(), quiet)
	resolve, err := consolidator.NewResolverWorker(js, res, consolidator.WorkerConfig{Logger: quiet}, nil)
	if err != nil {
		return "", "", nil, err
	}
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{Memory: true})
	if err != nil {
		return "", "", nil, err
	}
	rcfg := retriever.DefaultConfig()
	rcfg.Tasks = tasks
	retr, err := retriever.NewRetriever(store, emb, rcfg, quiet)
	if err != nil {
		return "", "", nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 3)
	for _, run := range []func(context.Context) error{extract.Run, resolve.Run, retr.Run} {
		go func() { _ = run(wctx); done <- struct{}{} }()
	}
	stops = append(stops, func() {
		cancel()
		for range 3 {
			<-done
		}
	})
	token, err = httpapi.NewToken()
	if err != nil {
		return "", "", nil, err
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "example", Name: "docs", SHA256: httpapi.HashToken(token)}})
	if err != nil {
		return "", "", nil, err
	}
	ready := readiness.New(readiness.Config{Logger: quiet},
		readiness.Check{Name: "postgres", Required: true, Probe: func(ctx context.Context) error { return pool.Ping(ctx) }},
		readiness.Check{Name: "nats", Required: true, Probe: func(ctx context.Context) error { _, err := js.AccountInfo(ctx); return err }})
	m := metrics.New(quiet)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Tokens: tokens, Turns: in, Memories: lifecycle.NewOps(store, emb),
		Lifecycle: lifecycle.NewLifecycle(store, js, tasks, quiet), Retriever: retr, Tasks: tasks, Health: ready,
		Metrics: m.Handler(), Observer: m, Logger: quiet}))
	stops = append(stops, srv.Close)
	return srv.URL, token, stop, nil
}

// waitFor polls until ok reports true: extraction is asynchronous, so what a turn
// says becomes a memory a moment after AddTurns returns.
func waitFor(ctx context.Context, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for extraction: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
