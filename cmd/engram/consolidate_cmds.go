package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"

	"github.com/engramhq/engram/consolidator"
)

const consolidateUsage = `Usage: engram consolidate [--tenant T] [--user U] [--dry-run] [--json]
       engram consolidate runs [--limit N] [--json]

Run the nightly consolidation now: distil recurring episodes into semantic memories
(through the resolver), expire TTLs, decay and archive unused memories, enforce the
per-owner cap and delete the content of old turns. Only one run at a time across all
processes: a second one fails at once. A run started soon after an interrupted or
failed one (same filters) finishes that run's work instead of starting afresh.
Progress goes to stderr, the summary to stdout.

"runs" lists recent runs, newest first.
`

// consolidateCommand runs "engram consolidate ...". args excludes "consolidate".
func consolidateCommand(ctx context.Context, c *consolidator.Consolidator, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "runs" {
		return consolidateRuns(ctx, c, args[1:], stdout, stderr)
	}
	fs := usageFlagSet("engram consolidate", consolidateUsage, stderr)
	tenant := fs.String("tenant", "", "only this tenant")
	user := fs.String("user", "", "only this user (needs --tenant)")
	dry := fs.Bool("dry-run", false, "report what would change and change nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("quiet", false, "no per-owner progress")
	pos, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("consolidate: %w", err)
	}
	if len(pos) > 0 {
		fs.Usage()
		return usagef("consolidate: unexpected argument %q", pos[0])
	}
	if *user != "" && *tenant == "" {
		return usagef("consolidate: --user needs --tenant")
	}
	if err := checkTenantFlag(*tenant, false); err != nil {
		return err
	}
	if *user != "" {
		if fe := memory.CheckID("--user", *user, memory.MaxIDLength); fe != nil {
			return usagef("%v", fe.Reason())
		}
	}
	if preflight(ctx) {
		return nil
	}
	opts := consolidator.RunOptions{Tenant: *tenant, User: *user, DryRun: *dry}
	if !*quiet {
		opts.Progress = stderr
	}
	rep, err := c.Run(ctx, opts)
	if errors.Is(err, consolidator.ErrRunInProgress) {
		return fmt.Errorf("consolidate: %w; try again when it has finished (engram consolidate runs)", err)
	}
	if rep.RunID != 0 {
		if *asJSON {
			if werr := writeJSON(stdout, rep); werr != nil {
				return werr
			}
		} else {
			printRunReport(stdout, rep)
		}
	}
	if err != nil {
		return fmt.Errorf("consolidate: %w", err)
	}
	return nil
}

func printRunReport(w io.Writer, r consolidator.RunReport) {
	mode := ""
	if r.DryRun {
		mode = " (dry run: nothing was changed)"
	}
	fmt.Fprintf(w, "run %d %s in %s%s\n", r.RunID, r.Status, r.Duration().Round(time.Millisecond), mode)
	if r.Resumes != 0 {
		fmt.Fprintf(w, "resumed run %d: %d owners were done already\n", r.Resumes, r.OwnersSkipped)
	}
	tw := newTabWriter(w, true)
	c := r.Counts
	for _, row := range []struct {
		name string
		n    int
	}{
		{"owners", r.OwnersDone}, {"episodes examined", c.Episodes}, {"clusters", c.Clusters},
		{"distilled (new memory)", c.Distilled}, {"distilled (merged)", c.Merged}, {"distilled (nothing new)", c.Noop},
		{"replayed", c.Replayed}, {"episodes consolidated", c.Consolidated}, {"expired", c.Expired},
		{"decayed", c.Decayed}, {"archived (unused)", c.Archived}, {"archived (cap)", c.Capped},
		{"turns purged", c.TurnsPurged}, {"LLM calls", r.LLMCalls},
	} {
		fmt.Fprintf(tw, "  %s\t%d\t\n", row.name, row.n)
	}
	tw.Flush()
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s/%s: %s\n", e.Tenant, e.UserID, e.Error)
	}
}

