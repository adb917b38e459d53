package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/mcpserver"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

const (
	fullTok   = "egm_mcp_full"
	scopedTok = "egm_mcp_scoped" // limited to alice and bob
)

// mcpEdge serves engram's edge, /mcp included, on real parts (PostgreSQL, JetStream)
// for tenant "acme", and returns its URL.
func mcpEdge(t *testing.T, ctx context.Context) string {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := retriever.DefaultConfig()
	cfg.Tasks = tasks
	retr, err := retriever.NewRetriever(pgtest.Store(t), resolvertest.HashEmbedder(t), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{
		{Tenant: "acme", Name: "full", SHA256: httpapi.HashToken(fullTok)},
		{Tenant: "acme", Name: "scoped", SHA256: httpapi.HashToken(scopedTok), Users: []string{"alice", "bob"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Retriever: retr, Tasks: tasks, Logger: quiet,
		MCP: func(api http.Handler) http.Handler { return mcpserver.NewHTTPHandler(api, "test", nil) }})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect is an MCP client session on /mcp as token.
func connect(t *testing.T, ctx context.Context, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls a tool and decodes its structured result (of a failure too) into out.
func callTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args, out any) (text string, isErr bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if out != nil && res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, raw, err)
		}
	}
	return b.String(), res.IsError
}

type turnsOut struct {
	Accepted   int      `json:"accepted"`
	Duplicates int      `json:"duplicates"`
	Rejected   int      `json:"rejected"`
	TurnIDs    []string `json:"turn_ids"`
	Results    []struct {
		Index  int    `json:"index"`
		TurnID string `json:"turn_id"`
		Status string `json:"status"`
		Field  string `json:"field"`
		Reason string `json:"reason"`
	} `json:"results"`
}

