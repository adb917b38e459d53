// Command engram is the one binary of engram: the API server, the workers, the
// development environment and the operator's tools. main only reads the
// environment and flags and wires dependencies; the work is done by the packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

// Env is what a subcommand gets: configuration, output streams and a logger.
type Env struct {
	Config Config
	Stdout io.Writer
	Stderr io.Writer
	Logger *slog.Logger
}

// newApp returns an App for the environment; the caller opens what it needs.
func (e *Env) newApp() *App {
	return &App{Config: e.Config, Logger: e.Logger}
}

func commands() map[string]command {
	return map[string]command{
		"migrate":     {"apply or list database migrations (up | status)", runMigrate},
		"dev":         {"run everything locally on embedded defaults until Ctrl-C", runDev},
		"demo":        {"play the end-to-end demo through the public API on embedded defaults", runDemo},
		"serve":       {"run the HTTP API and the workers against configured services", runServe},
		"worker":      {"run one pipeline worker (extractor | resolver)", runWorker},
		"dlq":         {"list, show, replay or purge dead letters", runDLQ},
		"token":       {"create an API token for a tenant", runToken},
		"bench":       {"measure throughput and latency (ingest | resolve | search), or run the chaos check (chaos)", runBench},
		"memory":      {"inspect and edit memories: get, history, correct, deprecate, rollback, as-of, delete, restore", runMemory},
		"consolidate": {"run nightly consolidation once: distil episodes, expire, decay, archive, cap", runConsolidate},
		"users":       {"delete, export or import everything of one user", runUsers},
		"eval":        {"run the evaluation: golden cases or LoCoMo", runEval},
		"probe":       {"GET a health URL and exit 0 on 2xx (the container health check)", runProbe},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "engram: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "engram: %v\n", err)
		return 2
	}
	logger := newLogger(stderr, cfg)
	env := &Env{Config: cfg, Stdout: stdout, Stderr: stderr, Logger: logger}
	if err := cmd.run(ctx, env, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "engram %s: %v\n", args[0], err)
			return 2
		}
		fmt.Fprintf(stderr, "engram %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// usageError marks a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "engram — long-term memory for LLM agents")
	fmt.Fprintln(w, "\nUsage: engram <command> [flags]   (engram <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range names {
		fmt.Fprintf(tw, "  %s\t%s\n", n, cmds[n].summary)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nEnvironment:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range envVars {
		def := v.def
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.name, def, v.help)
	}
	tw.Flush()
}

// newFlagSet makes a flag set that prints its usage to stderr and returns errors
// instead of exiting.
func newFlagSet(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("engram "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: engram %s\n", synopsis)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(env.Stderr)
		if b.Len() > 0 {
			fmt.Fprintf(env.Stderr, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}
