package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/engramhq/engram/ingest/httpapi"
)

// serverOptions says how runServer differs between `engram dev` and `engram serve`.
type serverOptions struct {
	dev     bool // embedded NATS on NATSPort, a development token, migrations applied
	workers bool // run the pipeline workers in this process
	http    bool // serve the HTTP API
}

func runDev(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "dev", "dev [--http-addr :8080]")
	addr := fs.String("http-addr", env.Config.HTTPAddr, "HTTP listen address (ENGRAM_HTTP_ADDR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	env.Config.HTTPAddr = *addr
	return runServer(ctx, env, serverOptions{dev: true, workers: true, http: true})
}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "serve [--http-addr :8080] [--workers=true] [--migrate=true]")
	addr := fs.String("http-addr", env.Config.HTTPAddr, "HTTP listen address (ENGRAM_HTTP_ADDR)")
	workers := fs.Bool("workers", true, "also run the extractor and resolver workers in this process")
	if err := fs.Parse(args); err != nil {
		return err
	}
	env.Config.HTTPAddr = *addr
	return runServer(ctx, env, serverOptions{workers: *workers, http: true})
}

func runWorker(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "worker", "worker (extractor|resolver|all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one worker: extractor, resolver or all")
	}
	which := fs.Arg(0)
	switch which {
	case "extractor", "resolver", "all":
	default:
		return usagef("unknown worker %q: want extractor, resolver or all", which)
	}
	app := env.newApp()
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
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	if which == "extractor" || which == "all" {
		wg.Go(func() { errs <- p.runExtractor(ctx) })
	}
	if which == "resolver" || which == "all" {
		wg.Go(func() { errs <- p.runResolver(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return nil
}

// runServer runs the API and (optionally) the workers until ctx ends, then shuts
// down in order: stop taking requests, drain the workers, close connections.
func runServer(ctx context.Context, env *Env, opts serverOptions) error {
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	if err := app.openNATS(ctx, opts.dev); err != nil {
		return err
	}
	tokens, err := app.tokens()
	if err != nil {
		return err
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
		return errors.New("no API tokens configured: set ENGRAM_TOKENS or ENGRAM_TOKENS_FILE (create one with `engram token --tenant NAME`)")
	}
	p, err := newPipeline(ctx, app)
	if err != nil {
		return err
	}

	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	var wg sync.WaitGroup
	workerErr := make(chan error, 8)
	if opts.workers {
		for _, w := range p.workers() {
			wg.Go(func() {
				if err := w(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
					workerErr <- err
				}
			})
		}
	}

	mux := http.NewServeMux()
	api := http.NewServeMux()
	p.register(api)
	mux.Handle("/v1/", tokens.Middleware(api))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		hctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		status, code := "ok", http.StatusOK
		checks := map[string]string{"postgres": "ok", "nats": "ok"}
		if err := app.Pool.Ping(hctx); err != nil {
			checks["postgres"], status, code = err.Error(), "unavailable", http.StatusServiceUnavailable
		}
		if !app.NC.IsConnected() {
			checks["nats"], status, code = app.NC.Status().String(), "unavailable", http.StatusServiceUnavailable
		}
		httpapi.WriteJSON(w, code, map[string]any{"status": status, "checks": checks})
	})
	srv := &http.Server{Addr: app.Config.HTTPAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", app.Config.HTTPAddr)
	if err != nil {
		stopWorkers()
		wg.Wait()
		return fmt.Errorf("listening on %s (ENGRAM_HTTP_ADDR): %w", app.Config.HTTPAddr, err)
	}
	fmt.Fprintf(env.Stdout, "engram: HTTP API on http://%s (health: /healthz)\n", ln.Addr())
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("HTTP server: %w", err)
	case err := <-workerErr:
		runErr = fmt.Errorf("worker: %w", err)
	}
	env.Logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		env.Logger.Warn("HTTP shutdown", "err", err)
	}
	// Workers drain: in-flight messages finish and are acked; nothing unacked is lost.
	stopWorkers()
	wg.Wait()
	p.close()
	env.Logger.Info("stopped")
	return runErr
}
