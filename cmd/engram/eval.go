package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/internal/natsserver"
	"github.com/engramhq/engram/memory"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/eval"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/retriever"
)

const evalUsage = `Usage:
  engram eval golden FILE|DIR... [--json]
  engram eval locomo --data FILE [--conversations conv-26,conv-30] [--k 5,10,20]
                     [--layers memories,turns] [--budget N] [--details] [--explain] [--answer] [--json]

Runs the evaluation through the real pipeline: an in-process engram node (HTTP
API, extractor and resolver workers) on 127.0.0.1, against ENGRAM_DATABASE_URL
(else the project-local PostgreSQL, started on demand) and ENGRAM_NATS_URL (else
a private in-process JetStream server on a temporary store, so that the workers
of a running "engram dev" never take this run's messages). Every golden case and
every LoCoMo conversation gets a fresh tenant "eval-<run>-<n>-<name>"; nothing is
deleted afterwards. Progress goes to stderr, the report to stdout.

golden  ingests each case's sessions and checks its expectations and
        prohibitions; exits non-zero when any case fails.
locomo  ingests LoCoMo conversations with their dates and reports evidence
        recall@k, NDCG@10, keyword-only, vector-only and memories-only
        baselines, Okapi BM25 over the raw turns (bm25-turns, in-process) and
        hybrid / bm25-turns, observation coverage and precision of the extracted
        memories (--explain prints a few misses, and a few memories that match
        no observation), context tokens and LLM calls per turn; --answer also
        grades answers with an LLM judge (needs ENGRAM_LLM_BASE_URL).
`

// runEval is "engram eval".
func runEval(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stderr, evalUsage)
		if len(args) == 0 {
			return usagef("name an evaluation: golden or locomo")
		}
		return nil
	}
	switch args[0] {
	case "golden":
		return runEvalGolden(ctx, env, args[1:])
	case "locomo":
		return runEvalLoCoMo(ctx, env, args[1:])
	default:
		return usagef("unknown evaluation %q: want golden or locomo", args[0])
	}
}

func runEvalGolden(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "eval golden", "eval golden FILE|DIR... [--json] [--html FILE]")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	htmlOut := fs.String("html", "", "also write the report as a self-contained HTML page to FILE")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutputFile("", "html", *htmlOut); err != nil {
		return err
	}
	if len(paths) == 0 {
		return usagef("name at least one golden file or directory (e.g. testdata/golden)")
	}
	cases, err := eval.LoadGolden(paths...)
	if err != nil {
		return err
	}
	sys, err := startEvalSystem(ctx, env)
	if err != nil {
		return err
	}
	defer sys.Close()
	start := time.Now()
	rep, err := eval.RunGolden(ctx, sys, cases, eval.GoldenOptions{Tokens: retriever.EstimateTokens, Progress: env.Stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "golden: %d cases in %s\n", rep.Cases, time.Since(start).Round(time.Millisecond))
	if err := writeReport(env.Stdout, *asJSON, rep); err != nil {
		return err
	}
	if err := writeHTMLReport(*htmlOut, rep); err != nil {
		return err
	}
	if failed := rep.Cases - rep.CasesPassed; failed > 0 {
		return fmt.Errorf("%d of %d golden cases failed", failed, rep.Cases)
	}
	return nil
}

