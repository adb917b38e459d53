package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
)

// serverOptions says how runServer differs between `engram dev` and `engram serve`.
type serverOptions struct {
	dev     bool // a development token (serve and dev both run the embedded NATS on NATSPort)
	workers bool // run the pipeline workers in this process
}

func runDev(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "dev", "dev [--http-addr :8080]")
	addr := fs.String("http-addr", env.Config.HTTPAddr, "HTTP listen address (ENGRAM_HTTP_ADDR)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkListenAddr(*addr); err != nil {
		return err
	}
	env.Config.HTTPAddr = *addr
	return runServer(ctx, env, serverOptions{dev: true, workers: true})
}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "serve [--http-addr :8080] [--workers=true]")
	addr := fs.String("http-addr", env.Config.HTTPAddr, "HTTP listen address (ENGRAM_HTTP_ADDR)")
	workers := fs.Bool("workers", true, "also run the extractor and resolver workers in this process")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkListenAddr(*addr); err != nil {
		return err
	}
	env.Config.HTTPAddr = *addr
	return runServer(ctx, env, serverOptions{workers: *workers})
}

// checkListenAddr checks --http-addr's form (host:port, the port a number) before
// serve waits for its dependencies, which may take minutes; only the listen itself can
// tell whether the address is free.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return usagef("--http-addr %q: want [host]:port, e.g. :8080 (%v)", addr, err)
	}
	return nil
}

func runWorker(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "worker", "worker (extractor|resolver|all)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one worker: extractor, resolver or all")
	}
	which := pos[0]
	switch which {
	case "extractor", "resolver", "all":
	default:
		return usagef("unknown worker %q: want extractor, resolver or all", which)
	}
	app := env.newApp()
	app.WaitDeps = true // a worker started before its database or NATS waits for them
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	if err := app.openNATS(ctx, false); err != nil {
		return err
	}
	p, err := newPipeline(ctx, app)
	if err != nil {
		return err
	}
	defer p.close()
	var wg, opsWG sync.WaitGroup
	errs := make(chan error, 4)
	stopOps, err := p.serveOps(ctx, &opsWG, errs)
	if err != nil {
		return err
	}
	if which == "extractor" || which == "all" {
		wg.Go(func() { errs <- p.runExtractor(ctx) })
	}
	if which == "resolver" || which == "all" {
		wg.Go(func() { errs <- p.runResolver(ctx) })
	}
	wg.Wait()
	stopOps()
	opsWG.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return nil
}

// noTokens is serve's error when no API token is configured.
func noTokens() error {
	return errors.New("no API tokens configured: set ENGRAM_TOKENS or ENGRAM_TOKENS_FILE (create one with `engram token --tenant NAME`)")
}

// runServer runs the API and (optionally) the workers until ctx ends.
func runServer(ctx context.Context, env *Env, opts serverOptions) error {
	app := env.newApp()
	app.WaitDeps = true
	defer app.Close()
	// The tokens come first: a missing file or no token at all is known before the
	// wait for PostgreSQL and NATS, which would otherwise hide it.
	tokens, err := app.tokens(ctx)
	if err != nil {
		return err
	}
	if !opts.dev && tokens.Len() == 0 {
		return noTokens()
	}
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	emb, err := app.embedder()
	if err != nil {
		return err
	}
	app.trackCoverage(ctx, emb)
	// serve and dev own the local store's NATS server (on ENGRAM_NATS_PORT), so
	// that every other command joins it rather than opening the store a second time.
	if err := app.openNATS(ctx, true); err != nil {
		return err
	}
	if app.Embedded != nil {
		app.Logger.Info("embedded NATS server", "url", app.Embedded.ClientURL(), "store", filepath.Join(app.Config.DataDir, "nats"))
	}
	if opts.dev {
		tok, err := app.devToken("dev")
		if err != nil {
			return err
		}
		if err := tokens.Add(httpapi.TokenEntry{Tenant: "dev", Name: "dev", SHA256: httpapi.HashToken(tok)}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "engram dev: tenant \"dev\", token %s (saved in %s/dev-token)\n", tok, app.Config.DataDir)
		fmt.Fprintf(env.Stdout, "engram dev: NATS at %s\n", app.NC.ConnectedUrl())
	}
	if tokens.Len() == 0 {
		return noTokens()
	}
	n, err := startNode(ctx, app, tokens, opts.workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "engram: HTTP API on %s (health: /healthz, console: /console/)\n", n.URL)
	stopCoverage := app.runCoverage(ctx, emb)
	stopHNSW := app.runHNSW(ctx) // large owners' vector indexes (index.go)
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-n.failed:
	}
	env.Logger.Info("shutting down")
	stopCoverage()
	stopHNSW()
	n.Stop()
	env.Logger.Info("stopped")
	return runErr
}

// node is a running engram: the HTTP API on a listener and the pipeline workers.
type node struct {
	URL    string
	app    *App
	p      *pipeline
	srv    *http.Server
	failed chan error

	stopWorkers context.CancelFunc
	wg          sync.WaitGroup
	stopOnce    sync.Once
}

