package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
)

// runDemo plays engram's main job through the public API on embedded defaults: a
// user states preferences in one session, a later session gets them back as cited
// context, and a changed preference supersedes the old one while history keeps it.
// It checks what it shows and fails when engram does not deliver.
func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "demo", "demo [--keep]")
	keep := fs.Bool("keep", false, "keep the demo's JetStream store (in a temporary directory) after the run")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	start := time.Now()
	out := env.Stdout
	// A private JetStream store and port: the demo neither needs nor disturbs a
	// running `engram dev`.
	dir, err := os.MkdirTemp("", "engram-demo-")
	if err != nil {
		return fmt.Errorf("creating the demo directory: %w", err)
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	cfg := env.Config
	cfg.DataDir, cfg.HTTPAddr = dir, "127.0.0.1:0"
	if cfg.NATSURL == "" {
		port, err := freePort()
		if err != nil {
			return err
		}
		cfg.NATSPort = port
	}
	logger := env.Logger
	if cfg.LogLevel > slog.LevelDebug {
		// The demo's own output tells the story; the workers' info logs would bury it.
		logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	app := &App{Config: cfg, Logger: logger}
	defer app.Close()
	step(out, "starting engram on embedded defaults (PostgreSQL, in-process JetStream, offline extractor, local embedder)")
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	if err := app.openNATS(ctx, true); err != nil {
		return err
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	tenant := "demo-" + time.Now().UTC().Format("20060102-150405")
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenant, Name: "demo", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		return err
	}
	n, err := startNode(ctx, app, tokens, true)
	if err != nil {
		return err
	}
	defer n.Stop()
	fmt.Fprintf(out, "  API %s, tenant %s\n", n.URL, tenant)
	c := client.New(n.URL, tok)

	const user = "lin"
	now := time.Now().UTC().Truncate(time.Minute)
	sessionA := now.Add(-8 * 24 * time.Hour)
	turnsA := []client.Turn{
		{Role: client.RoleUser, Content: "你好！"},
		{Role: client.RoleUser, Content: "以后安排会议尽量避开每周五下午，因为周五要写周报"},
		{Role: client.RoleAssistant, Content: "好的，记住了。"},
		{Role: client.RoleUser, Content: "会议室优先选三楼靠窗那间"},
		{Role: client.RoleAssistant, Content: "明白。"},
		{Role: client.RoleUser, Content: "Also, I prefer meeting agendas to be sent a day in advance."},
		{Role: client.RoleUser, Content: "今天天气不错，哈哈"},
	}
	for i := range turnsA {
		turnsA[i].TurnID = fmt.Sprintf("demo-a-%d", i+1)
		turnsA[i].UserID, turnsA[i].SessionID = user, "session-a"
		turnsA[i].OccurredAt = sessionA.Add(time.Duration(i) * time.Minute)
	}
	step(out, "session A (8 days ago): the user talks to the agent")
	for _, t := range turnsA {
		fmt.Fprintf(out, "  %-9s %s\n", t.Role+":", t.Content)
	}
	if _, err := c.AddTurns(ctx, turnsA...); err != nil {
		return fmt.Errorf("sending session A: %w", err)
	}
	if err := drain(ctx, out, app); err != nil {
		return err
	}

	query := "帮我安排下一次产品评审会的时间和会议室"
	step(out, "session B (a new session, today): the agent asks engram for context")
	fmt.Fprintf(out, "  query: %s\n\n", query)
	cr, err := c.Context(ctx, client.ContextRequest{UserID: user, SessionID: "session-b", Query: query, BudgetTokens: 600})
	if err != nil {
		return fmt.Errorf("asking for context: %w", err)
	}
	fmt.Fprintln(out, indent(cr.Text))
	fmt.Fprintf(out, "  (%d of %d tokens; %d memories cited; retrieval %s)\n", cr.TokensUsed, cr.Budget, len(cr.MemoryIDs), cr.RetrievalID)
	var problems []string
	for _, want := range []string{"周五下午", "三楼靠窗", "agenda"} {
		if !strings.Contains(cr.Text, want) {
			problems = append(problems, fmt.Sprintf("the context lacks %q", want))
		}
	}
	for _, bad := range []string{"天气不错", "你好"} {
		if strings.Contains(cr.Text, bad) {
			problems = append(problems, fmt.Sprintf("the context holds small talk %q", bad))
		}
	}

	step(out, "session C (yesterday): the user changes a preference")
	change := client.Turn{TurnID: "demo-c-1", UserID: user, SessionID: "session-c", Role: client.RoleUser,
		Content: "周五下午开会也可以了", OccurredAt: now.Add(-24 * time.Hour)}
	fmt.Fprintf(out, "  user:     %s\n", change.Content)
	if _, err := c.AddTurns(ctx, change); err != nil {
		return fmt.Errorf("sending session C: %w", err)
	}
	if err := drain(ctx, out, app); err != nil {
		return err
	}
	sr, err := c.Search(ctx, client.SearchRequest{UserID: user, Query: "周五下午开会", TopK: 5})
	if err != nil {
		return fmt.Errorf("searching: %w", err)
	}
	var id string
	for _, r := range sr.Results {
		if r.Key == "meeting.avoid_time" {
			id = r.ID
			break
		}
	}
	if id == "" {
		problems = append(problems, "no memory in the meeting.avoid_time slot")
	} else {
		hist, err := c.History(ctx, id)
		if err != nil {
			return fmt.Errorf("reading history: %w", err)
		}
		step(out, "the memory's history: the old version is superseded, not deleted")
		fmt.Fprintf(out, "  memory %s (key meeting.avoid_time)\n", id)
		tw := newTabWriter(out, false)
		fmt.Fprintln(tw, "  VERSION\tCHANGE\tSTATUS\tVALID FROM\tVALID TO\tCONTENT")
		for _, v := range hist {
			to := "-"
			if v.ValidTo != nil {
				to = v.ValidTo.Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", v.Version, v.Change, v.Status, v.ValidFrom.Format("2006-01-02 15:04"), to, v.Content)
		}
		tw.Flush()
		if len(hist) < 2 || hist[0].Status != "superseded" {
			problems = append(problems, "the changed preference did not supersede the old version")
		}
	}
	step(out, fmt.Sprintf("done in %.1fs", time.Since(start).Seconds()))
	if len(problems) > 0 {
		return errors.New("the demo did not go as expected: " + strings.Join(problems, "; "))
	}
	return nil
}

func step(w io.Writer, msg string) { fmt.Fprintf(w, "\n==> %s\n", msg) }

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// drain waits for the pipeline, printing progress.
func drain(ctx context.Context, out io.Writer, app *App) error {
	fmt.Fprint(out, "  … extracting and resolving memories")
	t0 := time.Now()
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitDrained(dctx, app.JS); err != nil {
		fmt.Fprintln(out)
		return err
	}
	fmt.Fprintf(out, " (%d ms)\n", time.Since(t0).Milliseconds())
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
