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

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

const memoryUsage = `Usage: engram memory <command> --tenant T [flags] [ID]

List, read and correct memories. Every change is a new version, recorded with its
actor and reason; only delete removes anything.

Commands:
  list       the tenant's memories, filtered (--user, --status, --metadata KEY=VALUE, ...)
  get        the memory with its versions and lineage
  history    its versions, oldest first
  as-of      the version believed true at a time (--at RFC3339)
  correct    write a corrected version (--content, optional --category, --importance,
             --reason, --expect-version)
  deprecate  mark it deprecated (--reason)
  rollback   write a new version equal to version N (--version N, --reason)
  delete     hard-delete it with its versions, lineage and embeddings (the audit
             log keeps its id and content hash)
  restore    bring an archived memory back to active

Every command takes --tenant and --json. Run "engram memory <command> --help" for
its flags.
`

// memoryCommand runs "engram memory ...". args excludes "memory" itself. Corrected
// content is re-embedded with the local hashing embedder; memoryCommandWith takes
// the deployment's embedder instead.
func memoryCommand(ctx context.Context, store *memory.Store, args []string, stdout, stderr io.Writer) error {
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		return err
	}
	return memoryCommandWith(ctx, store, emb, args, stdout, stderr)
}

// memoryCommandWith is memoryCommand with the embedder that re-embeds corrected
// content (nil: the memory keeps no vector until re-embedded).
func memoryCommandWith(ctx context.Context, store *memory.Store, emb consolidator.Embedder, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, memoryUsage)
		return usagef("memory: missing command (list, get, history, as-of, correct, deprecate, rollback, delete, restore)")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, memoryUsage)
		return nil
	case "get", "history", "as-of", "correct", "deprecate", "rollback":
	default:
		fmt.Fprint(stderr, memoryUsage)
		return usagef("memory: unknown command %q (want list, get, history, as-of, correct, deprecate, rollback, delete, restore)", cmd)
	}

	fs := flag.NewFlagSet("engram memory "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: engram memory %s --tenant T [flags] ID\n\nFlags:\n", cmd)
		fs.PrintDefaults()
	}
	tenant := fs.String("tenant", "", "tenant of the memory (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	// Only the commands that write a version record an actor and a reason.
	actor, reason := new(string), new(string)
	switch cmd {
	case "correct", "deprecate", "rollback":
		fs.StringVar(actor, "actor", "cli", "actor recorded on the new version")
		fs.StringVar(reason, "reason", "", "why (recorded on the new version)")
	}
	var content, category, at string
	var importance float64
	var expect, version int
	switch cmd {
	case "correct":
		fs.StringVar(&content, "content", "", "the corrected content (required)")
		fs.StringVar(&category, "category", "", "a new category")
		fs.Float64Var(&importance, "importance", -1, "a new importance in [0,1]")
		fs.IntVar(&expect, "expect-version", 0, "refuse unless the memory is at this version")
	case "rollback":
		fs.IntVar(&version, "version", 0, "the version to restore (required)")
	case "as-of":
		fs.StringVar(&at, "at", "", "RFC 3339 time (required)")
	}
	id, err := memoryIDArg(fs, cmd, rest, tenant)
	if err != nil {
		return err
	}
	var asOf time.Time
	switch cmd {
	case "as-of":
		if asOf, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return usagef("memory as-of: --at must be an RFC 3339 time, got %q", at)
		}
	case "correct":
		if strings.TrimSpace(content) == "" {
			return usagef("memory correct: --content is required")
		}
		if importance != -1 && (importance < 0 || importance > 1) {
			return usagef("memory correct: --importance must be in [0,1], got %g", importance)
		}
	case "rollback":
		if version < 1 {
			return usagef("memory rollback: --version is required (the version to restore, from 1), got %d", version)
		}
	}
	if preflight(ctx) {
		return nil
	}
	ops := lifecycle.NewOps(store, emb)
	var out any
	switch cmd {
	case "get":
		d, err := ops.Get(ctx, *tenant, id)
		if err != nil {
			return fmt.Errorf("memory get %s: %w", id, err)
		}
		if !*asJSON {
			printMemory(stdout, d.Memory)
			fmt.Fprintln(stdout)
			printVersions(stdout, d.Versions)
			if len(d.Lineage) > 0 {
				fmt.Fprintln(stdout, "\nsources:")
				for _, l := range d.Lineage {
					fmt.Fprintf(stdout, "  %s %s (added %s)\n", l.Kind, l.SourceID, l.AddedAt.UTC().Format(time.RFC3339))
				}
			}
			return nil
		}
		out = d
	case "history":
		vs, err := ops.History(ctx, *tenant, id)
		if err != nil {
			return fmt.Errorf("memory history %s: %w", id, err)
		}
		if !*asJSON {
			printVersions(stdout, vs)
			return nil
		}
		out = vs
	case "as-of":
		v, err := ops.AsOf(ctx, *tenant, id, asOf)
		if errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("memory as-of %s: nothing was believed at %s (or no such memory)", id, asOf.Format(time.RFC3339))
		}
		if err != nil {
			return fmt.Errorf("memory as-of %s: %w", id, err)
		}
		if !*asJSON {
			printVersions(stdout, []memory.Version{v})
			return nil
		}
		out = v
	default:
		var m memory.Memory
		switch cmd {
		case "correct":
			c := lifecycle.Correction{Content: content, Reason: *reason, ExpectVersion: expect}
			if category != "" {
				cat := memory.Category(category)
				c.Category = &cat
			}
			if importance >= 0 {
				c.Importance = &importance
			}
			m, err = ops.Correct(ctx, *tenant, id, c, *actor)
		case "deprecate":
			m, err = ops.Deprecate(ctx, *tenant, id, *reason, *actor)
		case "rollback":
			m, err = ops.Rollback(ctx, *tenant, id, version, *reason, *actor)
		}
		if err != nil {
			return fmt.Errorf("memory %s %s: %w", cmd, id, err)
		}
		if !*asJSON {
			printMemory(stdout, m)
			return nil
		}
		out = m
	}
	return writeJSON(stdout, out)
}