func consolidateRuns(ctx context.Context, c *consolidator.Consolidator, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("engram consolidate runs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limit := fs.Int("limit", 20, "how many runs")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("consolidate runs: %w", err)
	}
	if *limit < 1 {
		return usagef("consolidate runs: --limit must be positive, got %d", *limit)
	}
	if preflight(ctx) {
		return nil
	}
	runs, err := c.Runs(ctx, *limit)
	if err != nil {
		return fmt.Errorf("consolidate runs: %w", err)
	}
	if *asJSON {
		return writeJSON(stdout, runs)
	}
	tw := newTabWriter(stdout, false)
	fmt.Fprintln(tw, "ID\tSTARTED\tSTATUS\tDURATION\tOWNERS\tDISTILLED\tEXPIRED\tDECAYED\tARCHIVED\tERRORS\tFILTER")
	for _, r := range runs {
		dur := "-"
		if r.FinishedAt != nil {
			dur = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		filter := r.Tenant
		if r.User != "" {
			filter += "/" + r.User
		}
		if r.DryRun {
			filter += " (dry run)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.ID, r.StartedAt.UTC().Format(time.RFC3339),
			r.Status, dur, r.OwnersDone, r.Owners+r.OwnersSkipped, r.Counts.Distilled, r.Counts.Expired, r.Counts.Decayed,
			r.Counts.Archived+r.Counts.Capped, len(r.Errors), filter)
	}
	return tw.Flush()
}

const usersUsage = `Usage: engram users <command> --tenant T [flags] USER

Commands:
  forget   forget the user's memories (hard delete, as memory delete) and keep the
           turns; --turns deletes the turns too (then it is delete)
  delete   delete everything engram holds about the user: memories with their
           versions, lineage and embeddings, turns, retrieval records, session
           summaries, working memory, and the user's messages in the streams
  export   write the user's memories (with versions, lineage, embeddings) and turns
           as JSON Lines (--file F, default stdout)
  import   read an export into the tenant under USER (--file F, required);
           importing the same file twice changes nothing
`

// usersCommand runs "engram users delete|export|import ...". args excludes "users".
func usersCommand(ctx context.Context, lc *lifecycle.Lifecycle, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usersUsage)
		return usagef("users: missing command (forget, delete, export, import)")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usersUsage)
		return nil
	case "forget", "delete", "export", "import":
	default:
		fmt.Fprint(stderr, usersUsage)
		return usagef("users: unknown command %q (want forget, delete, export, import)", cmd)
	}
	fs := flag.NewFlagSet("engram users "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usersUsage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	tenant := fs.String("tenant", "", "the user's tenant (required)")
	file := new(string)
	switch cmd {
	case "export":
		fs.StringVar(file, "file", "", "file to write (default stdout)")
	case "import":
		fs.StringVar(file, "file", "", "the export to read (required)")
	}
	actor := fs.String("actor", "cli", "actor recorded in the audit log")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var withTurns bool
	if cmd == "forget" {
		fs.BoolVar(&withTurns, "turns", false, "delete the user's turns too (a full user deletion)")
	}
	pos, err := parseFlags(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("users %s: %w", cmd, err)
	}
	if *tenant == "" {
		return usagef("users %s: --tenant is required", cmd)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usagef("users %s: want exactly one user id, got %d arguments", cmd, len(pos))
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return err
	}
	user := pos[0]
	if fe := memory.CheckID("user id", user, memory.MaxIDLength); fe != nil {
		return usagef("users %s: %v", cmd, fe.Reason())
	}
	if cmd == "import" && *file == "" {
		return usagef("users import: --file is required")
	}
	if err := checkFileFlag(cmd, *file); err != nil {
		return err
	}
	if preflight(ctx) {
		return nil
	}
	var report any
	switch cmd {
	case "forget":
		rep, err := lc.DeleteUserMemories(ctx, *tenant, user, withTurns, *actor)
		if err != nil {
			return fmt.Errorf("users forget: %w", err)
		}
		report = rep
		if !*asJSON {
			kept := "turns kept"
			if !rep.TurnsKept {
				kept = fmt.Sprintf("%d turns deleted", rep.Turns)
			}
			fmt.Fprintf(stdout, "forgot %d memories of %s/%s (%d versions, %d embeddings, %d candidates in flight); %s\n",
				rep.Memories, *tenant, user, rep.Versions, rep.Embeddings, rep.CandidateMsgs, kept)
		}
	case "delete":
		rep, err := lc.DeleteUser(ctx, *tenant, user, *actor)
		if err != nil {
			return fmt.Errorf("users delete: %w", err)
		}
		report = rep
		if !*asJSON {
			fmt.Fprintf(stdout, "deleted user %s of %s: %d memories (%d versions, %d embeddings), %d turns, %d retrievals, "+
				"%d session summaries, %d task states, %d turn and %d candidate messages, %d dead letters\n",
				user, *tenant, rep.Memories, rep.Versions, rep.Embeddings, rep.Turns, rep.Retrievals, rep.SessionSummaries,
				rep.TaskStates, rep.TurnMessages, rep.CandidateMsgs, rep.DeadLetters)
			if len(rep.Skipped) > 0 {
				fmt.Fprintf(stdout, "not cleaned (not configured here): %v\n", rep.Skipped)
			}
		}
	case "export":
		w, closeFn := stdout, func() error { return nil }
		if *file != "" && *file != "-" {
			f, err := os.Create(*file)
			if err != nil {
				return fmt.Errorf("users export: %w", err)
			}
			w, closeFn = f, f.Close
		}
		rep, err := lc.Export(ctx, *tenant, user, w, *actor)
		if cerr := closeFn(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("users export: %w", err)
		}
		if *file == "" || *file == "-" {
			fmt.Fprintf(stderr, "exported %d memories and %d turns\n", rep.Memories, rep.Turns)
			return nil
		}
		report = rep
		if !*asJSON {
			fmt.Fprintf(stdout, "exported %d memories and %d turns of %s to %s\n", rep.Memories, rep.Turns, user, *file)
		}
	case "import":
		if *file == "" {
			return usagef("users import: --file is required")
		}
		f, err := os.Open(*file)
		if err != nil {
			return fmt.Errorf("users import: %w", err)
		}
		defer f.Close()
		rep, err := lc.Import(ctx, *tenant, user, f, *actor)
		if err != nil {
			return fmt.Errorf("users import: %w", err)
		}
		report = rep
		if !*asJSON {
			fmt.Fprintf(stdout, "imported %d memories (%d already there) and %d turns (%d already there) into %s/%s\n",
				rep.Memories, rep.MemoriesSkipped, rep.Turns, rep.TurnsSkipped, *tenant, user)
		}
	}
	if *asJSON {
		return writeJSON(stdout, report)
	}
	return nil
}

