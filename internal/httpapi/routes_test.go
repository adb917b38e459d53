package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// errStub is what every stub service fails with: an unexpected error, so a route
// that reaches its service answers 500.
var errStub = errors.New("stub service")

// stubs implement every service, count their calls and fail with errStub.
type stubs struct{ calls atomic.Int64 }

func (s *stubs) fail() error { s.calls.Add(1); return errStub }

type turnsStub struct{ *stubs }

func (s turnsStub) IngestFrom(context.Context, string, func(string) bool, io.Reader) (ingest.TurnsResult, error) {
	return ingest.TurnsResult{}, s.fail()
}
func (s turnsStub) Remember(context.Context, string, string, ingest.RememberRequest) (ingest.RememberResult, error) {
	return ingest.RememberResult{}, s.fail()
}
func (s turnsStub) MaxBodyBytes() int64 { return 1 << 20 }

type memoriesStub struct{ *stubs }

func (s memoriesStub) Get(context.Context, string, uuid.UUID) (memory.Detail, error) {
	return memory.Detail{}, s.fail()
}
func (s memoriesStub) AsOf(context.Context, string, uuid.UUID, time.Time) (memory.Version, error) {
	return memory.Version{}, s.fail()
}
func (s memoriesStub) History(context.Context, string, uuid.UUID) ([]memory.Version, error) {
	return nil, s.fail()
}
func (s memoriesStub) Correct(context.Context, string, uuid.UUID, lifecycle.Correction, string) (memory.Memory, error) {
	return memory.Memory{}, s.fail()
}
func (s memoriesStub) Deprecate(context.Context, string, uuid.UUID, string, string) (memory.Memory, error) {
	return memory.Memory{}, s.fail()
}
func (s memoriesStub) Rollback(context.Context, string, uuid.UUID, int, string, string) (memory.Memory, error) {
	return memory.Memory{}, s.fail()
}

func (s memoriesStub) List(context.Context, string, memory.ListQuery) (memory.MemoryPage, error) {
	return memory.MemoryPage{}, s.fail()
}

type lifecycleStub struct{ *stubs }

func (s lifecycleStub) DeleteUserMemories(context.Context, string, string, bool, string) (lifecycle.UserMemoriesDeletion, error) {
	return lifecycle.UserMemoriesDeletion{}, s.fail()
}

func (s lifecycleStub) DeleteMemory(context.Context, string, uuid.UUID, string) (lifecycle.MemoryDeletion, error) {
	return lifecycle.MemoryDeletion{}, s.fail()
}
func (s lifecycleStub) Restore(context.Context, string, uuid.UUID, string) (memory.Memory, error) {
	return memory.Memory{}, s.fail()
}
func (s lifecycleStub) DeleteUser(context.Context, string, string, string) (lifecycle.UserDeletion, error) {
	return lifecycle.UserDeletion{}, s.fail()
}
func (s lifecycleStub) Export(context.Context, string, string, io.Writer, string) (lifecycle.ExportReport, error) {
	return lifecycle.ExportReport{}, s.fail()
}
func (s lifecycleStub) Import(context.Context, string, string, io.Reader, string) (lifecycle.ImportReport, error) {
	return lifecycle.ImportReport{}, s.fail()
}

type retrieverStub struct{ *stubs }

func (s retrieverStub) Search(context.Context, string, retriever.SearchRequest) (retriever.SearchResponse, error) {
	return retriever.SearchResponse{}, s.fail()
}
func (s retrieverStub) Context(context.Context, string, retriever.ContextRequest) (retriever.ContextResponse, error) {
	return retriever.ContextResponse{}, s.fail()
}
func (s retrieverStub) GetRetrieval(context.Context, string, uuid.UUID) (retriever.Retrieval, error) {
	return retriever.Retrieval{}, s.fail()
}

type tasksStub struct{ *stubs }

func (s tasksStub) GetFor(context.Context, string, string, string) (retriever.TaskState, error) {
	return retriever.TaskState{}, s.fail()
}
func (s tasksStub) PutFor(context.Context, string, string, string, json.RawMessage) (retriever.TaskState, error) {
	return retriever.TaskState{}, s.fail()
}
func (s tasksStub) DeleteFor(context.Context, string, string, string) error { return s.fail() }
func (s tasksStub) MaxBytes() int                                           { return 1 << 10 }