// TestAddTurnsPartialRejection: when engram refuses some turns of a batch, the tool
// fails, yet names every turn's id and outcome, so a resend with those ids stores
// the accepted turns once.
func TestAddTurnsPartialRejection(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := connect(t, ctx, mcpEdge(t, ctx), fullTok)
	args := func(turns ...map[string]any) map[string]any {
		return map[string]any{"user_id": "ana", "session_id": "s1", "turns": turns}
	}
	good := map[string]any{"role": "user", "content": "I moved to Porto last spring"}
	bad := map[string]any{"role": "assistant", "content": "noted\u0000"}

	var first turnsOut
	text, isErr := callTool(t, ctx, cs, "add_turns", args(good, bad), &first)
	t.Logf("add_turns: %s", text)
	if !isErr {
		t.Fatalf("a batch with a rejected turn succeeded: %s", text)
	}
	if len(first.Results) != 2 || first.Accepted != 1 || first.Rejected != 1 {
		t.Fatalf("results %+v: want turn 0 accepted and turn 1 rejected", first)
	}
	id0 := first.Results[0].TurnID
	for _, c := range []struct {
		what, got, want string
	}{
		{"turn 0's status", first.Results[0].Status, "accepted"},
		{"turn 1's status", first.Results[1].Status, "rejected"},
		{"turn 1's field", first.Results[1].Field, "turns[1].content"},
		{"turn 0's id in turn_ids", first.TurnIDs[0], id0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	for _, want := range []string{id0, first.Results[1].TurnID, "turns[1].content", "turn_id"} {
		if id0 == "" || !strings.Contains(text, want) {
			t.Errorf("the error text does not name %q:\n%s", want, text)
		}
	}

	// The model resends the batch with the ids it was given, the bad turn fixed.
	good["turn_id"], bad["turn_id"], bad["content"] = id0, first.Results[1].TurnID, "noted"
	var again turnsOut
	if text, isErr := callTool(t, ctx, cs, "add_turns", args(good, bad), &again); isErr {
		t.Fatalf("resend: %s", text)
	}
	if again.Duplicates != 1 || again.Accepted != 1 || again.Results[0].Status != "duplicate" || again.TurnIDs[0] != id0 {
		t.Errorf("resend: %+v: want turn 0 a duplicate of %s, turn 1 accepted", again, id0)
	}
}

type taskOut struct {
	TaskID string         `json:"task_id"`
	UserID string         `json:"user_id"`
	State  map[string]any `json:"state"`
}

// TestTaskStateUsers: the task tools act on a user's task when given user_id, which
// another user's context never shows, as a token limited to users may.
func TestTaskStateUsers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := mcpEdge(t, ctx)
	full, scoped := connect(t, ctx, url, fullTok), connect(t, ctx, url, scopedTok)

	var set taskOut
	if text, isErr := callTool(t, ctx, full, "task_state_set", map[string]any{"task_id": "trip", "user_id": "alice",
		"state": map[string]any{"secret": "alice-plan-7731"}}, &set); isErr || set.UserID != "alice" {
		t.Fatalf("task_state_set for alice: %s %+v", text, set)
	}

	tests := []struct {
		name  string
		cs    *mcp.ClientSession
		tool  string
		args  map[string]any
		fail  string // a part of the error; "" for success
		check func(text string, out taskOut) bool
	}{
		{"alice's context shows her task", full, "get_context",
			map[string]any{"query": "the trip", "user_id": "alice", "task_id": "trip"}, "",
			func(text string, _ taskOut) bool { return strings.Contains(text, "alice-plan-7731") }},
		{"bob's context does not", full, "get_context",
			map[string]any{"query": "the trip", "user_id": "bob", "task_id": "trip"}, "",
			func(text string, _ taskOut) bool { return !strings.Contains(text, "alice-plan-7731") }},
		{"alice's task reads back", full, "task_state_get", map[string]any{"task_id": "trip", "user_id": "alice"}, "",
			func(_ string, out taskOut) bool {
				return out.State["secret"] == "alice-plan-7731" && out.UserID == "alice"
			}},
		{"the tenant has no such task", full, "task_state_get", map[string]any{"task_id": "trip"}, "404", nil},
		{"bob has no such task", full, "task_state_get", map[string]any{"task_id": "trip", "user_id": "bob"}, "404", nil},
		{"a token limited to users writes its user's task", scoped, "task_state_set",
			map[string]any{"task_id": "errand", "user_id": "bob", "state": map[string]any{"step": 1}}, "",
			func(_ string, out taskOut) bool { return out.UserID == "bob" }},
		{"and reads it", scoped, "task_state_get", map[string]any{"task_id": "errand", "user_id": "bob"}, "",
			func(_ string, out taskOut) bool { return out.State["step"] == float64(1) }},
		{"but not the tenant's", scoped, "task_state_get", map[string]any{"task_id": "errand"}, "user_id", nil},
		{"nor another user's", scoped, "task_state_set",
			map[string]any{"task_id": "errand", "user_id": "carol", "state": map[string]any{}}, "user_id", nil},
		{"a bad user id", full, "task_state_get", map[string]any{"task_id": "trip", "user_id": "a b"}, "user_id", nil},
	}
	for _, tt := range tests { // in order: later cases read what earlier ones wrote
		var out taskOut
		text, isErr := callTool(t, ctx, tt.cs, tt.tool, tt.args, &out)
		switch {
		case tt.fail != "" && (!isErr || !strings.Contains(text, tt.fail)):
			t.Errorf("%s: %s(%v): error %v %q, want an error naming %q", tt.name, tt.tool, tt.args, isErr, text, tt.fail)
		case tt.fail == "" && (isErr || !tt.check(text, out)):
			t.Errorf("%s: %s(%v): %v %q %+v", tt.name, tt.tool, tt.args, isErr, text, out)
		}
	}
}

// TestTaskIDNamed: a task id no URL path can carry is an error naming task_id, not
// the router's "no route".
func TestTaskIDNamed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := connect(t, ctx, mcpEdge(t, ctx), fullTok)
	tests := []struct {
		name, tool string
		args       map[string]any
	}{
		{"empty", "task_state_get", map[string]any{"task_id": ""}},
		{"dot", "task_state_get", map[string]any{"task_id": "."}},
		{"dot-dot", "task_state_get", map[string]any{"task_id": ".."}},
		{"dot-dot, set", "task_state_set", map[string]any{"task_id": "..", "state": map[string]any{"a": 1}}},
		{"dot, set", "task_state_set", map[string]any{"task_id": ".", "state": map[string]any{"a": 1}}},
		{"a space", "task_state_get", map[string]any{"task_id": "a b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := callTool(t, ctx, cs, tt.tool, tt.args, nil)
			if !isErr || !strings.Contains(text, "task_id") || strings.Contains(text, "no route") {
				t.Errorf("%s(%v): error %v %q, want one naming task_id", tt.tool, tt.args, isErr, text)
			}
		})
	}
}

