package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
)

type listPage struct {
	Memories   []memory.Memory `json:"memories"`
	NextCursor string          `json:"next_cursor"`
}

// createMemory stores one memory of tenant directly, as the resolver would.
func createMemory(t *testing.T, s *memory.Store, tenant string, n memory.NewMemory) memory.Memory {
	t.Helper()
	if n.Scope == "" {
		n.Scope = memory.ScopeUser
	}
	if n.Type == "" {
		n.Type = memory.Semantic
	}
	if n.Category == "" {
		n.Category = memory.CatFact
	}
	n.Importance, n.Confidence, n.Source, n.Actor = 0.5, 0.9, memory.SourceUser, "test"
	if n.ValidFrom.IsZero() {
		n.ValidFrom = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	}
	m, err := s.CreateMemory(testCtx(t), tenant, n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestListMemoriesPagesWhileMemoriesArrive(t *testing.T) {
	t.Parallel()
	store := pgtest.Store(t)
	initial := map[uuid.UUID]bool{}
	for i := range 23 {
		m := createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", Content: fmt.Sprintf("fact number %d", i)})
		initial[m.ID] = true
	}
	createMemory(t, store, tenant, memory.NewMemory{UserID: "u2", Content: "someone else's"})
	createMemory(t, store, "globex", memory.NewMemory{UserID: "u1", Content: "another tenant's"})
	ts := newTenantServer(t, httpapi.Config{Memories: lifecycle.NewOps(store, nil)}, "t", tenant, "globex")

	seen := map[uuid.UUID]int{}
	arrived := map[uuid.UUID]bool{}
	cur, pages := "", 0
	for {
		path := "/v1/memories?user_id=u1&limit=5"
		if cur != "" {
			path += "&cursor=" + url.QueryEscape(cur)
		}
		code, body := ts.do(tenant, "GET", path, nil)
		var p listPage
		if code != 200 || json.Unmarshal(body, &p) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		pages++
		for _, m := range p.Memories {
			if m.UserID != "u1" || m.Tenant != tenant {
				t.Fatalf("listed %+v: not u1 of %s", m, tenant)
			}
			seen[m.ID]++
		}
		// New memories arrive between pages (for the first few pages).
		if pages <= 3 {
			for i := range 2 {
				m := createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", Content: fmt.Sprintf("late fact %d.%d", pages, i)})
				arrived[m.ID] = true
			}
		}
		if p.NextCursor == "" {
			break
		}
		cur = p.NextCursor
		if pages > 50 {
			t.Fatal("paging does not end")
		}
	}
	for id := range initial {
		if seen[id] != 1 {
			t.Errorf("memory %s seen %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("memory %s seen %d times", id, n)
		}
		if !initial[id] && !arrived[id] {
			t.Errorf("memory %s is neither an initial nor an arriving one", id)
		}
	}
	// Memories that arrived after the pages that now come after them are met at the end.
	for id := range arrived {
		if seen[id] != 1 {
			t.Errorf("arriving memory %s seen %d times, want once (it sorts after the cursor)", id, seen[id])
		}
	}
}

func TestListMemoriesFilters(t *testing.T) {
	t.Parallel()
	store := pgtest.Store(t)
	proj := createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", Content: "uses postgres", Key: "db",
		Metadata: map[string]any{"project": "apollo", "team": "core"}})
	other := createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", Content: "likes tea", Type: memory.Episodic,
		Category: memory.CatEvent, Metadata: map[string]any{"project": "gemini"}})
	agent := createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", AgentID: "coder", Content: "writes go",
		Category: memory.CatSkill, Type: memory.Procedural})
	pgtest.Exec(t, store.Pool(), tenant, `UPDATE memories SET status = 'archived' WHERE id = $1`, other.ID)
	ts := newTenantServer(t, httpapi.Config{Memories: lifecycle.NewOps(store, nil)}, "t", tenant, "globex")

	list := func(who, query string) ([]uuid.UUID, int, string) {
		code, body := ts.do(who, "GET", "/v1/memories?"+query, nil)
		var p listPage
		_ = json.Unmarshal(body, &p)
		var ids []uuid.UUID
		for _, m := range p.Memories {
			ids = append(ids, m.ID)
		}
		return ids, code, string(body)
	}
	for _, tc := range []struct {
		name, query string
		want        []uuid.UUID
	}{
		{"everything", "", []uuid.UUID{proj.ID, other.ID, agent.ID}},
		{"metadata equality", "metadata[project]=apollo", []uuid.UUID{proj.ID}},
		{"two metadata keys", "metadata[project]=apollo&metadata[team]=core", []uuid.UUID{proj.ID}},
		{"metadata without a match", "metadata[project]=apollo&metadata[team]=web", nil},
		{"status", "status=archived", []uuid.UUID{other.ID}},
		{"statuses as a list", "status=archived,active", []uuid.UUID{proj.ID, other.ID, agent.ID}},
		{"type", "type=procedural", []uuid.UUID{agent.ID}},
		{"category", "category=fact&category=event", []uuid.UUID{proj.ID, other.ID}},
		{"key", "key=db", []uuid.UUID{proj.ID}},
		{"agent", "agent_id=coder", []uuid.UUID{agent.ID}},
		{"other user", "user_id=u9", nil},
		{"updated after", "updated_after=" + url.QueryEscape(proj.UpdatedAt.Format(time.RFC3339Nano)), []uuid.UUID{other.ID, agent.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code, body := list(tenant, tc.query)
			if code != 200 || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%d %v, want %v (%s)", code, got, tc.want, body)
			}
		})
	}
	if got, code, _ := list("globex", ""); code != 200 || len(got) != 0 {
		t.Errorf("another tenant lists %v", got)
	}
	// Metadata comes back with the memory.
	code, body := ts.do(tenant, "GET", "/v1/memories?metadata[project]=apollo", nil)
	if code != 200 || !strings.Contains(string(body), `"metadata":{"project":"apollo","team":"core"}`) {
		t.Errorf("listing lacks the metadata: %s", body)
	}

	_, _, first := list(tenant, "limit=1")
	var p listPage
	if err := json.Unmarshal([]byte(first), &p); err != nil || p.NextCursor == "" {
		t.Fatalf("limit=1: %s", first)
	}
	for _, tc := range []struct{ name, query, field string }{
		{"unknown parameter", "usr_id=u1", "usr_id"},
		{"limit zero", "limit=0", "limit"},
		{"limit too large", "limit=501", "limit"},
		{"bad status", "status=gone", "status"},
		{"bad type", "type=x", "type"},
		{"bad time", "updated_after=yesterday", "updated_after"},
		{"bad cursor", "cursor=abc", "cursor"},
		{"cursor of other filters", "status=active&cursor=" + url.QueryEscape(p.NextCursor), "cursor"},
		{"empty metadata key", "metadata[]=x", "metadata[]"},
		{"bad user", "user_id=a*b", "user_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(tenant, "GET", "/v1/memories?"+tc.query, nil)
			var eb httpapi.ErrorBody
			if code != 400 || json.Unmarshal(body, &eb) != nil || eb.Error.Field != tc.field {
				t.Errorf("%d %s, want 400 naming %s", code, body, tc.field)
			}
		})
	}
}

