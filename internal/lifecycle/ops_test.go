package lifecycle_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

type opsClient struct {
	t   *testing.T
	srv *httptest.Server
}

// opsServer serves the operations API; the tenant of each request is taken from the
// X-Test-Tenant header, standing in for the token middleware.
func opsServer(t *testing.T, s *memory.Store) *opsClient {
	t.Helper()
	mux := http.NewServeMux()
	lifecycle.NewOpsAPI(s, hashEmbedder(t), nil).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tn := r.Header.Get("X-Test-Tenant"); tn != "" {
			r = r.WithContext(httpapi.WithPrincipal(r.Context(), httpapi.Principal{Tenant: tn, Name: "ops-bot"}))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &opsClient{t: t, srv: srv}
}

func (c *opsClient) do(tenant, method, path, body string, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("X-Test-Tenant", tenant)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); err != nil {
			c.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode
}

func TestOpsAPI(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t)
	c := opsServer(t, s)
	first := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	d1 := resolve(t, r, cand("u1", "以后安排会议尽量避开每周五下午", withKey("meeting.avoid_time"), validFrom(first)), consolidator.KindAdd)
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
		out.Memory.Content != "以后安排会议尽量避开每周五下午" || out.Memory.Status != memory.StatusActive || out.Memory.Version != 4 {
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