// fakeTurns is an API whose AddTurns answers as set; the other methods are unused.
type fakeTurns struct {
	mcpserver.API
	res  func(turns []client.Turn) client.AddResult
	err  error
	sent [][]client.Turn
}

func (f *fakeTurns) AddTurns(_ context.Context, turns ...client.Turn) (client.AddResult, error) {
	f.sent = append(f.sent, turns)
	return f.res(turns), f.err
}

// TestAddTurnsOutcomes: whatever stops the SDK's AddTurns, the tool's answer gives
// every turn's id, the same ids the turns were sent with, and its outcome.
func TestAddTurnsOutcomes(t *testing.T) {
	t.Parallel()
	answer := func(statuses ...string) func([]client.Turn) client.AddResult {
		return func(turns []client.Turn) client.AddResult {
			var r client.AddResult
			for i, st := range statuses {
				r.Results = append(r.Results, client.TurnResult{Index: i, TurnID: turns[i].TurnID, Status: st})
			}
			return r
		}
	}
	unavailable := &client.APIError{Status: 503, Code: "unavailable", Message: "the stream is electing a leader"}
	tests := []struct {
		name   string
		res    func([]client.Turn) client.AddResult
		err    error
		isErr  bool
		status []string
	}{
		{"all stored", answer("accepted", "duplicate"), nil, false, []string{"accepted", "duplicate"}},
		{"a partial 503 after the retries", answer("accepted", "failed"), fmt.Errorf("giving up: %w", unavailable),
			true, []string{"accepted", "failed"}},
		{"no answer at all", answer(), errors.New("connection refused"), true, []string{"unknown", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			api := &fakeTurns{res: tt.res, err: tt.err}
			srv := mcpserver.New(mcpserver.Config{API: func(http.Header) (mcpserver.API, error) { return api, nil }})
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			var out turnsOut
			text, isErr := callTool(t, ctx, cs, "add_turns", map[string]any{"user_id": "ana", "session_id": "s1",
				"turns": []map[string]any{{"role": "user", "content": "hi"}, {"role": "user", "content": "bye", "turn_id": "mine"}}}, &out)
			if isErr != tt.isErr || len(out.Results) != 2 || len(api.sent) != 1 {
				t.Fatalf("error %v (want %v) %q, results %+v", isErr, tt.isErr, text, out)
			}
			for i, o := range out.Results {
				sent := api.sent[0][i].TurnID
				if sent == "" || o.TurnID != sent || out.TurnIDs[i] != sent || o.Status != tt.status[i] ||
					(tt.isErr && !strings.Contains(text, sent)) {
					t.Errorf("turn %d: %+v, sent as %q; want status %s (text %q)", i, o, sent, tt.status[i], text)
				}
			}
			if api.sent[0][1].TurnID != "mine" {
				t.Errorf("the given turn_id was replaced by %q", api.sent[0][1].TurnID)
			}
		})
	}
}
