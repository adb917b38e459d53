package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
)

func runDLQ(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return dlqCommand(ctx, nil, args, env.Stdout, env.Stderr)
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openNATS(ctx, false); err != nil {
		return err
	}
	return dlqCommand(ctx, app.JS, args, env.Stdout, env.Stderr)
}

func runToken(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "token", "token --tenant NAME [--name LABEL] [--json]")
	tenant := fs.String("tenant", "", "tenant the token authenticates as (required)")
	name := fs.String("name", "", "a label for the token, recorded as the actor of its writes")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := memory.CheckTenant(*tenant); err != nil {
		return usagef("--tenant: %v", err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	entry := httpapi.TokenEntry{Tenant: *tenant, Name: *name, SHA256: httpapi.HashToken(tok)}
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"token": tok, "entry": entry})
	}
	label := *tenant
	if *name != "" {
		label += "/" + *name
	}
	fmt.Fprintf(env.Stdout, "token:       %s\n", tok)
	fmt.Fprintf(env.Stdout, "ENGRAM_TOKENS entry (only the hash is stored): %s=%s\n", label, entry.SHA256)
	return nil
}

func runBench(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.Stderr, "Usage: engram bench (ingest|resolve|search|chaos|flood) [flags]   (engram bench ingest --help for its flags)")
		if len(args) == 0 {
			return usagef("name a benchmark: ingest, resolve or search")
		}
		return nil
	}
	if args[0] == "chaos" { // starts its own processes and services
		return benchChaosCommand(ctx, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
	}
	if args[0] == "flood" {
		return benchFloodCommand(ctx, env.Config.DatabaseURL, args[1:], env.Stdout, env.Stderr)
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
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		return benchSearchCommand(ctx, app.Pool, args[1:], env.Stdout, env.Stderr)
	case "resolve":
		if err := app.openDB(ctx, true); err != nil {
			return err
		}
		return benchResolveCommand(ctx, app.Pool, args[1:], env.Stdout, env.Stderr)
	default:
		return usagef("unknown benchmark %q: want ingest, resolve, search, chaos or flood", args[0])
	}
}

func runMemory(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return memoryCommandWith(ctx, nil, nil, args, env.Stdout, env.Stderr)
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
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
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return consolidateCommand(ctx, nil, args, env.Stdout, env.Stderr)
		}
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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return usersCommand(ctx, nil, args, env.Stdout, env.Stderr)
	}
	app, p, err := openPipeline(ctx, env)
	if err != nil {
		return err
	}
	defer app.Close()
	defer p.close()
	return usersCommand(ctx, p.life, args, env.Stdout, env.Stderr)
}