func TestSearchMetadataFilter(t *testing.T) {
	t.Parallel()
	store, emb := pgtest.Store(t), hashEmbedder(t)
	ctx := testCtx(t)
	for _, m := range []struct {
		content string
		meta    map[string]any
	}{
		{"the deploy runs on kubernetes", map[string]any{"project": "apollo"}},
		{"the deploy runs on bare metal", map[string]any{"project": "gemini"}},
		{"the deploy runs on a laptop", nil},
	} {
		vs, err := emb.Embed(ctx, []string{m.content})
		if err != nil {
			t.Fatal(err)
		}
		createMemory(t, store, tenant, memory.NewMemory{UserID: "u1", Content: m.content, Metadata: m.meta,
			Embeddings: []memory.Embedding{{Model: emb.Model(), Vector: vs[0]}}})
	}
	r, err := retriever.NewRetriever(store, emb, retriever.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTenantServer(t, httpapi.Config{Retriever: r}, "t", tenant)
	code, body := ts.do(tenant, "POST", "/v1/search", strings.NewReader(`{"user_id":"u1","query":"deploy","metadata":{"project":"apollo"}}`))
	var resp retriever.SearchResponse
	if code != 200 || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("search: %d %s", code, body)
	}
	if len(resp.Results) != 1 || resp.Results[0].Content != "the deploy runs on kubernetes" || resp.Results[0].Metadata["project"] != "apollo" {
		t.Fatalf("results %s: want the apollo memory only, with its metadata", body)
	}
	code, body = ts.do(tenant, "POST", "/v1/search", strings.NewReader(`{"user_id":"u1","query":"deploy"}`))
	if err := json.Unmarshal(body, &resp); code != 200 || err != nil || len(resp.Results) != 3 {
		t.Fatalf("unfiltered search: %d %s", code, body)
	}
	code, body = ts.do(tenant, "POST", "/v1/search", strings.NewReader(`{"user_id":"u1","query":"deploy","metadata":{"":"x"}}`))
	if code != 400 || !strings.Contains(string(body), `"field":"metadata"`) {
		t.Fatalf("empty metadata key: %d %s", code, body)
	}
}

