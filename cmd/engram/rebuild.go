package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/internal/rebuild"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
)

const rebuildUsage = `Usage: engram rebuild --tenant T [--user U] [--since TIME] [--dry-run] [--json] [--quiet]
       engram rebuild runs --tenant T [--limit N] [--json]

Re-derive memories from the stored turns with the extractor configured now (the LLM
one when ENGRAM_LLM_* is set, else the offline rules): each owner's turns go, session
by session in the live pipeline's micro-batches, through the same extraction and the
same resolver, and the owner's derived memories are replaced in one transaction under
the owner's lock (the live pipeline waits for that owner only). The replaced memories
stay in history (change "rebuild", with the run id).

Kept as they are: explicit memories (POST /v1/memories), memories with a correction,
deprecation, rollback or restore, and memories drawn from turns the rebuild does not
read. Nothing a hard deletion or a user erasure removed comes back. An owner whose
rebuilt memories equal the current ones is left untouched, so a second rebuild
changes nothing.

One rebuild per tenant at a time: a second fails at once. An interrupted run (Ctrl-C,
a crash) is resumed by the next run with the same filters and extractor. Progress goes
to stderr (a bar on a terminal), the report to stdout. "runs" lists a tenant's recent
rebuilds, newest first.
`

func runRebuild(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "runs" {
		return rebuildRuns(ctx, env, args[1:])
	}
	fs := usageFlagSet("engram rebuild", rebuildUsage, env.Stderr)
	tenant := fs.String("tenant", "", "the tenant to rebuild (required)")
	user := fs.String("user", "", "only this user")
	since := fs.String("since", "", "only turns that occurred at or after this time (RFC 3339 or YYYY-MM-DD)")
	dry := fs.Bool("dry-run", false, "print per owner what would be added, removed and changed; change nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("quiet", false, "no progress output")
	pos, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) > 0 {
		fs.Usage()
		return usagef("unexpected argument %q", pos[0])
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return err
	}
	opts := rebuild.Options{Tenant: *tenant, User: *user, DryRun: *dry}
	if *since != "" {
		t, err := parseSince(*since)
		if err != nil {
			return usagef("--since: %v", err)
		}
		opts.Since = &t
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	rb, err := app.rebuilder()
	if err != nil {
		return err
	}
	if !*quiet {
		opts.Progress = progressPrinter(env.Stderr)
	}
	rep, err := rb.Run(ctx, opts)
	if rep.Owners > 0 || err == nil {
		if *asJSON {
			if werr := writeJSON(env.Stdout, rep); werr != nil {
				return werr
			}
		} else {
			printRebuild(env.Stdout, rep)
		}
	}
	return err
}

func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither RFC 3339 (2026-11-01T00:00:00Z) nor a date (2026-11-01)", s)
}

// rebuilder wires a rebuild with the configured extractor and the resolver, as the
// live pipeline has them; it needs only the database (nothing is published).
func (a *App) rebuilder() (*rebuild.Rebuilder, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, fmt.Errorf("building the redactor: %w", err)
	}
	ex, chat, err := a.extractor(r, nil)
	if err != nil {
		return nil, err
	}
	emb, err := a.embedder()
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_EMBED_*: %w", err)
	}
	ep, err := extractor.NewPipeline(extractor.PipelineConfig{Store: a.Store, Publisher: noPublisher{}, Extractor: ex,
		Redactor: r, Logger: a.Logger})
	if err != nil {
		return nil, fmt.Errorf("building the extractor: %w", err)
	}
	var judge consolidator.Judge
	if chat != nil {
		judge = consolidator.NewLLMJudge(chat)
	}
	res := consolidator.NewResolver(a.Store, emb, judge, consolidator.DefaultResolverConfig(), a.Logger)
	return rebuild.New(rebuild.Config{Store: a.Store, Extractor: ep, Resolver: res,
		ExtractorID: strings.TrimSuffix(ex.Name()+"/"+ex.Version()+"/"+ex.Model(), "/"), BatchMax: ep.Config().BatchMax, Logger: a.Logger})
}

// noPublisher is the extraction pipeline's publisher in a rebuild, which takes the
// candidates back (Pipeline.ExtractTurns) and never publishes.
type noPublisher struct{}

var errNoPublish = errors.New("a rebuild resolves its candidates in-process and publishes nothing")

func (noPublisher) PublishMsg(context.Context, *nats.Msg, ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	return nil, errNoPublish
}

func (noPublisher) PublishMsgAsync(*nats.Msg, ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return nil, errNoPublish
}

