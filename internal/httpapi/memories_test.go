package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator/resolvertest"

	"github.com/google/uuid"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

const tenant = "acme"

func testCtx(t *testing.T) context.Context { return resolvertest.Ctx(t) }

func hashEmbedder(t *testing.T) *llm.HashEmbedder { return resolvertest.HashEmbedder(t) }

// tenantServer serves the edge over cfg's services with one token per tenant,
// all named name; do sends a request as a tenant ("" for no token).
type tenantServer struct {
	t      *testing.T
	srv    *httptest.Server
	tokens map[string]string // tenant → token
}

func newTenantServer(t *testing.T, cfg httpapi.Config, name string, tenants ...string) *tenantServer {
	t.Helper()
	ts := &tenantServer{t: t, tokens: map[string]string{}}
	var entries []httpapi.TokenEntry
	for _, tn := range tenants {
		tok, err := httpapi.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		ts.tokens[tn] = tok
		entries = append(entries, httpapi.TokenEntry{Tenant: tn, Name: name, SHA256: httpapi.HashToken(tok)})
	}
	tokens, err := httpapi.NewTokens(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tokens = tokens
	ts.srv = httptest.NewServer(httpapi.New(cfg))
	t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *tenantServer) do(tenant, method, path string, body io.Reader) (int, []byte) {
	ts.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(ts.t), method, ts.srv.URL+path, body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("Authorization", "Bearer "+ts.tokens[tenant])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type opsClient struct {
	*tenantServer
}

// opsServer serves the memory operations for tenants acme and globex, whose tokens
// are named ops-bot.
func opsServer(t *testing.T, s *memory.Store) *opsClient {
	t.Helper()
	return &opsClient{newTenantServer(t, httpapi.Config{Memories: lifecycle.NewOps(s, hashEmbedder(t))}, "ops-bot", tenant, "globex")}
}

func (c *opsClient) do(tenant, method, path, body string, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	code, b := c.tenantServer.do(tenant, method, path, rd)
	if out != nil {
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); err != nil {
			c.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return code
}

// newResolver is a store with the resolver that fills it, as the pipeline would.
func newResolver(t *testing.T) (*memory.Store, *consolidator.Resolver) {
	t.Helper()
	s := pgtest.Store(t)
	return s, consolidator.NewResolver(s, hashEmbedder(t), nil, consolidator.ResolverConfig{}, nil)
}

// cand builds a trusted user candidate of tenant; opts adjust it.
func cand(user, content string, opts ...resolvertest.Option) memory.Candidate {
	return resolvertest.Candidate(tenant, user, content, opts...)
}
func withKey(k string) resolvertest.Option      { return resolvertest.WithKey(k) }
func validFrom(t time.Time) resolvertest.Option { return resolvertest.ValidFrom(t) }

func resolve(t *testing.T, r *consolidator.Resolver, c memory.Candidate, want consolidator.DecisionKind) consolidator.Decision {
	t.Helper()
	return resolvertest.Resolve(t, r, c, want)
}

func detail(t *testing.T, s *memory.Store, id uuid.UUID) memory.Detail {
	t.Helper()
	d, err := s.Detail(testCtx(t), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOpsAPI(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t)
	c := opsServer(t, s)
	first := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	d1 := resolve(t, r, cand("u1", "以后排会尽量别放在周五下午", withKey("meeting.avoid_time"), validFrom(first)), consolidator.KindAdd)
	resolve(t, r, cand("u1", "周五下午开会也可以了", withKey("meeting.avoid_time"), validFrom(first.AddDate(0, 0, 7))), consolidator.KindSupersede)
	base := "/v1/memories/" + d1.MemoryID.String()

	var det memory.Detail
	if code := c.do(tenant, "GET", base, "", &det); code != 200 || len(det.Versions) != 2 || len(det.Lineage) != 2 {
		t.Fatalf("get: %d %+v", code, det)
	}
	var hist struct{ Versions []memory.Version }
	if code := c.do(tenant, "GET", base+"/history", "", &hist); code != 200 || len(hist.Versions) != 2 {
		t.Fatalf("history: %d %+v", code, hist)
	}

	// As of: what was believed at a time; nothing before the first version.
	var asOf struct{ Version memory.Version }
	if code := c.do(tenant, "GET", base+"?as_of="+url.QueryEscape("2026-01-07T00:00:00Z"), "", &asOf); code != 200 || asOf.Version.Version != 1 {
		t.Fatalf("as_of: %d %+v", code, asOf)
	}
	if code := c.do(tenant, "GET", base+"?as_of=2025-12-01T00:00:00Z", "", nil); code != 404 {
		t.Fatalf("as_of before anything: %d, want 404", code)
	}

	// Correct, with optimistic concurrency.
	var out struct{ Memory memory.Memory }
	body := `{"content":"用户周五下午可以开会，但不要超过一小时","importance":0.9,"reason":"user clarified","expect_version":2}`
	if code := c.do(tenant, "PATCH", base, body, &out); code != 200 || out.Memory.Version != 3 || out.Memory.Importance != 0.9 {
		t.Fatalf("correct: %d %+v", code, out.Memory)
	}
	if code := c.do(tenant, "PATCH", base, `{"content":"x","expect_version":2}`, nil); code != 409 {
		t.Fatalf("stale correct: %d, want 409", code)
	}
	if code := c.do(tenant, "GET", base, "", &det); code != 200 {
		t.Fatal(code)
	}
	v3 := det.Versions[2]
	if v3.Change != memory.ChangeCorrect || v3.Actor != "api:ops-bot" || v3.Reason != "user clarified" {
		t.Fatalf("correct version: %+v", v3)
	}
	// The corrected text is what the owner's vector search now finds.
	emb := hashEmbedder(t)
	vec, _ := emb.Embed(testCtx(t), []string{"用户周五下午可以开会，但不要超过一小时"})
	ns, err := s.Nearest(testCtx(t), tenant, memory.NearestQuery{UserID: "u1", Model: llm.HashModel, Vector: vec[0], K: 1})
	if err != nil || len(ns) != 1 || ns[0].Similarity < 0.99 {
		t.Fatalf("nearest after correction: %+v %v", ns, err)
	}

	// Roll back to version 1: the original rule, active again.
	if code := c.do(tenant, "POST", base+"/rollback", `{"version":1}`, &out); code != 200 ||
		out.Memory.Content != "以后排会尽量别放在周五下午" || out.Memory.Status != memory.StatusActive || out.Memory.Version != 4 {
		t.Fatalf("rollback: %d %+v", code, out.Memory)
	}
	// Deprecate it; a second deprecation changes nothing.
	if code := c.do(tenant, "POST", base+"/deprecate", `{"reason":"no longer relevant"}`, &out); code != 200 ||
		out.Memory.Status != memory.StatusDeprecated || out.Memory.Version != 5 {
		t.Fatalf("deprecate: %d %+v", code, out.Memory)
	}
	if code := c.do(tenant, "POST", base+"/deprecate", "", &out); code != 200 || out.Memory.Version != 5 {
		t.Fatalf("second deprecate: %d v%d", code, out.Memory.Version)
	}
	if code := c.do(tenant, "GET", base+"/history", "", &hist); code != 200 || len(hist.Versions) != 5 {
		t.Fatalf("history after changes: %d versions", len(hist.Versions))
	}
	want := []memory.Change{memory.ChangeAdd, memory.ChangeSupersede, memory.ChangeCorrect, memory.ChangeRollback, memory.ChangeDeprecate}
	for i, v := range hist.Versions {
		if v.Change != want[i] {
			t.Fatalf("version %d is %s, want %s", i+1, v.Change, want[i])
		}
	}
}

func TestOpsAPIErrors(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t)
	c := opsServer(t, s)
	d := resolve(t, r, cand("u1", "The user likes tea."), consolidator.KindAdd)
	base := "/v1/memories/" + d.MemoryID.String()
	type errBody struct{ Error httpapi.Error }
	for _, tc := range []struct {
		name, tenant, method, path, body string
		code                             int
		field                            string
	}{
		{"other tenant get", "globex", "GET", base, "", 404, ""},
		{"other tenant history", "globex", "GET", base + "/history", "", 404, ""},
		{"other tenant correct", "globex", "PATCH", base, `{"content":"hijacked"}`, 404, ""},
		{"other tenant rollback", "globex", "POST", base + "/rollback", `{"version":1}`, 404, ""},
		{"other tenant deprecate", "globex", "POST", base + "/deprecate", `{}`, 404, ""},
		{"unknown id", tenant, "GET", "/v1/memories/" + uuid.NewString(), "", 404, ""},
		{"bad uuid", tenant, "GET", "/v1/memories/not-a-uuid", "", 400, "id"},
		{"bad uuid patch", tenant, "PATCH", "/v1/memories/42", `{"content":"x"}`, 400, "id"},
		{"bad as_of", tenant, "GET", base + "?as_of=yesterday", "", 400, "as_of"},
		{"no content", tenant, "PATCH", base, `{"reason":"x"}`, 400, "content"},
		{"blank content", tenant, "PATCH", base, `{"content":"  "}`, 400, "content"},
		{"bad category", tenant, "PATCH", base, `{"content":"x","category":"feelings"}`, 400, "category"},
		{"bad importance", tenant, "PATCH", base, `{"content":"x","importance":3}`, 400, "importance"},
		{"importance type", tenant, "PATCH", base, `{"content":"x","importance":"high"}`, 400, "importance"},
		{"unknown field", tenant, "PATCH", base, `{"content":"x","colour":"red"}`, 400, "colour"},
		{"no version", tenant, "POST", base + "/rollback", `{}`, 400, "version"},
		{"fractional version", tenant, "POST", base + "/rollback", `{"version":1.5}`, 400, "version"},
		{"missing version", tenant, "POST", base + "/rollback", `{"version":7}`, 400, "version"},
		{"current version", tenant, "POST", base + "/rollback", `{"version":1}`, 400, "version"},
		{"no principal", "", "GET", base, "", 401, "Authorization"},
		{"NUL in content", tenant, "PATCH", base, `{"content":"a\u0000b"}`, 400, "content"},
		{"invalid UTF-8 in content", tenant, "PATCH", base, "{\"content\":\"a\xffb\"}", 400, ""},
		{"NUL in reason", tenant, "PATCH", base, `{"content":"x","reason":"\u0000"}`, 400, "reason"},
		{"NUL in deprecate reason", tenant, "POST", base + "/deprecate", `{"reason":"\u0000"}`, 400, "reason"},
		{"NUL in rollback reason", tenant, "POST", base + "/rollback", `{"version":1,"reason":"\u0000"}`, 400, "reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b errBody
			code := c.do(tc.tenant, tc.method, tc.path, tc.body, &b)
			if code != tc.code || b.Error.Field != tc.field {
				t.Fatalf("got %d field %q (%s), want %d field %q", code, b.Error.Field, b.Error.Message, tc.code, tc.field)
			}
		})
	}
	if m := detail(t, s, d.MemoryID).Memory; m.Content != "The user likes tea." || m.Version != 1 {
		t.Fatalf("memory changed by failed requests: %+v", m)
	}
}

// seedEpisodes stores, for each content, a turn and an episodic memory made from it
// (one day apart from 2026-01-03), as the extractor and the resolver would, with its
// hash embedding; it returns the memory ids.
func seedEpisodes(t *testing.T, s *memory.Store, emb *llm.HashEmbedder, tenant, user string, contents ...string) []uuid.UUID {
	t.Helper()
	ctx := testCtx(t)
	day := time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC)
	var ids []uuid.UUID
	for i, content := range contents {
		vs, err := emb.Embed(ctx, []string{content})
		if err != nil {
			t.Fatal(err)
		}
		at, turnID := day.AddDate(0, 0, i), "turn-"+uuid.NewString()
		err = s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: turnID, UserID: user, SessionID: "s1", Role: memory.RoleUser,
				Content: content, OccurredAt: at, TaskID: "task-" + user}); err != nil {
				return err
			}
			m, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: user, Scope: memory.ScopeUser, Type: memory.Episodic,
				Category: memory.CatEvent, Content: content, Importance: 0.6, Confidence: 0.8, ValidFrom: at,
				Source: memory.SourceUser, SourceTurnIDs: []string{turnID}, CandidateID: "seed-" + uuid.NewString(),
				Embeddings: []memory.Embedding{{Model: emb.Model(), Vector: vs[0]}}, Actor: "test"})
			ids = append(ids, m.ID)
			return err
		})
		if err != nil {
			t.Fatalf("seeding %q: %v", content, err)
		}
	}
	return ids
}

