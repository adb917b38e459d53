package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/engramhq/engram/memory"
	"github.com/google/uuid"
)

// Helpers shared by the subcommands' flag handling and output.

// parseFlags parses flags placed before or after positional arguments and returns the
// positionals; every command parses through it. The flag package's own printing is
// silenced: --help prints the usage (fs.Usage) and returns flag.ErrHelp, which run
// treats as success; a bad flag returns a usageError, which run prints once and
// exits 2 on.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usage()
				return nil, err
			}
			return nil, usageError{fmt.Sprintf("%v (see %s --help)", err, fs.Name())}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

type preflightKey struct{}

// withPreflight marks ctx for a dry run of a command: it parses and checks its command
// line, then returns before using its database or streams. Commands that need those
// run once so, and open them only when the command line is right, so that a usage
// error is reported as one (exit 2) whether or not the services are reachable.
func withPreflight(ctx context.Context) context.Context {
	return context.WithValue(ctx, preflightKey{}, true)
}

// preflight reports whether ctx is a dry run (withPreflight).
func preflight(ctx context.Context) bool {
	b, _ := ctx.Value(preflightKey{}).(bool)
	return b
}

// wantsHelp reports whether the command line asks for help (-h, -help, --help before
// any "--"), so a command can print it without opening a database or NATS first.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "help":
			return true
		}
	}
	return false
}

// usageFlagSet is the flag set of a command with a usage text of its own: --help prints
// the text, then the flags.
func usageFlagSet(name, usage string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseNoArgs is parseFlags for a command that takes no positional argument.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unknown argument %q (see %s --help)", pos[0], fs.Name())
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// memoryIDArg parses `engram memory <cmd> --tenant T ID`'s flags and its one argument.
// A --help request returns flag.ErrHelp, which callers treat as success.
func memoryIDArg(fs *flag.FlagSet, cmd string, args []string, tenant *string) (uuid.UUID, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return uuid.Nil, err
	}
	if *tenant == "" {
		return uuid.Nil, usagef("memory %s: --tenant is required", cmd)
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return uuid.Nil, err
	}
	if len(pos) != 1 {
		fs.Usage()
		return uuid.Nil, usagef("memory %s: want exactly one memory ID, got %d arguments", cmd, len(pos))
	}
	id, err := uuid.Parse(pos[0])
	if err != nil {
		return uuid.Nil, usagef("memory %s: %q is not a memory ID (UUID)", cmd, pos[0])
	}
	return id, nil
}

// checkTenantFlag checks a --tenant value as the store will, so a bad one is a usage
// error before anything is opened; required says whether an empty one is one too.
func checkTenantFlag(tenant string, required bool) error {
	if tenant == "" && !required {
		return nil
	}
	if err := memory.CheckTenant(tenant); err != nil {
		if errors.Is(err, memory.ErrNoTenant) {
			return usagef("--tenant is required")
		}
		return usagef("--tenant %q: want 1-%d characters of [A-Za-z0-9._:@-]", tenant, memory.MaxIDLength)
	}
	return nil
}