func runEvalLoCoMo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "eval locomo", "eval locomo --data FILE [--conversations conv-26,conv-30] [--k 5,10,20] [--layers memories,turns] [--budget N] [--details] [--explain] [--answer] [--json] [--html FILE]")
	data := fs.String("data", "", "the LoCoMo file (locomo10.json or a subset of it); required")
	convs := fs.String("conversations", "", "comma-separated conversation ids (default: all in the file)")
	ks := fs.String("k", "5,10,20", "comma-separated recall cut-offs")
	layers := fs.String("layers", "memories,turns", "comma-separated search layers: memories, turns")
	budget := fs.Int("budget", 0, "context budget in tokens (0: engram's default)")
	details := fs.Bool("details", false, "keep one record per question in the report (not for held-out data)")
	explain := fs.Bool("explain", false, "print a few observations no memory matched, with their turns and memories, and a few memories that match no observation, with their turns (not for held-out data)")
	answer := fs.Bool("answer", false, "also answer and grade the questions with the chat model (ENGRAM_LLM_*)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	htmlOut := fs.String("html", "", "also write the report as a self-contained HTML page (recall@k curves, per-category table) to FILE")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *data == "" {
		return usagef("--data FILE is required")
	}
	if err := checkOutputFile("", "html", *htmlOut); err != nil {
		return err
	}
	convIDs, err := splitFlagList("conversations", *convs)
	if err != nil {
		return err
	}
	layerNames, err := splitFlagList("layers", *layers)
	if err != nil {
		return err
	}
	kList, err := splitFlagList("k", *ks)
	if err != nil {
		return err
	}
	opts := eval.LoCoMoOptions{Conversations: convIDs, Layers: layerNames, BudgetTokens: *budget,
		Tokens: retriever.EstimateTokens, Progress: env.Stderr, Details: *details}
	if *explain {
		opts.Explain = explainMisses
	}
	for _, s := range kList {
		k, err := strconv.Atoi(s)
		if err != nil || k <= 0 {
			return usagef("--k: %q is not a positive integer", s)
		}
		opts.Ks = append(opts.Ks, k)
	}
	for _, l := range opts.Layers {
		if l != eval.LayerMemories && l != eval.LayerTurns {
			return usagef("--layers: %q, want memories or turns", l)
		}
	}
	if *budget < 0 {
		return usagef("--budget must not be negative")
	}
	conversations, err := eval.LoadLoCoMo(*data)
	if err != nil {
		return err
	}
	// The file is read: an id it lacks is a usage error now, not after the services
	// have started.
	known := make([]string, 0, len(conversations))
	for _, c := range conversations {
		known = append(known, c.ID)
	}
	for _, id := range opts.Conversations {
		if !slices.Contains(known, id) {
			return usagef("--conversations: no conversation %q in %s (it holds %s)", id, *data, strings.Join(known, ", "))
		}
	}
	if *answer {
		// The answering model is the configured chat model; it also drives
		// extraction, as it would in production with ENGRAM_LLM_* set.
		app := env.newApp()
		chat, err := app.chat()
		if err != nil {
			return fmt.Errorf("ENGRAM_LLM_*: %w", err)
		}
		if chat == nil {
			return usagef("--answer needs a chat model: set ENGRAM_LLM_BASE_URL (and ENGRAM_LLM_MODEL)")
		}
		c := chatCompleter{chat}
		opts.Answer = &eval.AnswerOptions{Chat: c, Judge: c, AnswerModel: chat.Model(), JudgeModel: chat.Model()}
	}
	sys, err := startEvalSystem(ctx, env)
	if err != nil {
		return err
	}
	defer sys.Close()
	start := time.Now()
	rep, err := eval.RunLoCoMo(ctx, sys, conversations, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "locomo: %d turns, %d questions in %s\n", rep.Turns, rep.Questions, time.Since(start).Round(time.Second))
	if err := writeReport(env.Stdout, *asJSON, rep); err != nil {
		return err
	}
	return writeHTMLReport(*htmlOut, rep)
}

// writeHTMLReport writes the report's HTML page to path; nothing when path is empty.
func writeHTMLReport(path string, rep interface{ WriteHTML(io.Writer) error }) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := rep.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--html: writing %s: %w", path, err)
	}
	return nil
}

// explainMisses is how many missed observations, and how many memories that match none,
// --explain keeps per conversation.
const explainMisses = 4

// tableWriter is a report that prints itself for people.
type tableWriter interface{ WriteTable(io.Writer) error }

func writeReport(w io.Writer, asJSON bool, rep tableWriter) error {
	if asJSON {
		if err := writeJSON(w, rep); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		return nil
	}
	if err := rep.WriteTable(w); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// splitFlagList splits the comma-separated value of flag --name: an empty value is
// no entries (the flag's default), an empty entry ("5,,10") a usage error.
func splitFlagList(name, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, usagef("--%s: an empty entry in %q", name, s)
		}
		out = append(out, p)
	}
	return out, nil
}

// chatCompleter adapts the chat client to the harness's Completer.
type chatCompleter struct{ c *llm.ChatClient }

func (a chatCompleter) Complete(ctx context.Context, system, user string) (string, error) {
	resp, err := a.c.Complete(ctx, llm.ChatRequest{System: system, Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}})
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

