package readiness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRefusedConnectionIsUnreachable(t *testing.T) {
	t.Parallel()
	// A port that was just free: nothing listens, the dial is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var failures atomic.Int32
	c := New(Config{OnFailure: func(dep, kind string) {
		if dep == "llm" && kind == "unreachable" {
			failures.Add(1)
		}
	}}, Check{Name: "llm", Probe: HTTPProbe(nil, "http://"+addr+"/v1", "")})
	checks, ok := c.Check(context.Background())
	if !ok {
		t.Errorf("an optional check made the node unready")
	}
	if !strings.HasPrefix(checks["llm"], "unreachable: ") {
		t.Errorf("llm: %q, want unreachable", checks["llm"])
	}
	if failures.Load() != 1 {
		t.Errorf("%d unreachable failures counted, want 1", failures.Load())
	}
}

func TestCachedAndRequired(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusNotFound) // no /models: still reachable
	}))
	defer srv.Close()
	c := New(Config{TTL: time.Hour},
		Check{Name: "embedding", Probe: HTTPProbe(srv.Client(), srv.URL, "k")},
		Check{Name: "postgres", Required: true, Probe: func(context.Context) error { return errors.New("boom") }})
	for range 3 {
		checks, ok := c.Check(context.Background())
		if ok || checks["embedding"] != "ok" || checks["postgres"] != "error: boom" {
			t.Fatalf("checks %v ok %v", checks, ok)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("%d probes, want 1 (cached)", calls.Load())
	}
}

// TestDetailCheck: a detail (vector coverage) shows its reason, degrades at most,
// and is not counted as a dependency failure.
func TestDetailCheck(t *testing.T) {
	t.Parallel()
	var failures atomic.Int32
	reason := "incomplete: 1 of 4 memories"
	c := New(Config{TTL: time.Nanosecond, OnFailure: func(string, string) { failures.Add(1) }},
		Check{Name: "vector_coverage", Required: true, Detail: func(context.Context) string { return reason }})
	checks, ok := c.Check(context.Background())
	if !ok || checks["vector_coverage"] != reason || failures.Load() != 0 {
		t.Fatalf("checks %v ok %v failures %d", checks, ok, failures.Load())
	}
	reason = "ok"
	time.Sleep(time.Millisecond) // past the TTL
	if checks, _ := c.Check(context.Background()); checks["vector_coverage"] != "ok" {
		t.Fatalf("after the coverage completed: %v", checks)
	}
}
