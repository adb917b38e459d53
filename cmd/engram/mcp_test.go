package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/mcpserver"
)

// runMainEnv makes the test binary run engram's main instead of the tests, so tests
// (and the TypeScript client) can spawn it as `engram mcp` without building a binary.
const runMainEnv = "ENGRAM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// mcpNode is a real engram (HTTP API with /mcp, workers, PostgreSQL, JetStream) with
// one token for each tenant, t1 and t2.
func mcpNode(t *testing.T) (*node, *App, map[string]string) {
	t.Helper()
	app := testApp(t)
	toks := map[string]string{}
	var entries []httpapi.TokenEntry
	for _, tenant := range []string{"t1", "t2"} {
		tok, err := httpapi.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		toks[tenant] = tok
		entries = append(entries, httpapi.TokenEntry{Tenant: tenant, Name: "mcp-test", SHA256: httpapi.HashToken(tok)})
	}
	tokens, err := httpapi.NewTokens(entries)
	if err != nil {
		t.Fatal(err)
	}
	n, err := startNode(context.Background(), app, tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n, app, toks
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

func connect(t *testing.T, ctx context.Context, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "engram-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func httpTransport(url, token string) mcp.Transport {
	return &mcp.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
}

// call calls a tool and decodes its structured result into out (if non-nil); it
// fails the test on a tool error unless wantErr.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error %s", name, args, toolText(res))
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
	return res
}

// callErr calls a tool that must fail and returns its error text.
func callErr(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded: %s", name, args, toolText(res))
	}
	t.Logf("%s(%v): %s", name, args, toolText(res))
	return toolText(res)
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPTools drives every tool through each transport a client can use against a
// real engram: streamable HTTP at /mcp, `engram mcp` over stdio (this binary,
// spawned), and the stdio server's tools over an in-memory transport.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	n, app, toks := mcpNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	transports := []struct {
		name string
		tr   func() mcp.Transport
	}{
		{"streamable HTTP", func() mcp.Transport { return httpTransport(n.URL, toks["t1"]) }},
		{"stdio engram mcp", func() mcp.Transport {
			cmd := exec.Command(os.Args[0], "mcp")
			cmd.Env = append(os.Environ(), runMainEnv+"=1", "ENGRAM_URL="+n.URL, "ENGRAM_TOKEN="+toks["t1"], "ENGRAM_LOG_LEVEL=warn")
			cmd.Stderr = os.Stderr
			return &mcp.CommandTransport{Command: cmd}
		}},
		{"in-memory", func() mcp.Transport {
			st, ct := mcp.NewInMemoryTransports()
			srv := mcpserver.New(mcpserver.Config{API: mcpserver.Remote(n.URL, toks["t1"])})
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ss.Close() })
			return ct
		}},
	}
	for i, tc := range transports {
		user := "mcp-user-" + string(rune('a'+i))
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, ctx, tc.tr())
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				schema, _ := json.Marshal(tl.InputSchema)
				if len(tl.Description) < 80 || !strings.Contains(string(schema), `"description"`) || tl.OutputSchema == nil {
					t.Errorf("tool %s: description %q, input schema %s, output schema %v: want a description a model can use",
						tl.Name, tl.Description, schema, tl.OutputSchema)
				}
			}
			slices.Sort(names)
			want := []string{"add_turns", "forget", "get_context", "memory_history", "remember", "search_memory", "task_state_get", "task_state_set"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}

			var rem struct {
				CandidateID string `json:"candidate_id"`
			}
			call(t, ctx, cs, "remember", map[string]any{"user_id": user, "content": "The user is allergic to peanuts",
				"category": "constraint", "key": "diet.allergy"}, &rem)
			if rem.CandidateID == "" {
				t.Fatal("remember: no candidate id")
			}
			var turns struct {
				Accepted int      `json:"accepted"`
				TurnIDs  []string `json:"turn_ids"`
			}
			call(t, ctx, cs, "add_turns", map[string]any{"user_id": user, "session_id": "s1", "turns": []map[string]any{
				{"role": "user", "content": "以后安排会议尽量避开每周五下午，因为周五要写周报"},
				{"role": "assistant", "content": "好的，记住了。"},
			}}, &turns)
			if turns.Accepted != 2 || len(turns.TurnIDs) != 2 {
				t.Fatalf("add_turns: %+v", turns)
			}
			if err := waitDrained(ctx, app.JS); err != nil {
				t.Fatal(err)
			}

			var sr struct {
				Results []struct{ ID, Content, Key string }
			}
			call(t, ctx, cs, "search_memory", map[string]any{"query": "peanuts allergy", "user_id": user}, &sr)
			if len(sr.Results) == 0 || !strings.Contains(sr.Results[0].Content, "peanuts") || sr.Results[0].Key != "diet.allergy" {
				t.Fatalf("search_memory after remember: %+v", sr.Results)
			}
			id := sr.Results[0].ID
			call(t, ctx, cs, "search_memory", map[string]any{"query": "周五下午开会", "user_id": user}, &sr)
			if len(sr.Results) == 0 || !strings.Contains(sr.Results[0].Content, "周五") {
				t.Fatalf("search_memory after add_turns: %+v", sr.Results)
			}

			var cr struct {
				Text      string   `json:"text"`
				MemoryIDs []string `json:"memory_ids"`
			}
			res := call(t, ctx, cs, "get_context", map[string]any{"query": "What snack can I bring the user? Any peanuts?", "user_id": user}, &cr)
			if !strings.Contains(cr.Text, "[memory_ref: "+id+"]") || !slices.Contains(cr.MemoryIDs, id) || toolText(res) != cr.Text {
				t.Fatalf("get_context does not cite %s: %+v (text content %q)", id, cr, toolText(res))
			}

			var hist struct {
				Versions []struct{ Change, Content string }
			}
			call(t, ctx, cs, "memory_history", map[string]any{"memory_id": id}, &hist)
			if len(hist.Versions) != 1 || hist.Versions[0].Change != "add" {
				t.Fatalf("memory_history: %+v", hist)
			}

			var ts struct {
				State    map[string]any `json:"state"`
				Revision uint64         `json:"revision"`
			}
			task := "task-" + user
			call(t, ctx, cs, "task_state_set", map[string]any{"task_id": task, "state": map[string]any{"step": 2, "plan": []string{"a", "b"}}}, &ts)
			call(t, ctx, cs, "task_state_get", map[string]any{"task_id": task}, &ts)
			if ts.State["step"] != float64(2) || ts.Revision == 0 {
				t.Fatalf("task_state_get: %+v", ts)
			}

			var fg struct{ Deleted string }
			call(t, ctx, cs, "forget", map[string]any{"memory_id": id}, &fg)
			if fg.Deleted != id {
				t.Fatalf("forget: %+v", fg)
			}
			if msg := callErr(t, ctx, cs, "memory_history", map[string]any{"memory_id": id}); !strings.Contains(msg, "404") {
				t.Errorf("memory_history of a forgotten memory: %q, want the API's 404", msg)
			}

			// Bad input answers a tool error naming the field, never a protocol failure.
			for _, bad := range []struct {
				tool  string
				args  map[string]any
				field string
			}{
				{"remember", map[string]any{"user_id": user}, "content"},
				{"remember", map[string]any{"user_id": "a b", "content": "x likes tea"}, "user_id"},
				{"search_memory", map[string]any{"query": "x", "user_id": user, "top_k": "ten"}, "top_k"},
				{"forget", map[string]any{"memory_id": "not-a-uuid"}, "memory_id"},
				{"memory_history", map[string]any{"memory_id": "42"}, "memory_id"},
				{"task_state_get", map[string]any{"task_id": "never-set"}, "task_id"},
				{"add_turns", map[string]any{"user_id": user, "session_id": "s1", "turns": []map[string]any{{"role": "narrator", "content": "x"}}}, "role"},
			} {
				if msg := callErr(t, ctx, cs, bad.tool, bad.args); !strings.Contains(msg, bad.field) {
					t.Errorf("%s(%v): error %q does not name %s", bad.tool, bad.args, msg, bad.field)
				}
			}
		})
	}
}