// progressPrinter draws a bar on a terminal and prints a line per owner otherwise.
func progressPrinter(w io.Writer) func(rebuild.Progress) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		return func(p rebuild.Progress) {
			if bar == nil {
				bar = progressbar.NewOptions(p.Owners, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("rebuild"),
					progressbar.OptionShowCount(), progressbar.OptionSetItsString("owners"), progressbar.OptionShowIts(),
					progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
			}
			bar.Describe(fmt.Sprintf("rebuild: %d turns", p.Turns))
			_ = bar.Set(p.Done) // last: completing the bar ends its line
		}
	}
	return func(p rebuild.Progress) {
		if p.Done == 0 {
			fmt.Fprintf(w, "rebuild: %d owners\n", p.Owners)
			return
		}
		fmt.Fprintf(w, "rebuild: %d/%d owners (%s), %d turns, %s\n", p.Done, p.Owners, p.User, p.Turns,
			p.Elapsed.Round(time.Millisecond))
	}
}

func printRebuild(w io.Writer, r rebuild.Report) {
	mode := ""
	if r.DryRun {
		mode = " (dry run: nothing was changed)"
	}
	run := "dry run"
	if !r.DryRun {
		run = "run " + r.RunID.String()
	}
	fmt.Fprintf(w, "rebuild of tenant %s, %s %s in %s%s, extractor %s\n", r.Tenant, run, r.Status,
		r.Elapsed.Round(time.Millisecond), mode, r.Extractor)
	if r.Resumed {
		fmt.Fprintf(w, "resumed an unfinished run: %d owners were done already\n", r.OwnersSkipped)
	}
	for _, o := range r.OwnerReports {
		if len(o.Added)+len(o.Removed)+len(o.Changed) == 0 {
			continue
		}
		fmt.Fprintf(w, "user %s: %s (%d turns; %d memories → %d; %d kept as they are)\n", o.User, o.Outcome, o.Turns,
			o.Before, o.After, o.Kept)
		if !r.DryRun {
			continue // the memories are listed by a dry run (and in --json)
		}
		for _, m := range o.Added {
			fmt.Fprintf(w, "  + %s\n", memLine(m))
		}
		for _, m := range o.Removed {
			fmt.Fprintf(w, "  - %s\n", memLine(m))
		}
		for _, c := range o.Changed {
			fmt.Fprintf(w, "  ~ %s\n    → %s\n", memLine(c.From), memLine(c.To))
		}
	}
	fmt.Fprintf(w, "owners %d (replaced %d, unchanged %d, resumed past %d); turns %d (%.1f/s); memories %d → %d, %d kept; candidates dropped %d\n",
		r.Owners, r.Replaced, r.Unchanged, r.OwnersSkipped, r.Turns, r.TurnsPerSec, r.Before, r.After, r.Kept, r.Dropped)
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s: %s\n", e["user_id"], e["error"])
	}
}

func memLine(m rebuild.MemoryLine) string {
	key := ""
	if m.Key != "" {
		key = " " + m.Key
	}
	return fmt.Sprintf("[%s/%s%s, %s] %s", m.Type, m.Category, key, m.Status, strings.TrimSpace(m.Content))
}

// rebuildRuns is "engram rebuild runs": a tenant's recent rebuilds.
func rebuildRuns(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "rebuild runs", "rebuild runs --tenant T [--limit N] [--json]")
	tenant := fs.String("tenant", "", "the tenant (required)")
	limit := fs.Int("limit", 20, "how many runs")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return err
	}
	if *limit < 1 {
		return usagef("--limit must be positive, got %d", *limit)
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	var runs []memory.RebuildRun
	if err := app.Store.InTx(ctx, *tenant, func(tx *memory.Tx) error {
		var err error
		runs, err = tx.LatestRebuildRuns(ctx, *limit)
		return err
	}); err != nil {
		return fmt.Errorf("listing the rebuilds of %s: %w", *tenant, err)
	}
	if *asJSON {
		if runs == nil {
			runs = []memory.RebuildRun{}
		}
		return writeJSON(env.Stdout, runs)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tSTARTED\tOWNERS\tTURNS\tMEMORIES\tUSER\tSINCE\tEXTRACTOR\tHOST")
	for _, r := range runs {
		user, since := cmp.Or(r.UserFilter, "-"), "-"
		if r.Since != nil {
			since = r.Since.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d → %d\t%s\t%s\t%s\t%s\n", r.ID, r.Status,
			r.StartedAt.UTC().Format("2006-01-02 15:04:05"), r.OwnersDone, r.OwnersTotal, r.Counts["turns"],
			r.Counts["before"], r.Counts["after"], user, since, r.Extractor, r.Host)
	}
	return tw.Flush()
}