// checkFileFlag checks users import's --file (readable) and export's (its folder
// exists) before anything is opened, so a typo is a usage error, not a failure after
// connecting.
func checkFileFlag(cmd, file string) error {
	switch {
	case file == "" || file == "-" && cmd == "export":
		return nil
	case cmd == "import":
		f, err := os.Open(file)
		if err != nil {
			return usagef("users import: --file %q: %v", file, errors.Unwrap(err))
		}
		st, err := f.Stat()
		f.Close()
		if err == nil && st.IsDir() {
			return usagef("users import: --file %q is a directory", file)
		}
	case cmd == "export":
		dir := filepath.Dir(file)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("users export: --file %q: folder %q does not exist", file, dir)
		}
	}
	return nil
}

const memoryLifecycleUsage = `Usage: engram memory delete|restore --tenant T ID

  delete   hard-delete the memory with its versions, lineage and embeddings (the
           audit log keeps its id and content hash)
  restore  bring an archived memory back to active
`

// memoryLifecycleCommand runs "engram memory delete|restore ...". args starts with
// the command name; the "memory" dispatcher can hand these two over to it.
func memoryLifecycleCommand(ctx context.Context, lc *lifecycle.Lifecycle, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "delete" && args[0] != "restore") {
		fmt.Fprint(stderr, memoryLifecycleUsage)
		return usagef("memory: want delete or restore")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("engram memory "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), memoryLifecycleUsage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	tenant := fs.String("tenant", "", "tenant of the memory (required)")
	actor := fs.String("actor", "cli", "actor recorded in the audit log")
	asJSON := fs.Bool("json", false, "print JSON")
	id, err := memoryIDArg(fs, cmd, args[1:], tenant)
	if err != nil {
		return err
	}
	if preflight(ctx) {
		return nil
	}
	if cmd == "delete" {
		d, err := lc.DeleteMemory(ctx, *tenant, id, *actor)
		if err != nil {
			return fmt.Errorf("memory delete %s: %w", id, err)
		}
		if *asJSON {
			return writeJSON(stdout, d)
		}
		fmt.Fprintf(stdout, "deleted memory %s (%d versions, %d lineage links, %d embeddings)\n", id, d.Versions, d.Lineage, d.Embeddings)
		return nil
	}
	m, err := lc.Restore(ctx, *tenant, id, *actor)
	if err != nil {
		return fmt.Errorf("memory restore %s: %w", id, err)
	}
	if *asJSON {
		return writeJSON(stdout, m)
	}
	printMemory(stdout, m)
	return nil
}