type healthStub struct{ *stubs }

func (s healthStub) Check(context.Context) (map[string]string, bool) {
	s.calls.Add(1)
	return map[string]string{"stub": "ok"}, true
}

type consoleStub struct{ *stubs }

func (s consoleStub) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.calls.Add(1)
	w.WriteHeader(http.StatusOK)
}

// stubEdge is the edge over stub services, with token "tok" for tenant acme.
func stubEdge(t *testing.T) (*edge, *stubs) {
	t.Helper()
	tokens, err := NewTokens([]TokenEntry{{Tenant: "acme", Name: "test", SHA256: HashToken("tok")}})
	if err != nil {
		t.Fatal(err)
	}
	s := &stubs{}
	h := New(Config{Tokens: tokens, Turns: turnsStub{s}, Memories: memoriesStub{s}, Lifecycle: lifecycleStub{s},
		Retriever: retrieverStub{s}, Tasks: tasksStub{s}, Health: healthStub{s}, Console: consoleStub{s},
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { s.calls.Add(1) }),
		MCP: func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_ = s.fail()
				WriteError(w, 500, "internal", "internal error", "")
			})
		}})
	return h.(*edge), s
}

// concrete fills a route pattern's wildcards with valid values.
func concrete(pattern string) string {
	return strings.NewReplacer("{id}", uuid.NewString(), "{user_id}", "u1", "{task_id}", "t1").Replace(pattern)
}

func errorBody(t *testing.T, rec *httptest.ResponseRecorder) Error {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, body %q", ct, rec.Body.String())
	}
	var b ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("body %q: want {\"error\":{\"code\",\"message\"}} (%v)", rec.Body.String(), err)
	}
	return b.Error
}

// TestEveryRouteAnswers: every route of the table is served by its handler, which
// reaches its service (whose failure answers 500 in JSON), never by the mux's 404/405.
func TestEveryRouteAnswers(t *testing.T) {
	t.Parallel()
	e, s := stubEdge(t)
	seen := map[string]bool{}
	for _, rt := range e.routes() {
		t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
			key := rt.method + " " + rt.pattern
			if seen[key] {
				t.Fatalf("%s is in the table twice", key)
			}
			seen[key] = true
			body := ""
			switch rt.pattern {
			case "/v1/turns":
				body = `{"user_id":"u1","session_id":"s1","role":"user","content":"hi"}`
			case "/v1/memories":
				body = `{"user_id":"u1","content":"likes tea"}`
			case "/v1/memories/{id}":
				body = `{"content":"x"}`
			case "/v1/memories/{id}/rollback":
				body = `{"version":1}`
			case "/v1/search", "/v1/context", "/v1/tasks/{task_id}/state", "/v1/memories/{id}/deprecate":
				body = `{}`
			}
			req := httptest.NewRequest(rt.method, concrete(rt.pattern), strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer tok")
			rec := httptest.NewRecorder()
			before := s.calls.Load()
			e.ServeHTTP(rec, req)
			// A route that needs no service (the liveness probe) answers on its own.
			if want := before + 1; rt.needs == none {
				if s.calls.Load() != before {
					t.Errorf("the route reached a service")
				}
			} else if s.calls.Load() != want {
				t.Errorf("the route did not reach its service (status %d, %s)", rec.Code, rec.Body)
			}
			if rt.public {
				if rec.Code != http.StatusOK {
					t.Errorf("status %d, want 200", rec.Code)
				}
				return
			}
			if rec.Code != http.StatusInternalServerError {
				t.Errorf("status %d (%s), want the 500 of the stub's failure", rec.Code, rec.Body)
			}
			if eb := errorBody(t, rec); eb.Code != "internal" || strings.Contains(eb.Message, errStub.Error()) {
				t.Errorf("error %+v: want code internal, without the error's text", eb)
			}
		})
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	e, _ := stubEdge(t)
	id := uuid.NewString()
	for _, tc := range []struct {
		name, method, path string
		token              bool
		status             int
		code               string
		allow              []string // wanted in the Allow header
	}{
		{"unknown /v1 route", "GET", "/v1/nope", true, 404, "not_found", nil},
		{"unknown /v1 route without a token", "GET", "/v1/nope", false, 401, "unauthenticated", nil},
		{"unknown route", "GET", "/nope", false, 404, "not_found", nil},
		{"unknown sub-resource", "GET", "/v1/memories/" + id + "/nope", true, 404, "not_found", nil},
		{"wrong method on turns", "GET", "/v1/turns", true, 405, "method_not_allowed", []string{"POST"}},
		{"wrong method on a memory", "PUT", "/v1/memories/" + id, true, 405, "method_not_allowed", []string{"GET", "PATCH", "DELETE"}},
		{"wrong method on healthz", "POST", "/healthz", false, 405, "method_not_allowed", []string{"GET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.token {
				req.Header.Set("Authorization", "Bearer tok")
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if eb := errorBody(t, rec); eb.Code != tc.code {
				t.Errorf("code %q, want %q", eb.Code, tc.code)
			}
			allow := rec.Header().Get("Allow")
			for _, m := range tc.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("Allow %q lacks %s", allow, m)
				}
			}
			if tc.allow == nil && allow != "" {
				t.Errorf("Allow %q on a %d", allow, rec.Code)
			}
		})
	}
}

