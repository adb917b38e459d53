package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/internal/mcpserver"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// liveHealth checks the real PostgreSQL and NATS connection of the example server.
type liveHealth struct {
	store *memory.Store
	nc    *nats.Conn
}

func (h liveHealth) Check(ctx context.Context) (map[string]string, bool) {
	checks := map[string]string{"postgres": "ok", "nats": "ok"}
	if err := h.store.Pool().Ping(ctx); err != nil {
		checks["postgres"] = "unreachable: " + err.Error()
	}
	if !h.nc.IsConnected() {
		checks["nats"] = "disconnected"
	}
	return checks, checks["postgres"] == "ok" && checks["nats"] == "ok"
}

// exampleServer is the edge over real services: PostgreSQL (its own database),
// JetStream, the resolver (to seed memories as the pipeline would) and the MCP server.
type exampleServer struct {
	t        *testing.T
	url      string
	token    string
	tokens   *Tokens
	store    *memory.Store
	resolver *consolidator.Resolver
}

func newExampleServer(t *testing.T) *exampleServer {
	t.Helper()
	ctx := resolvertest.Ctx(t)
	store, emb := pgtest.Store(t), resolvertest.HashEmbedder(t)
	ns := natstest.Start(t)
	nc, js := ns.Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	in, err := ingest.NewService(ingest.Config{Publisher: js})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	rcfg := retriever.DefaultConfig()
	rcfg.Tasks = tasks
	retr, err := retriever.NewRetriever(store, emb, rcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := NewTokens([]TokenEntry{{Tenant: "acme", Name: "docs", SHA256: HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Tokens: tokens, Turns: in, Memories: lifecycle.NewOps(store, emb),
		Lifecycle: lifecycle.NewLifecycle(store, js, tasks, nil), Retriever: retr, Tasks: tasks,
		Health: liveHealth{store: store, nc: nc},
		MCP:    func(api http.Handler) http.Handler { return mcpserver.NewHTTPHandler(api, "docs", nil) }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &exampleServer{t: t, url: srv.URL, token: tok, tokens: tokens, store: store,
		resolver: consolidator.NewResolver(store, emb, nil, consolidator.ResolverConfig{}, nil)}
}

// call sends a request (body: a JSON value, or a string sent as contentType) and
// returns the status and the decoded answer.
func (s *exampleServer) call(method, path string, body any, contentType string, auth bool, header ...string) (int, any, []byte) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(resolvertest.Ctx(s.t), method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", jsonContent(contentType))
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			s.t.Fatalf("%s %s: decoding %s: %v", method, path, raw, err)
		}
	} else if len(raw) > 0 {
		out = string(raw)
	}
	return resp.StatusCode, out, raw
}

// recordExamples calls every documented operation once, as a client would, and
// returns what was sent and answered by operation id, with the shared error
// answers under "errors:<status>". A call that does not answer as documented
// fails the test.
func recordExamples(t *testing.T) map[string]example {
	t.Helper()
	s := newExampleServer(t)
	ex := map[string]example{}
	record := func(id, method, path string, body any, contentType string, want int, header ...string) any {
		t.Helper()
		status, out, raw := s.call(method, path, body, contentType, true, header...)
		if status != want {
			t.Fatalf("%s: %s %s: %d %s, want %d", id, method, path, status, raw, want)
		}
		ex[id] = example{Status: status, Request: body, Response: out, RequestType: contentType}
		return out
	}
	// JSON bodies are recorded as sent on the wire (decoded), like the answers.
	wire := func(v any) any {
		raw, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	field := func(v any, path ...string) string {
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		str, _ := v.(string)
		return str
	}

	// Memories as the pipeline resolves them.
	var ids []string
	for _, c := range []memory.Candidate{
		resolvertest.Candidate("acme", "ana", "Ana prefers meetings after 10am", resolvertest.WithKey("meeting.time")),
		resolvertest.Candidate("acme", "ana", "Ana is allergic to peanuts", resolvertest.WithKey("diet.allergy")),
		resolvertest.Candidate("acme", "ana", "Ana's team ships on Thursdays"),
	} {
		d := resolvertest.Resolve(t, s.resolver, c, consolidator.KindAdd)
		ids = append(ids, d.MemoryID.String())
	}

	record("liveness", "GET", "/healthz", nil, "", 200)
	record("readiness", "GET", "/readyz", nil, "", 200)
	record("addTurns", "POST", "/v1/turns", wire(map[string]any{"turns": []map[string]any{
		{"turn_id": "0b6c1d1e-7f0e-4c51-9d0b-3a1e5b2f9c01", "user_id": "ana", "session_id": "s-42", "role": "user",
			"name": "Ana", "content": "I moved to Porto last spring.", "occurred_at": "2026-01-05T09:00:00Z"},
		{"turn_id": "0b6c1d1e-7f0e-4c51-9d0b-3a1e5b2f9c02", "user_id": "ana", "session_id": "s-42", "role": "assistant",
			"content": "Noted: you live in Porto.", "occurred_at": "2026-01-05T09:00:05Z"},
	}}), "", 202)
	record("remember", "POST", "/v1/memories", wire(map[string]any{"id": "remember-ana-tea", "user_id": "ana",
		"category": "preference", "key": "drink.favourite", "content": "Ana prefers green tea", "importance": 0.7}), "", 202)
	sr := record("search", "POST", "/v1/search", wire(map[string]any{"user_id": "ana", "query": "when can we meet?", "top_k": 3}), "", 200)
	record("context", "POST", "/v1/context", wire(map[string]any{"user_id": "ana", "session_id": "s-43",
		"query": "Book a lunch with Ana next week", "budget_tokens": 400}), "", 200)
	record("getRetrieval", "GET", "/v1/retrievals/"+field(sr, "retrieval_id"), nil, "", 200)
	record("listMemories", "GET", "/v1/memories?user_id=ana&status=active&limit=2", nil, "", 200)
	record("getMemory", "GET", "/v1/memories/"+ids[0], nil, "", 200)
	record("correctMemory", "PATCH", "/v1/memories/"+ids[0], wire(map[string]any{
		"content": "Ana prefers meetings after 11am", "reason": "she said so on the phone", "expect_version": 1}), "", 200)
	record("rollbackMemory", "POST", "/v1/memories/"+ids[0]+"/rollback", wire(map[string]any{"version": 1, "reason": "the call was about another Ana"}), "", 200)
	record("memoryHistory", "GET", "/v1/memories/"+ids[0]+"/history", nil, "", 200)
	record("deprecateMemory", "POST", "/v1/memories/"+ids[2]+"/deprecate", wire(map[string]any{"reason": "the team changed its release day"}), "", 200)
	pgtest.Exec(t, s.store.Pool(), "acme", `UPDATE memories SET status = 'archived' WHERE id = $1`, ids[1])
	record("restoreMemory", "POST", "/v1/memories/"+ids[1]+"/restore", nil, "", 200)
	record("putTaskState", "PUT", "/v1/tasks/trip-plan-7/state", wire(map[string]any{"step": 2, "plan": []string{"flights", "hotel", "dinner"}}), "", 200)
	record("getTaskState", "GET", "/v1/tasks/trip-plan-7/state", nil, "", 200)
	record("deleteTaskState", "DELETE", "/v1/tasks/trip-plan-7/state", nil, "", 204)
	export := record("exportUser", "GET", "/v1/users/ana/export", nil, "", 200)
	record("importUser", "POST", "/v1/users/ana-copy/import", export, "application/x-ndjson", 200)
	record("deleteMemory", "DELETE", "/v1/memories/"+ids[2], nil, "", 200)
	record("deleteUser", "DELETE", "/v1/users/ana-copy", nil, "", 200)
	record("mcp", "POST", "/mcp", wire(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "search_memory", "arguments": map[string]any{"user_id": "ana", "query": "peanuts", "top_k": 1}}}),
		"", 200, "Accept", "application/json, text/event-stream")

	// The shared error answers, from real refusals.
	for _, c := range []struct {
		status       int
		method, path string
		body         any
		auth         bool
	}{
		{400, "POST", "/v1/search", map[string]any{"user_id": "ana", "query": "tea", "top_k": "ten"}, true},
		{401, "GET", "/v1/memories/" + ids[0], nil, false},
		{404, "GET", "/v1/memories/00000000-0000-7000-8000-000000000000", nil, true},
		{405, "PUT", "/v1/turns", nil, true},
		{409, "POST", "/v1/memories/" + ids[0] + "/restore", nil, true},
		{413, "PUT", "/v1/tasks/big/state", `{"blob":"` + strings.Repeat("x", 70<<10) + `"}`, true},
	} {
		status, out, raw := s.call(c.method, c.path, c.body, "", c.auth)
		if status != c.status {
			t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, status, raw, c.status)
		}
		ex["errors:"+strconv.Itoa(c.status)] = example{Status: status, Response: out}
	}
	// A node that does not run a service answers its routes 503.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/search", strings.NewReader(`{"user_id":"ana","query":"tea"}`))
	req.Header.Set("Authorization", "Bearer "+s.token)
	New(Config{Tokens: s.tokens}).ServeHTTP(rec, req)
	var out any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("search on a node without a retriever: %d %s", rec.Code, rec.Body)
	}
	ex["errors:503"] = example{Status: rec.Code, Response: out}
	// Last: it forgets the memories the calls above use.
	record("deleteUserMemories", "DELETE", "/v1/users/ana/memories", nil, "", 200)
	return ex
}
