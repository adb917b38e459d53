package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
)

// memoryListCommand runs "engram memory list": the tenant's memories, filtered, in
// (updated_at, id) order, every page read until --limit memories are printed.
func memoryListCommand(ctx context.Context, ops *lifecycle.Ops, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("engram memory list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: engram memory list --tenant T [--user U] [filters] [--json]\n\n"+
			"List memories, oldest change first (the order of GET /v1/memories).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	tenant := fs.String("tenant", "", "tenant of the memories (required)")
	user := fs.String("user", "", "only this user's memories")
	agent := fs.String("agent", "", "only this agent's memories")
	types := fs.String("type", "", "comma-separated types (episodic, semantic, procedural)")
	cats := fs.String("category", "", "comma-separated categories")
	statuses := fs.String("status", "", "comma-separated statuses (default: every status)")
	key := fs.String("key", "", "only memories with this key")
	after := fs.String("updated-after", "", "only memories updated after this RFC 3339 time")
	var meta metadataFlag
	fs.Var(&meta, "metadata", "KEY=VALUE: only memories whose metadata has this string value (repeatable)")
	limit := fs.Int("limit", 100, "print at most this many memories (0: all)")
	asJSON := fs.Bool("json", false, "print JSON (one array)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("memory list: %v", err)
	}
	if len(pos) > 0 {
		return usagef("memory list: unexpected arguments %q", pos)
	}
	if *tenant == "" {
		return usagef("memory list: --tenant is required")
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return err
	}
	if *limit < 0 {
		return usagef("memory list: --limit must be 0 or more")
	}
	q := memory.ListQuery{UserID: *user, AgentID: *agent, Key: *key, Metadata: meta.m,
		Types: typedList[memory.Type](*types), Categories: typedList[memory.Category](*cats),
		Statuses: typedList[memory.Status](*statuses)}
	if *after != "" {
		at, err := time.Parse(time.RFC3339Nano, *after)
		if err != nil {
			return usagef("memory list: --updated-after must be an RFC 3339 time, got %q", *after)
		}
		q.UpdatedAfter = &at
	}
	if preflight(ctx) {
		return nil
	}
	var all []memory.Memory
	for {
		q.Limit = memory.MaxListLimit
		if *limit > 0 {
			q.Limit = min(memory.MaxListLimit, *limit-len(all))
		}
		page, err := ops.List(ctx, *tenant, q)
		if err != nil {
			var fe *memory.FieldError
			if errors.As(err, &fe) {
				return usagef("memory list: --%s: %s", fe.Field, fe.Reason())
			}
			return fmt.Errorf("memory list: %w", err)
		}
		all = append(all, page.Memories...)
		if page.Next == nil || (*limit > 0 && len(all) >= *limit) {
			break
		}
		q.After = page.Next
	}
	if *asJSON {
		return writeJSON(stdout, all)
	}
	t := newTable("id", "user", "status", "type/category", "key", "updated", "content")
	for _, m := range all {
		t.add(m.ID, m.UserID, m.Status, string(m.Type)+"/"+string(m.Category), m.Key,
			m.UpdatedAt.UTC().Format(time.RFC3339), clipWidth(m.Content, 60))
	}
	if err := t.write(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d memories\n", len(all))
	return nil
}

func typedList[T ~string](s string) []T {
	var out []T
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, T(p))
		}
	}
	return out
}

// metadataFlag collects --metadata KEY=VALUE pairs.
type metadataFlag struct{ m map[string]any }

func (f *metadataFlag) String() string { return "" }

func (f *metadataFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if f.m == nil {
		f.m = map[string]any{}
	}
	f.m[k] = v
	return nil
}