func TestDeleteUserMemories(t *testing.T) {
	t.Parallel()
	store, emb := pgtest.Store(t), hashEmbedder(t)
	ids := seedEpisodes(t, store, emb, tenant, "u1", "went hiking on saturday", "bought a new laptop", "moved to lisbon")
	keep := seedEpisodes(t, store, emb, tenant, "u2", "plays the cello")
	pgtest.Exec(t, store.Pool(), tenant, `INSERT INTO applied_candidates (tenant, candidate_id, memory_id, decision, reason)
		VALUES ($1, 'cand-x', $2, 'add', 'test')`, tenant, ids[0])
	ts := newTenantServer(t, httpapi.Config{Memories: lifecycle.NewOps(store, emb),
		Lifecycle: lifecycle.NewLifecycle(store, nil, nil, nil)}, "t", tenant, "globex")
	count := func(sql string, args ...any) int { return pgtest.Count(t, store.Pool(), tenant, sql, args...) }

	if code, body := ts.do(tenant, "DELETE", "/v1/users/u1/memories?turns=maybe", nil); code != 400 || !strings.Contains(string(body), `"field":"turns"`) {
		t.Fatalf("turns=maybe: %d %s", code, body)
	}
	if code, body := ts.do("globex", "DELETE", "/v1/users/u1/memories", nil); code != 200 || !strings.Contains(string(body), `"memories":0`) {
		t.Fatalf("another tenant: %d %s", code, body)
	}
	code, body := ts.do(tenant, "DELETE", "/v1/users/u1/memories", nil)
	var rep lifecycle.UserMemoriesDeletion
	if code != 200 || json.Unmarshal(body, &rep) != nil || rep.Memories != 3 || !rep.TurnsKept || rep.Versions != 3 || rep.Embeddings != 3 {
		t.Fatalf("forget: %d %s", code, body)
	}
	if n := count(`SELECT count(*) FROM memories WHERE user_id = 'u1'`); n != 0 {
		t.Errorf("%d memories of u1 left", n)
	}
	if n := count(`SELECT count(*) FROM turns WHERE user_id = 'u1'`); n != 3 {
		t.Errorf("%d turns of u1, want the 3 kept", n)
	}
	if n := count(`SELECT count(*) FROM memory_versions WHERE memory_id = ANY($1)`, ids); n != 0 {
		t.Errorf("%d versions of forgotten memories left", n)
	}
	// As a hard delete of one memory: an audit row per memory with its content hash,
	// and the ledger entry kept as dropped, so the candidate cannot bring it back.
	if n := count(`SELECT count(*) FROM audit_log WHERE action = 'delete' AND memory_id = ANY($1) AND content_hash IS NOT NULL`, ids); n != 3 {
		t.Errorf("%d delete audit rows, want 3", n)
	}
	if n := count(`SELECT count(*) FROM applied_candidates WHERE candidate_id = 'cand-x' AND memory_id IS NULL AND decision = 'drop'`); n != 1 {
		t.Errorf("the ledger entry was not kept as dropped")
	}
	if n := count(`SELECT count(*) FROM memories WHERE id = $1`, keep[0]); n != 1 {
		t.Errorf("another user's memory was deleted")
	}
	code, body = ts.do(tenant, "DELETE", "/v1/users/u1/memories?turns=true", nil)
	if code != 200 || json.Unmarshal(body, &rep) != nil || rep.TurnsKept || rep.Turns != 3 || rep.Erasure == nil {
		t.Fatalf("forget with turns: %d %s", code, body)
	}
	if n := count(`SELECT count(*) FROM turns WHERE user_id = 'u1'`); n != 0 {
		t.Errorf("%d turns of u1 left after turns=true", n)
	}
}