func TestLifecycleAPI(t *testing.T) {
	t.Parallel()
	store, emb := pgtest.Store(t), hashEmbedder(t)
	// Five payment failures and two unrelated episodes, as lifecycle's tests seed them.
	ids := seedEpisodes(t, store, emb, "acme", "u1", "昨天支付失败，因为余额不足", "今天支付失败，因为接口超时",
		"上午支付失败，提示网络错误", "晚上支付失败，因为验证码过期", "周末支付失败，银行卡被冻结", "用户周末去爬山", "用户买了一台新电脑")
	// The routes share /v1/memories/{id}.
	ts := newTenantServer(t, httpapi.Config{Memories: lifecycle.NewOps(store, emb),
		Lifecycle: lifecycle.NewLifecycle(store, nil, nil, nil)}, "t", "acme", "globex")
	do := ts.do

	cases := []struct {
		name, tenant, method, path string
		want                       int
	}{
		{"other tenant cannot delete", "globex", "DELETE", "/v1/memories/" + ids[0].String(), 404},
		{"bad id", "acme", "DELETE", "/v1/memories/nope", 400},
		{"restore active", "acme", "POST", "/v1/memories/" + ids[1].String() + "/restore", 409},
		{"delete", "acme", "DELETE", "/v1/memories/" + ids[0].String(), 200},
		{"delete again", "acme", "DELETE", "/v1/memories/" + ids[0].String(), 404},
		{"bad user", "acme", "DELETE", "/v1/users/a*b", 400},
		{"unauthenticated", "", "GET", "/v1/users/u1/export", 401},
	}
	for _, tc := range cases {
		if code, body := do(tc.tenant, tc.method, tc.path, nil); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	if code, _ := do("acme", "GET", "/v1/memories/"+ids[1].String(), nil); code != 200 {
		t.Errorf("GET through the ops API: %d", code)
	}
	if n := pgtest.Count(t, store.Pool(), "acme", `SELECT count(*) FROM memory_versions WHERE memory_id = $1`, ids[0]); n != 0 {
		t.Fatalf("%d versions of the deleted memory left", n)
	}
	if n := pgtest.Count(t, store.Pool(), "acme", `SELECT count(*) FROM audit_log WHERE action = 'delete' AND memory_id = $1 AND content_hash IS NOT NULL`, ids[0]); n != 1 {
		t.Fatalf("%d delete audit rows", n)
	}

	pgtest.Exec(t, store.Pool(), "acme", `UPDATE memories SET status = 'archived' WHERE id = $1`, ids[1])
	code, body := do("acme", "POST", "/v1/memories/"+ids[1].String()+"/restore", nil)
	if code != 200 || !strings.Contains(string(body), `"status":"active"`) {
		t.Fatalf("restore: %d %s", code, body)
	}

	code, export := do("acme", "GET", "/v1/users/u1/export", nil)
	if code != 200 || !bytes.HasPrefix(export, []byte(`{"kind":"header"`)) {
		t.Fatalf("export: %d %.200s", code, export)
	}
	code, body = do("globex", "POST", "/v1/users/u7/import", bytes.NewReader(export))
	var imp lifecycle.ImportReport
	if code != 200 || json.Unmarshal(body, &imp) != nil || imp.Memories != 6 {
		t.Fatalf("import: %d %s", code, body)
	}
	code, body = do("globex", "POST", "/v1/users/u7/import", strings.NewReader("{}\n"))
	if code != 400 {
		t.Fatalf("bad import: %d %s", code, body)
	}
	code, body = do("globex", "DELETE", "/v1/users/u7", nil)
	var del lifecycle.UserDeletion
	if code != 200 || json.Unmarshal(body, &del) != nil || del.Memories != 6 || !slices.Contains(del.Skipped, "streams") {
		t.Fatalf("delete user: %d %s", code, body)
	}
}

// TestDeprecateOptionalBody: the deprecate body is optional however it is framed; an
// empty chunked body (no Content-Length) is no body, not malformed JSON.
func TestDeprecateOptionalBody(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t)
	c := opsServer(t, s)
	for _, tc := range []struct {
		name, body string
		chunked    bool
		status     int
	}{
		{"no body", "", false, 200},
		{"empty chunked body", "", true, 200},
		{"chunked body with a reason", `{"reason":"moved on"}`, true, 200},
		{"chunked malformed body", `{"reason":`, true, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A user per case: the resolver would merge the near-identical memories.
			d := resolve(t, r, cand("dep-"+strings.ReplaceAll(tc.name, " ", "-"), "deprecate me"), consolidator.KindAdd)
			req, err := http.NewRequestWithContext(testCtx(t), "POST",
				c.srv.URL+"/v1/memories/"+d.MemoryID.String()+"/deprecate", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.chunked {
				// Framed as a client streaming its body would: no Content-Length.
				req.ContentLength = -1
				req.TransferEncoding = []string{"chunked"}
			}
			req.Header.Set("Authorization", "Bearer "+c.tokens[tenant])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, b, tc.status)
			}
		})
	}
}
