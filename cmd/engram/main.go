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
		"bench":       {"measure throughput and latency (ingest | resolve | search | flood | latency), or run the chaos check (chaos)", runBench},
		"memory":      {"list, inspect and edit memories: list, get, history, as-of, correct, deprecate, rollback, delete, restore", runMemory},
		"consolidate": {"run nightly consolidation once: distil episodes, expire, decay, archive, cap", runConsolidate},
		"users":       {"forget, delete, export or import everything of one user", runUsers},
		"eval":        {"run the evaluation: golden cases or LoCoMo", runEval},
		"probe":       {"GET a health URL and exit 0 on 2xx (the container health check)", runProbe},
		"version":     {"print the version and VCS revision engram was built from", runVersion},
		"mcp":         {"serve the MCP tools over stdio, calling the engram at ENGRAM_URL with ENGRAM_TOKEN", runMCP},
		"rebuild":     {"re-derive memories from the stored turns with the extractor configured now", runRebuild},
		"index":       {"build and drop the HNSW indexes of very large owners once (serve does it in the background), or list them", runIndex},
		"reembed":     {"embed the memories (and turns) lacking a vector in a model: roll a new embedding model in", runReembed},
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
	if len(args) == 0 {
		usage(stderr, cmds) // a usage error: the help goes with the error stream
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
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
	return exitCode(stderr, args[0], cmd.run(ctx, env, args[1:]))
}

// exitCode is the one place that turns a command's error into its message and exit
// status: 0 for success and --help, 2 for a usage error (usageError anywhere in the
// chain), 1 for anything else. The message is printed once, here, prefixed by the
// command unless it already starts with it.
func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, name+" ") && !strings.HasPrefix(msg, name+":") {
		msg = name + ": " + msg
	}
	fmt.Fprintf(stderr, "engram %s\n", msg)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
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
	t := &table{indent: "  "}
	for _, n := range names {
		t.add(n, cmds[n].summary)
	}
	_ = t.write(w)
	fmt.Fprintln(w, "\nEnvironment:")
	t = &table{indent: "  "}
	for _, v := range envVars {
		def := v.def
		if def == "" {
			def = "-"
		}
		t.add(v.name, def, v.help)
	}
	_ = t.write(w)
}

// newFlagSet makes a flag set that prints its usage to stderr and returns errors
// instead of exiting.
func newFlagSet(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("engram "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: engram %s\n", synopsis)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(out)
		if b.Len() > 0 {
			fmt.Fprintf(out, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}