// startEvalSystem opens the configured (or embedded) services and starts an
// in-process node for an evaluation run. The caller closes the system.
func startEvalSystem(ctx context.Context, env *Env) (_ *evalSystem, err error) {
	app := env.newApp()
	// Eval owns its stderr for progress: the pipeline's per-message info logs
	// would drown it, so the default level becomes warn (debug still works).
	if env.Config.LogLevel == slog.LevelInfo {
		app.Logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	defer func() {
		if err != nil {
			app.Close()
		}
	}()
	// The node listens on a free loopback port: eval talks to it through the SDK,
	// as an agent would, and must not collide with a running server.
	app.Config.HTTPAddr = "127.0.0.1:0"
	if app.Config.NATSURL == "" {
		// A private JetStream server on a throwaway store: openNATS would otherwise
		// join the server of a running `engram dev`, whose workers would take this
		// run's turns (and write them to whatever database they use).
		dir, err := os.MkdirTemp("", "engram-eval-")
		if err != nil {
			return nil, fmt.Errorf("creating the eval's JetStream directory: %w", err)
		}
		app.closers = append(app.closers, func() { _ = os.RemoveAll(dir) })
		emb, err := natsserver.Start(ctx, natsserver.Config{StoreDir: filepath.Join(dir, "nats"), Port: -1,
			Host: "127.0.0.1", ServerName: "engram-eval", Logger: app.Logger})
		if err != nil {
			return nil, fmt.Errorf("starting the eval's JetStream server: %w", err)
		}
		app.Embedded = emb
		app.closers = append(app.closers, emb.Shutdown)
		app.Config.NATSURL = emb.ClientURL()
		app.Config.DataDir = dir
	}
	if err := app.openDB(ctx, true); err != nil {
		return nil, err
	}
	if err := app.openNATS(ctx, false); err != nil {
		return nil, err
	}
	tokens := &httpapi.Tokens{}
	n, err := startNode(ctx, app, tokens, true)
	if err != nil {
		return nil, err
	}
	sys, err := newEvalSystem(app, n, tokens)
	if err != nil {
		n.Stop()
		return nil, err
	}
	sys.closeApp = app.Close
	return sys, nil
}

// evalSystem is eval.System over a running node: tenants are created on the
// fly, each with its own API token, and driven through the Go SDK.
type evalSystem struct {
	app    *App
	node   *node
	tokens *httpapi.Tokens
	runID  string
	seq    atomic.Int64

	// failed is closed when a worker of the node stops with an error (err holds
	// it): draining would otherwise wait forever.
	failed    chan struct{}
	failErr   error
	stop      chan struct{}
	closeOnce sync.Once
	closeApp  func()
}

func newEvalSystem(app *App, n *node, tokens *httpapi.Tokens) (*evalSystem, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("making a run id: %w", err)
	}
	s := &evalSystem{app: app, node: n, tokens: tokens, failed: make(chan struct{}), stop: make(chan struct{}),
		runID: time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])}
	go func() {
		select {
		case err := <-n.failed:
			s.failErr = err
			close(s.failed)
		case <-s.stop:
		}
	}()
	return s, nil
}

// Close stops the node and releases what the system opened.
func (s *evalSystem) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.node.Stop()
		if s.closeApp != nil {
			s.closeApp()
		}
	})
}

// maxTenantLen is memory.CheckTenant's limit.
const maxTenantLen = 128

// tenantID makes the tenant of the n-th tenant of this run from a label.
func (s *evalSystem) tenantID(n int64, name string) string {
	id := fmt.Sprintf("eval-%s-%d-%s", s.runID, n, sanitizeID(name))
	if len(id) > maxTenantLen {
		id = id[:maxTenantLen]
	}
	return id
}

// sanitizeID keeps the id alphabet (memory.IsIDChar) and replaces
// anything else with '-'.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 128 && memory.IsIDChar(byte(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func (s *evalSystem) NewTenant(ctx context.Context, name string) (eval.Tenant, error) {
	tenant := s.tenantID(s.seq.Add(1), name)
	tok, err := httpapi.NewToken()
	if err != nil {
		return nil, err
	}
	if err := s.tokens.Add(httpapi.TokenEntry{Tenant: tenant, Name: "eval", SHA256: httpapi.HashToken(tok)}); err != nil {
		return nil, fmt.Errorf("adding a token for tenant %s: %w", tenant, err)
	}
	return &evalTenant{sys: s, tenant: tenant, c: client.New(s.node.URL, tok),
		llmBase: s.node.p.extract.Stats().LLMCalls}, nil
}

// evalTenant is one tenant of an evalSystem.
type evalTenant struct {
	sys     *evalSystem
	tenant  string
	c       *client.Client
	llmBase int64 // the extractor's LLM calls when the tenant was made
}

