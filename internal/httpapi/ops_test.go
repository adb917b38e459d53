package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/ingest"
)

type fixedHealth struct {
	checks map[string]string
	ok     bool
	calls  int
}

func (f *fixedHealth) Check(context.Context) (map[string]string, bool) {
	f.calls++
	return f.checks, f.ok
}

type recordingObserver struct {
	mu       sync.Mutex
	requests []string
}

func (o *recordingObserver) Request(route string, status int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests = append(o.requests, route+" "+http.StatusText(status))
}
func (o *recordingObserver) Turns(ingest.TurnsResult)                    {}
func (o *recordingObserver) Retrieval(string, time.Duration, int, error) {}

func TestLivenessAndReadiness(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		checks map[string]string
		ok     bool
		code   int
		status string
	}{
		{"all ok", map[string]string{"postgres": "ok", "llm": "ok"}, true, 200, "ok"},
		{"model away", map[string]string{"postgres": "ok", "llm": "unreachable: connection refused"}, true, 200, "degraded"},
		{"database away", map[string]string{"postgres": "unreachable: connection refused"}, false, 503, "unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fixedHealth{checks: tc.checks, ok: tc.ok}
			obs := &recordingObserver{}
			e := New(Config{Health: h, Observer: obs})
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != 200 || h.calls != 0 {
				t.Errorf("/healthz: %d after %d checks; want 200 without checking", rec.Code, h.calls)
			}
			rec = httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			var body struct {
				Status string
				Checks map[string]string
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != tc.code || body.Status != tc.status {
				t.Errorf("/readyz: %d %s, want %d %s", rec.Code, rec.Body, tc.code, tc.status)
			}
			if len(obs.requests) != 2 || obs.requests[1] != "GET /readyz "+http.StatusText(tc.code) {
				t.Errorf("observed %v", obs.requests)
			}
		})
	}
	// Without a metrics handler, /metrics says so.
	rec := httptest.NewRecorder()
	New(Config{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/metrics unconfigured: %d", rec.Code)
	}
}
