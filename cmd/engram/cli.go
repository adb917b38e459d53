package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
)

// Helpers shared by the subcommands' flag handling and output.

// parseFlags parses flags placed before or after positional arguments and returns the
// positionals. errHelp is returned as is so callers can exit quietly.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
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
		if errors.Is(err, flag.ErrHelp) {
			return uuid.Nil, err
		}
		return uuid.Nil, fmt.Errorf("memory %s: %w", cmd, err)
	}
	if *tenant == "" {
		return uuid.Nil, fmt.Errorf("memory %s: --tenant is required", cmd)
	}
	if len(pos) != 1 {
		fs.Usage()
		return uuid.Nil, fmt.Errorf("memory %s: want exactly one memory ID, got %d arguments", cmd, len(pos))
	}
	id, err := uuid.Parse(pos[0])
	if err != nil {
		return uuid.Nil, fmt.Errorf("memory %s: %q is not a memory ID (UUID)", cmd, pos[0])
	}
	return id, nil
}