func (t *evalTenant) AddTurns(ctx context.Context, turns []eval.Turn) error {
	in := make([]client.Turn, len(turns))
	for i, e := range turns {
		in[i] = client.Turn{TurnID: e.TurnID, UserID: e.UserID, AgentID: e.AgentID, SessionID: e.SessionID,
			TaskID: e.TaskID, Role: client.Role(e.Role), Content: e.Content, OccurredAt: e.OccurredAt, Metadata: e.Metadata}
		if e.Tool != nil {
			in[i].Tool = &client.ToolCall{Name: e.Tool.Name, Status: e.Tool.Status, Error: e.Tool.Error}
		}
	}
	res, err := t.c.AddTurns(ctx, in...)
	if err != nil {
		return fmt.Errorf("tenant %s: adding %d turns: %w", t.tenant, len(in), err)
	}
	if res.Rejected > 0 || res.Failed > 0 {
		for _, r := range res.Results {
			if r.Error != nil {
				return fmt.Errorf("tenant %s: %d turns rejected, %d failed; turn %s: %w", t.tenant, res.Rejected, res.Failed, r.TurnID, r.Error)
			}
		}
		return fmt.Errorf("tenant %s: %d turns rejected, %d failed", t.tenant, res.Rejected, res.Failed)
	}
	return nil
}

// Drain waits for the node's consumers to have nothing pending. The consumers
// are shared by every tenant, so this also waits for other tenants' turns.
func (t *evalTenant) Drain(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.sys.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := waitDrained(ctx, t.sys.app.JS)
	select {
	case <-t.sys.failed:
		return fmt.Errorf("the pipeline stopped: %w", t.sys.failErr)
	default:
	}
	return err
}

func (t *evalTenant) Context(ctx context.Context, q eval.ContextQuery) (eval.ContextResult, error) {
	r, err := t.c.Context(ctx, client.ContextRequest{UserID: q.UserID, AgentID: q.AgentID, SessionID: q.SessionID,
		TaskID: q.TaskID, Query: q.Query, BudgetTokens: q.BudgetTokens})
	if err != nil {
		return eval.ContextResult{}, fmt.Errorf("tenant %s: context: %w", t.tenant, err)
	}
	return eval.ContextResult{Text: r.Text, Tokens: r.TokensUsed, MemoryIDs: r.MemoryIDs}, nil
}

func (t *evalTenant) Search(ctx context.Context, q eval.SearchQuery) (eval.SearchResult, error) {
	r, err := t.c.Search(ctx, client.SearchRequest{UserID: q.UserID, Query: q.Query, TopK: q.TopK, Layers: q.Layers, Mode: q.Mode})
	if err != nil {
		return eval.SearchResult{}, fmt.Errorf("tenant %s: search: %w", t.tenant, err)
	}
	out := eval.SearchResult{Items: make([]eval.SearchItem, 0, len(r.Results))}
	for _, res := range r.Results {
		it := eval.SearchItem{ID: res.ID, Content: res.Content, Score: res.Score}
		if res.Layer == eval.LayerTurns {
			it.Kind = eval.KindTurn
			if res.TurnID != "" {
				it.TurnIDs = []string{res.TurnID}
			}
		} else {
			it.Kind = eval.KindMemory
			it.TurnIDs = res.SourceTurnIDs
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// LLMCalls counts the extractor's calls since the tenant was made. The count is
// process-wide, so it is exact only while tenants are ingested one at a time, as
// the harness does.
func (t *evalTenant) LLMCalls(context.Context) (int, error) {
	return int(t.sys.node.p.extract.Stats().LLMCalls - t.llmBase), nil
}

// Memories lists every memory of the user with its source turns, read through
// the lifecycle export (one consistent snapshot, the same records a user's data
// export holds), so that eval needs no SQL of its own. The export also records an
// "export" audit entry in the eval tenant.
func (t *evalTenant) Memories(ctx context.Context, userID string) ([]eval.StoredMemory, error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := t.sys.node.p.life.Export(ctx, t.tenant, userID, pw, "eval")
		pw.CloseWithError(err)
		done <- err
	}()
	var out []eval.StoredMemory
	dec := json.NewDecoder(pr)
	for {
		var rec lifecycle.ExportRecord
		if err := dec.Decode(&rec); err == io.EOF {
			break
		} else if err != nil {
			_ = pr.CloseWithError(err)
			<-done
			return nil, fmt.Errorf("tenant %s: reading the export of %s: %w", t.tenant, userID, err)
		}
		if rec.Kind != "memory" || rec.Memory == nil {
			continue
		}
		m := eval.StoredMemory{ID: rec.Memory.ID.String(), Content: rec.Memory.Content, Status: string(rec.Memory.Status)}
		for _, l := range rec.Lineage {
			if l.Kind == memory.LineageTurn {
				m.TurnIDs = append(m.TurnIDs, l.SourceID)
			}
		}
		out = append(out, m)
	}
	if err := <-done; err != nil {
		return nil, fmt.Errorf("tenant %s: exporting the memories of %s: %w", t.tenant, userID, err)
	}
	return out, nil
}

// Close keeps the tenant's data: it is what the report was computed from, and
// engram has no API that purges a tenant.
func (t *evalTenant) Close(context.Context) error { return nil }