// TestMCPHTTPAuth: /mcp needs the edge's bearer token, and the tenant is the token's.
func TestMCPHTTPAuth(t *testing.T) {
	t.Parallel()
	n, app, toks := mcpNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, auth := range []string{"", "Bearer nope"} {
		req, _ := http.NewRequestWithContext(ctx, "POST", n.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var eb httpapi.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || eb.Error.Code != "unauthenticated" {
			t.Errorf("POST /mcp with Authorization %q: %d %+v, want 401 unauthenticated", auth, resp.StatusCode, eb)
		}
	}

	t1 := connect(t, ctx, httpTransport(n.URL, toks["t1"]))
	t2 := connect(t, ctx, httpTransport(n.URL, toks["t2"]))
	call(t, ctx, t1, "remember", map[string]any{"user_id": "shared-name", "content": "The user's locker code is in the blue notebook"}, nil)
	call(t, ctx, t1, "task_state_set", map[string]any{"task_id": "shared-task", "state": map[string]any{"owner": "t1"}}, nil)
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	var sr struct{ Results []struct{ ID string } }
	call(t, ctx, t1, "search_memory", map[string]any{"query": "locker code", "user_id": "shared-name"}, &sr)
	if len(sr.Results) != 1 {
		t.Fatalf("t1 search: %+v", sr)
	}
	id := sr.Results[0].ID
	var other struct{ Results []struct{ ID string } }
	call(t, ctx, t2, "search_memory", map[string]any{"query": "locker code", "user_id": "shared-name"}, &other)
	if len(other.Results) != 0 {
		t.Errorf("tenant t2 sees t1's memories: %+v", other)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_history", map[string]any{"memory_id": id}},
		{"forget", map[string]any{"memory_id": id}},
		{"task_state_get", map[string]any{"task_id": "shared-task"}},
	} {
		if msg := callErr(t, ctx, t2, c.tool, c.args); !strings.Contains(msg, "404") {
			t.Errorf("t2 %s on t1's data: %q, want 404", c.tool, msg)
		}
	}
	call(t, ctx, t1, "memory_history", map[string]any{"memory_id": id}, nil) // still there
}

// TestMCPTypeScriptSDK runs tests/mcp-ts/mcp-client.mjs: the official MCP TypeScript
// SDK drives a real engram over stdio (spawning this binary as `engram mcp`) and over
// /mcp. scripts/npm-tools.sh installs the SDK (make test runs it); without npm the
// test is skipped, unless ENGRAM_REQUIRE_NPM=1.
func TestMCPTypeScriptSDK(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "tests", "mcp-ts")
	skip := func(why string) {
		if os.Getenv("ENGRAM_REQUIRE_NPM") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: the TypeScript MCP client is not run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		skip("the MCP TypeScript SDK is not installed: run `bash scripts/npm-tools.sh install` (make test does)")
	}
	n, _, toks := mcpNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extra, _ := json.Marshal(map[string]string{runMainEnv: "1", "ENGRAM_LOG_LEVEL": "warn"})
	cmd := exec.CommandContext(ctx, nodeBin, "--test", "--test-reporter=spec", "mcp-client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ENGRAM_URL="+n.URL, "ENGRAM_TOKEN="+toks["t1"],
		"ENGRAM_MCP_COMMAND="+self, `ENGRAM_MCP_ARGS=["mcp"]`, "ENGRAM_MCP_ENV="+string(extra))
	out, err := cmd.CombinedOutput()
	t.Logf("node --test mcp-client.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript MCP client failed: %v", err)
	}
	if !strings.Contains(string(out), "pass 2") {
		t.Fatalf("the TypeScript MCP client did not pass its two tests")
	}
}

// TestMCPCommandUsage: `engram mcp` without a token is a usage error naming it.
func TestMCPCommandUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"mcp"}, nil, 2, "ENGRAM_TOKEN"},
		{[]string{"mcp", "extra"}, map[string]string{"ENGRAM_TOKEN": "t"}, 2, `unknown argument "extra"`},
		{[]string{"mcp", "--help"}, nil, 0, "over stdio"},
		{[]string{"mcp", "--url", "localhost:8080"}, map[string]string{"ENGRAM_TOKEN": "t"}, 2, "--url"},
	} {
		var out, errOut strings.Builder
		code := run(context.Background(), tc.args, envMap(tc.env), &out, &errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("engram %v: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, out.String(), errOut.String())
		}
	}
}