func printMemory(w io.Writer, m memory.Memory) {
	tw := newTabWriter(w, false)
	fmt.Fprintf(tw, "id\t%s\n", m.ID)
	fmt.Fprintf(tw, "owner\t%s\n", memory.Owner{UserID: m.UserID, AgentID: m.AgentID, Scope: m.Scope})
	fmt.Fprintf(tw, "content\t%s\n", m.Content)
	fmt.Fprintf(tw, "status\t%s (version %d)\n", m.Status, m.Version)
	fmt.Fprintf(tw, "type\t%s / %s\n", m.Type, m.Category)
	if m.Key != "" {
		fmt.Fprintf(tw, "key\t%s\n", m.Key)
	}
	fmt.Fprintf(tw, "importance\t%.2f\n", m.Importance)
	fmt.Fprintf(tw, "confidence\t%.2f (confirmed %d×, last %s)\n", m.Confidence, m.ConfirmCount, m.LastConfirmedAt.UTC().Format(time.RFC3339))
	valid := m.ValidFrom.UTC().Format(time.RFC3339) + " →"
	if m.ValidTo != nil {
		valid += " " + m.ValidTo.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "valid\t%s\n", valid)
	fmt.Fprintf(tw, "source\t%s\n", m.Source)
	tw.Flush()
}

func printVersions(w io.Writer, vs []memory.Version) {
	tw := newTabWriter(w, false)
	fmt.Fprintln(tw, "version\tchange\tstatus\tvalid from\tvalid to\tactor\tcontent\treason")
	for _, v := range vs {
		to := ""
		if v.ValidTo != nil {
			to = v.ValidTo.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Version, v.Change, v.Status,
			v.ValidFrom.UTC().Format(time.RFC3339), to, v.Actor, clipLine(v.Content, 60), clipLine(v.Reason, 60))
	}
	tw.Flush()
}

func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