// startNode serves the API on app.Config.HTTPAddr and runs the workers when asked.
// It returns once the listener is open.
func startNode(ctx context.Context, app *App, tokens *httpapi.Tokens, workers bool) (*node, error) {
	p, err := newPipeline(ctx, app)
	if err != nil {
		return nil, err
	}
	n := &node{app: app, p: p, failed: make(chan error, 8)}
	// Workers outlive a cancelled request context: they stop only through Stop, which
	// lets in-flight messages finish and be acked.
	workerCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopWorkers = stop
	n.wg.Go(func() { _ = p.runMemoryGauge(workerCtx) })
	if workers {
		for _, w := range p.workers() {
			n.wg.Go(func() {
				if err := w(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
					n.failed <- fmt.Errorf("worker: %w", err)
				}
			})
		}
	}
	h, err := p.edge(tokens, n)
	if err != nil {
		n.Stop()
		return nil, err
	}
	n.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", app.Config.HTTPAddr)
	if err != nil {
		n.Stop()
		return nil, fmt.Errorf("listening on %s (ENGRAM_HTTP_ADDR): %w", app.Config.HTTPAddr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	n.URL = "http://" + net.JoinHostPort(host, port)
	go func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.failed <- fmt.Errorf("HTTP server: %w", err)
		}
	}()
	return n, nil
}

// Check is the node's readiness (GET /readyz): PostgreSQL answers, NATS and JetStream
// are connected, and the configured model endpoints are reachable (see App.readiness).
func (n *node) Check(ctx context.Context) (map[string]string, bool) {
	return n.p.ready.Check(ctx)
}

// serveOps serves /healthz, /readyz and /metrics of a worker process on
// ENGRAM_WORKER_HTTP_ADDR, and refreshes the memories gauge, until the returned stop
// is called. A failure to serve is sent on errs.
func (p *pipeline) serveOps(ctx context.Context, wg *sync.WaitGroup, errs chan<- error) (stop func(), err error) {
	gctx, cancel := context.WithCancel(ctx)
	wg.Go(func() { _ = p.runMemoryGauge(gctx) })
	addr := p.app.Config.WorkerHTTPAddr
	if addr == "off" {
		return cancel, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("listening on %s (ENGRAM_WORKER_HTTP_ADDR): %w", addr, err)
	}
	srv := &http.Server{Handler: p.opsEdge(), ReadHeaderTimeout: 10 * time.Second}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("HTTP server: %w", err)
		}
	})
	p.app.Logger.Info("worker metrics and probes", "addr", ln.Addr().String())
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			sctx, done := context.WithTimeout(context.Background(), 5*time.Second)
			defer done()
			_ = srv.Shutdown(sctx)
		})
	}, nil
}

// Stop shuts down in order: stop taking requests, drain the workers (in-flight
// messages finish and are acked), then release the pipeline.
func (n *node) Stop() {
	n.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if n.srv != nil {
			if err := n.srv.Shutdown(ctx); err != nil {
				n.app.Logger.Warn("HTTP shutdown", "err", err)
			}
		}
		n.stopWorkers()
		n.wg.Wait()
		n.p.close()
	})
}

// stage is one step of the pipeline: a stream and the worker's consumer of it.
type stage struct{ stream, consumer string }

// pipelineStages are the pipeline's steps in order: turns to the extractor, candidates
// to the resolver.
func pipelineStages() []stage {
	return []stage{
		{streams.TurnsStream, streams.ExtractorConsumer},
		{streams.CandidatesStream, streams.ResolverConsumer},
	}
}

// waitDrained blocks until the extractor and the resolver have nothing pending or
// unacknowledged, seen twice in a row (a candidate published by the extractor lands
// on CANDIDATES before the turn is acked, so checking in pipeline order is enough).
func waitDrained(ctx context.Context, js jetstream.JetStream) error {
	quiet := 0
	for {
		idle := true
		for _, s := range pipelineStages() {
			// Each read has its own short timeout: on a cluster a request can go
			// unanswered while a leader moves, and would otherwise wait for ctx.
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			info, err := consumerInfo(rctx, js, s.stream, s.consumer)
			cancel()
			if errors.Is(err, jetstream.ErrConsumerNotFound) {
				idle = false // the worker has not created its consumer yet
				continue
			}
			// Unanswered, or answered "temporarily unavailable" (503) while a restarted
			// node's groups elect their leaders: ask again, as the workers do.
			if err != nil && ctx.Err() == nil && streams.IsOutage(err) {
				idle = false
				continue
			}
			if err != nil {
				return fmt.Errorf("reading consumer %s: %w", s.consumer, err)
			}
			if info.NumPending > 0 || info.NumAckPending > 0 || info.NumRedelivered > 0 {
				idle = false
			}
		}
		if idle {
			quiet++
			if quiet >= 2 {
				return nil
			}
		} else {
			quiet = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the pipeline to drain: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func consumerInfo(ctx context.Context, js jetstream.JetStream, stream, consumer string) (*jetstream.ConsumerInfo, error) {
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return nil, err
	}
	return c.Info(ctx)
}
