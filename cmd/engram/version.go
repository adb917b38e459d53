package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// versionInfo is what `engram version` reports, from the build information the Go
// toolchain embeds in the binary.
type versionInfo struct {
	Module    string `json:"module"`
	Version   string `json:"version"`            // the module version, "(devel)" for a local build
	Revision  string `json:"revision,omitempty"` // the VCS commit
	Time      string `json:"time,omitempty"`     // the commit's time
	Modified  bool   `json:"modified"`           // built from a tree with uncommitted changes
	GoVersion string `json:"go_version"`
}

func buildInfo() versionInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versionInfo{Module: "github.com/engramhq/engram", Version: "unknown"}
	}
	v := versionInfo{Module: info.Main.Path, Version: info.Main.Version, GoVersion: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func runVersion(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", "version [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	v := buildInfo()
	if *asJSON {
		return writeJSON(env.Stdout, v)
	}
	line := "engram " + v.Version
	if v.Revision != "" {
		line += " (" + v.Revision
		if v.Modified {
			line += ", modified"
		}
		if v.Time != "" {
			line += ", " + v.Time
		}
		line += ")"
	}
	fmt.Fprintf(env.Stdout, "%s %s\n", line, v.GoVersion)
	return nil
}
