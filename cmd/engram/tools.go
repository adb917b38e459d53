package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
)

func runDLQ(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || wantsHelp(args) {
		return dlqCommand(ctx, nil, args, env.Stdout, env.Stderr)
	}
	if err := dlqCommand(withPreflight(ctx), nil, args, env.Stdout, env.Stderr); err != nil {
		return err
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openNATS(ctx, false); err != nil {
		return err
	}
	return dlqCommand(ctx, app.JS, args, env.Stdout, env.Stderr)
}

// benchNames are the benchmarks runBench knows, for its errors.
const benchNames = "ingest, resolve, search, large, growth, chaos, flood or latency"

func runBench(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.Stderr, "Usage: engram bench (ingest|resolve|search|large|growth|chaos|flood|latency) [flags]   (engram bench ingest --help for its flags)")
		if len(args) == 0 {
			return usagef("name a benchmark: ingest, resolve, search, large, growth, chaos, flood or latency")
		}
		return nil
	}
	switch args[0] {
	case "ingest", "resolve", "search", "large", "growth", "chaos", "flood", "latency":
	default:
		// Before any --help: the help of a benchmark that does not exist is a usage error.
		return usagef("unknown benchmark %q: want %s", args[0], benchNames)
	}
	if args[0] == "chaos" { // starts its own processes and services
		return benchChaosCommand(ctx, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	}
	if args[0] == "flood" {
		return benchFloodCommand(ctx, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	}
	if args[0] == "latency" {
		return benchLatencyCommand(ctx, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	}
	// Help, or a dry run that checks the command line before anything is opened.
	pre := ctx
	if !wantsHelp(args[1:]) {
		pre = withPreflight(ctx)
	}
	var err error
	switch args[0] {
	case "ingest":
		err = benchIngestCommand(pre, nil, args[1:], env.Stdout, env.Stderr)
	case "search":
		err = benchSearchCommand(pre, nil, args[1:], env.Stdout, env.Stderr)
	case "resolve":
		err = benchResolveCommand(pre, nil, args[1:], env.Stdout, env.Stderr)
	case "large":
		err = benchLargeCommand(pre, nil, nil, args[1:], env.Stdout, env.Stderr)
	case "growth":
		err = benchGrowthCommand(pre, nil, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	}
	if err != nil || wantsHelp(args[1:]) {
		return err
	}
	app := env.newApp()
	defer app.Close()
	switch args[0] {
	case "ingest":
		if err := app.openNATS(ctx, false); err != nil {
			return err
		}
		return benchIngestCommand(ctx, app.JS, args[1:], env.Stdout, env.Stderr)
	case "search":
		// The benchmarks refresh statistics, vacuum and build indexes, which only the
		// owner may: they run on a scratch database as the owner role (row-level
		// security still binds it on the tenant tables).
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		pool, err := app.openOwnerPool(ctx)
		if err != nil {
			return fmt.Errorf("bench search: %w", err)
		}
		return benchSearchCommand(ctx, pool, args[1:], env.Stdout, env.Stderr)
	case "resolve":
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		pool, err := app.openOwnerPool(ctx)
		if err != nil {
			return fmt.Errorf("bench resolve: %w", err)
		}
		return benchResolveCommand(ctx, pool, args[1:], env.Stdout, env.Stderr)
	case "large":
		// Searches and writes as the application role, seeding and index builds as the owner.
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		pool, err := app.openOwnerPool(ctx)
		if err != nil {
			return fmt.Errorf("bench large: %w", err)
		}
		return benchLargeCommand(ctx, app.Store, memory.NewStore(pool), args[1:], env.Stdout, env.Stderr)
	case "growth":
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		pool, err := app.openOwnerPool(ctx)
		if err != nil {
			return fmt.Errorf("bench growth: %w", err)
		}
		return benchGrowthCommand(ctx, pool, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	default:
		return usagef("unknown benchmark %q: want %s", args[0], benchNames)
	}
}

func runMemory(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && wantsHelp(args) {
		switch args[0] {
		case "list":
			return memoryListCommand(ctx, nil, args[1:], env.Stdout, env.Stderr)
		case "delete", "restore":
			return memoryLifecycleCommand(ctx, nil, args, env.Stdout, env.Stderr)
		}
	}
	if len(args) == 0 || wantsHelp(args) {
		return memoryCommandWith(ctx, nil, nil, args, env.Stdout, env.Stderr)
	}
	var err error
	switch pre := withPreflight(ctx); args[0] {
	case "list":
		err = memoryListCommand(pre, nil, args[1:], env.Stdout, env.Stderr)
	case "delete", "restore":
		err = memoryLifecycleCommand(pre, nil, args, env.Stdout, env.Stderr)
	default:
		err = memoryCommandWith(pre, nil, nil, args, env.Stdout, env.Stderr)
	}
	if err != nil {
		return err
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	if args[0] == "list" {
		return memoryListCommand(ctx, lifecycle.NewOps(app.Store, nil), args[1:], env.Stdout, env.Stderr)
	}
	if args[0] == "delete" || args[0] == "restore" {
		if err := app.openNATS(ctx, false); err != nil {
			return err
		}
		p, err := newPipeline(ctx, app)
		if err != nil {
			return err
		}
		defer p.close()
		return memoryLifecycleCommand(ctx, p.life, args, env.Stdout, env.Stderr)
	}
	emb, err := app.embedder()
	if err != nil {
		return err
	}
	return memoryCommandWith(ctx, app.Store, emb, args, env.Stdout, env.Stderr)
}

// openPipeline opens the database and NATS and wires the components, for commands
// that act like a server for one operation.
func openPipeline(ctx context.Context, env *Env) (*App, *pipeline, error) {
	app := env.newApp()
	if err := app.openDB(ctx, true); err != nil {
		app.Close()
		return nil, nil, err
	}
	if err := app.openNATS(ctx, false); err != nil {
		app.Close()
		return nil, nil, err
	}
	p, err := newPipeline(ctx, app)
	if err != nil {
		app.Close()
		return nil, nil, err
	}
	return app, p, nil
}

func runConsolidate(ctx context.Context, env *Env, args []string) error {
	if wantsHelp(args) {
		return consolidateCommand(ctx, nil, args, env.Stdout, env.Stderr)
	}
	if err := consolidateCommand(withPreflight(ctx), nil, args, env.Stdout, env.Stderr); err != nil {
		return err
	}
	app, p, err := openPipeline(ctx, env)
	if err != nil {
		return err
	}
	defer app.Close()
	defer p.close()
	return consolidateCommand(ctx, p.nightly, args, env.Stdout, env.Stderr)
}

func runUsers(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || wantsHelp(args) {
		return usersCommand(ctx, nil, args, env.Stdout, env.Stderr)
	}
	if err := usersCommand(withPreflight(ctx), nil, args, env.Stdout, env.Stderr); err != nil {
		return err
	}
	app, p, err := openPipeline(ctx, env)
	if err != nil {
		return err
	}
	defer app.Close()
	defer p.close()
	return usersCommand(ctx, p.life, args, env.Stdout, env.Stderr)
}
