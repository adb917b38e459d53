package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engramhq/engram/internal/lifecycle"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

const memoryUsage = `Usage: engram memory <command> --tenant T [flags] ID

Read and correct one memory. Every change is a new version, recorded with its actor
and reason; nothing is deleted.

Commands:
  get        the memory with its versions and lineage
  history    its versions, oldest first
  as-of      the version believed true at a time (--at RFC3339)
  correct    write a corrected version (--content, optional --category, --importance,
             --reason, --expect-version)
  deprecate  mark it deprecated (--reason)
  rollback   write a new version equal to version N (--version N, --reason)

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
		return errors.New("memory: missing command (get, history, as-of, correct, deprecate, rollback)")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, memoryUsage)
		return nil
	case "get", "history", "as-of", "correct", "deprecate", "rollback":
	default:
		fmt.Fprint(stderr, memoryUsage)
		return fmt.Errorf("memory: unknown command %q (want get, history, as-of, correct, deprecate, rollback)", cmd)
	}

	fs := flag.NewFlagSet("engram memory "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: engram memory %s --tenant T [flags] ID\n\nFlags:\n", cmd)
		fs.PrintDefaults()
	}
	tenant := fs.String("tenant", "", "tenant of the memory (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	actor := fs.String("actor", "cli", "actor recorded on the new version")
	reason := fs.String("reason", "", "why (recorded on the new version)")
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
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
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
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return fmt.Errorf("memory as-of: --at must be an RFC 3339 time, got %q", at)
		}
		v, err := ops.AsOf(ctx, *tenant, id, t)
		if errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("memory as-of %s: nothing was believed at %s (or no such memory)", id, t.Format(time.RFC3339))
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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

const benchResolveUsage = `Usage: engram bench resolve [flags]

Seed owners that already hold memories (memories, versions and hash-embedder
vectors, bulk-loaded with COPY in tenant-scoped transactions), then resolve
synthetic candidates — 40% new facts, 30% restatements, 15% refinements, 15%
contradictions — spread over the owners, and report candidates/s and latency per
candidate; then resolve candidates for one large owner. Seeding 1,000 × 1,000
takes about a minute. Run it against a benchmark database: the seeded tenant
("bench-<random>") stays unless --cleanup.
Target: ≥ 500 candidates/s across owners.
`

// benchResolveCommand runs "engram bench resolve". args excludes "bench resolve".
// Progress goes to stderr, the report to stdout.
func benchResolveCommand(ctx context.Context, pool *pgxpool.Pool, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("engram bench resolve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchResolveUsage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	var cfg consolidator.ResolveBenchConfig
	fs.IntVar(&cfg.Owners, "owners", 1000, "owners to seed")
	fs.IntVar(&cfg.PerOwner, "per-owner", 1000, "memories per owner")
	fs.IntVar(&cfg.Candidates, "candidates", 5000, "candidates to resolve across owners")
	fs.IntVar(&cfg.Concurrency, "concurrency", 8, "resolving workers")
	fs.IntVar(&cfg.LargeOwner, "large-owner", 10000, "memories of the one large owner (negative: skip)")
	fs.IntVar(&cfg.LargeCandidates, "large-candidates", 500, "candidates resolved for the large owner")
	fs.StringVar(&cfg.Tenant, "tenant", "", "tenant to seed (default: a fresh bench-<random>)")
	fs.BoolVar(&cfg.Cleanup, "cleanup", false, "delete the seeded tenant afterwards")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("bench resolve: %w", err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("bench resolve: unexpected argument %q", fs.Arg(0))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"owners", cfg.Owners}, {"per-owner", cfg.PerOwner}, {"candidates", cfg.Candidates}, {"concurrency", cfg.Concurrency}} {
		if f.v <= 0 {
			return fmt.Errorf("bench resolve: --%s must be positive, got %d", f.name, f.v)
		}
	}
	if cfg.LargeOwner == 0 {
		cfg.LargeOwner = -1
	}
	cfg.Progress = stderr
	res, err := consolidator.RunResolveBench(ctx, pool, cfg)
	if err != nil {
		return fmt.Errorf("bench resolve: %w", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return fmt.Errorf("bench resolve: writing the result: %w", err)
		}
		return nil
	}
	printBenchResolve(stdout, res)
	return nil
}

func printBenchResolve(w io.Writer, r consolidator.ResolveBenchResult) {
	fmt.Fprintf(w, "resolver benchmark: tenant %s, %d owners × %d memories", r.Tenant, r.Owners, r.PerOwner)
	if r.LargeOwnerSize > 0 {
		fmt.Fprintf(w, " + one owner of %d", r.LargeOwnerSize)
	}
	fmt.Fprintf(w, "\nseeded %d memories in %.1f s (%.0f rows/s)\n\n", r.SeededRows, r.SeedSeconds, r.SeedRowsPerSec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tcandidates\tworkers\tper s\tp50 ms\tp95 ms\tp99 ms\terrors\t")
	row := func(name string, p consolidator.BenchPhase) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t\n", name, p.Candidates, p.Concurrency, p.PerSecond,
			p.P50Ms, p.P95Ms, p.P99Ms, p.Errors)
	}
	row("across owners", r.Across)
	if r.Large != nil {
		row(fmt.Sprintf("one owner of %d", r.LargeOwnerSize), *r.Large)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndecisions across owners: %v\n", r.Across.Decisions)
	verdict := "meets"
	if r.Across.PerSecond < 500 {
		verdict = "MISSES"
	}
	fmt.Fprintf(w, "target: %.0f candidates/s across owners %s ≥ 500/s\n", r.Across.PerSecond, verdict)
}