// TestRoutesRefuseWithoutPrincipal: behind a missing middleware, a token route's
// handler refuses on its own and never reaches its service.
func TestRoutesRefuseWithoutPrincipal(t *testing.T) {
	t.Parallel()
	e, s := stubEdge(t)
	for _, rt := range e.routes() {
		if rt.public {
			continue
		}
		req := httptest.NewRequest(rt.method, concrete(rt.pattern), strings.NewReader("{}"))
		rec := httptest.NewRecorder()
		e.serve(rt).ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: status %d, WWW-Authenticate %q; want 401 with the challenge",
				rt.method, rt.pattern, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
		if eb := errorBody(t, rec); eb.Code != "unauthenticated" {
			t.Errorf("%s %s: code %q", rt.method, rt.pattern, eb.Code)
		}
	}
	if n := s.calls.Load(); n != 0 {
		t.Errorf("%d service calls without a principal", n)
	}
}

// TestUnconfiguredServices: a route whose service is absent answers 503.
func TestUnconfiguredServices(t *testing.T) {
	t.Parallel()
	tokens, err := NewTokens([]TokenEntry{{Tenant: "acme", SHA256: HashToken("tok")}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Tokens: tokens})
	for _, tc := range []struct{ method, path, message string }{
		{"GET", "/v1/tasks/t1/state", "working memory is not configured"},
		{"POST", "/v1/search", "retrieval is not configured"},
		{"POST", "/v1/turns", "ingest is not configured"},
		{"GET", "/console/users", "the console is not configured"},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if eb := errorBody(t, rec); rec.Code != http.StatusServiceUnavailable || eb.Code != "unavailable" || eb.Message != tc.message {
			t.Errorf("%s %s: %d %+v, want 503 %q", tc.method, tc.path, rec.Code, eb, tc.message)
		}
	}
}

// TestConsoleMount: everything under /console/ reaches the console, whatever the
// method, and /console itself redirects there.
func TestConsoleMount(t *testing.T) {
	t.Parallel()
	e, s := stubEdge(t)
	for _, m := range []string{"GET", "POST", "DELETE"} {
		rec := httptest.NewRecorder()
		before := s.calls.Load()
		e.ServeHTTP(rec, httptest.NewRequest(m, "/console/memories/x", nil))
		if rec.Code != http.StatusOK || s.calls.Load() != before+1 {
			t.Errorf("%s /console/memories/x: status %d, reached the console: %v", m, rec.Code, s.calls.Load() == before+1)
		}
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/console", nil))
	if rec.Code/100 != 3 || rec.Header().Get("Location") != "/console/" {
		t.Errorf("GET /console: %d to %q, want a redirect to /console/", rec.Code, rec.Header().Get("Location"))
	}
}
