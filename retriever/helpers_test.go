package retriever_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

type env struct {
	t     *testing.T
	ctx   context.Context
	store *memory.Store
	pool  *pgxpool.Pool // the store's, for test set-up and checks through pgtest
	emb   llm.Embedder
	r     *retriever.Retriever
}

func newEnv(t *testing.T, emb llm.Embedder, mod func(*retriever.Config)) *env {
	t.Helper()
	if emb == nil {
		h, err := llm.NewHashEmbedder(0)
		if err != nil {
			t.Fatal(err)
		}
		emb = h
	}
	cfg := retriever.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	pool := pgtest.Pool(t)
	store := memory.NewStore(pool)
	r, err := retriever.NewRetriever(store, emb, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: testCtx(t), store: store, pool: pool, emb: emb, r: r}
}

// fakeEmbedder is an OpenAI-compatible embedder on the fake server, whose vectors the
// test controls through f.
func fakeEmbedder(t *testing.T, f func(input string) []float32) llm.Embedder {
	t.Helper()
	srv := fakeopenai.New(t)
	srv.SetEmbedFunc(func(_, input string) []float32 { return f(input) })
	emb, err := llm.NewOpenAIEmbedder(llm.EmbedConfig{BaseURL: srv.URL(), Model: "fake-embed", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return emb
}

// unit makes a normalised vector from components.
func unit(xs ...float64) []float32 {
	var n float64
	for _, x := range xs {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x / n)
	}
	return out
}

type mem struct {
	user       string
	content    string
	typ        memory.Type
	cat        memory.Category
	importance float64
	confidence float64
	status     memory.Status
	expire     *time.Time
	validFrom  time.Time
	scope      memory.Scope
	turns      []string
}

func (e *env) add(tenant string, m mem) memory.Memory {
	e.t.Helper()
	if m.typ == "" {
		m.typ = memory.Semantic
	}
	if m.cat == "" {
		m.cat = memory.CatFact
	}
	if m.importance == 0 {
		m.importance = 0.5
	}
	if m.confidence == 0 {
		m.confidence = 0.8
	}
	if m.scope == "" {
		m.scope = memory.ScopeUser
	}
	vs, err := e.emb.Embed(e.ctx, []string{m.content})
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := e.store.CreateMemory(e.ctx, tenant, memory.NewMemory{
		UserID: m.user, Scope: m.scope, Type: m.typ, Category: m.cat, Content: m.content,
		Importance: m.importance, Confidence: m.confidence, Status: m.status, ExpireAt: m.expire,
		ValidFrom: m.validFrom, Source: memory.SourceUser, Actor: "test", SourceTurnIDs: m.turns,
		Embeddings: []memory.Embedding{{Model: e.emb.Model(), Vector: vs[0]}},
	})
	if err != nil {
		e.t.Fatalf("creating memory %q: %v", m.content, err)
	}
	return out
}

func (e *env) addTurn(tenant, user, session, id string, role memory.Role, content string, at time.Time) {
	e.t.Helper()
	if _, err := e.store.InsertTurn(e.ctx, tenant, memory.Turn{TurnID: id, UserID: user, SessionID: session,
		Role: role, Content: content, OccurredAt: at}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) search(tenant string, req retriever.SearchRequest) retriever.SearchResponse {
	e.t.Helper()
	resp, err := e.r.Search(e.ctx, tenant, req)
	if err != nil {
		e.t.Fatalf("search %+v: %v", req, err)
	}
	return resp
}

func ids(res []retriever.Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.ID)
	}
	return out
}

func indexOf(res []retriever.Result, id string) int {
	for i, r := range res {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// server serves the HTTP edge over cfg's services as tenant, with a token of its own
// that every request carries.
func server(t *testing.T, cfg httpapi.Config, tenant string) *httptest.Server {
	t.Helper()
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tokens, err = httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenant, Name: "test", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	edge := httpapi.New(cfg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+tok)
		edge.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	if out != nil && buf.Len() > 0 {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, path, buf.String(), err)
		}
	}
	return res.StatusCode
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
