package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOperationsEndpoints: /healthz, /readyz and /metrics of a running node, with the
// families an operator relies on after turns went through the pipeline and a search.
func TestOperationsEndpoints(t *testing.T) {
	t.Parallel()
	n, app, c := testNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	turns := []client.Turn{
		{TurnID: "o1", UserID: "u1", SessionID: "s", Role: client.RoleUser, Content: "I prefer green tea in the morning", OccurredAt: at},
		{TurnID: "o2", UserID: "u1", SessionID: "s", Role: client.RoleUser, Content: "hi", OccurredAt: at.Add(time.Minute)},
	}
	if _, err := c.AddTurns(ctx, turns...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddTurns(ctx, turns[0]); err != nil { // a duplicate
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(ctx, client.SearchRequest{UserID: "u1", Query: "tea"}); err != nil {
		t.Fatal(err)
	}
	if err := n.p.metrics.RefreshMemoryGauge(ctx, app.Store); err != nil {
		t.Fatal(err)
	}

	if code, body := get(t, n.URL+"/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	code, body := get(t, n.URL+"/readyz")
	var ready struct {
		Status string
		Checks map[string]string
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || code != 200 || ready.Status != "ok" ||
		ready.Checks["postgres"] != "ok" || ready.Checks["nats"] != "ok" {
		t.Errorf("/readyz: %d %s", code, body)
	}
	code, body = get(t, n.URL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`engram_turns_received_total{outcome="accepted"} 2`,
		`engram_turns_received_total{outcome="duplicate"} 1`,
		`engram_extractor_turns_total{result="stored"} 2`,
		`engram_extractor_turns_total{result="gated_out"}`,
		`engram_worker_messages_total{result="acked",stage="extract"}`,
		`engram_resolver_decisions_total{kind="add"}`,
		`engram_resolver_duration_seconds_bucket{kind="add"`,
		`engram_jetstream_consumer_pending_messages{consumer="extractor",stream="TURNS"} 0`,
		`engram_dlq_messages{stage="extract"} 0`,
		`engram_jetstream_up 1`,
		`engram_retrieval_duration_seconds_count{op="search",outcome="ok"} 1`,
		`engram_http_requests_total{code="202",route="POST /v1/turns"} 2`,
		`engram_memories{status="active",tenant="t1",type=`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// No user id or content in any label.
	for _, leak := range []string{"u1", "green tea"} {
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "engram_") && strings.Contains(line, leak) {
				t.Errorf("metric line carries %q: %s", leak, line)
			}
		}
	}
}

// TestWorkerServesOps: `engram worker all` serves /healthz, /readyz and /metrics, and
// nothing else, on ENGRAM_WORKER_HTTP_ADDR.
func TestWorkerServesOps(t *testing.T) {
	t.Parallel()
	app := testApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := app.Config
	cfg.WorkerHTTPAddr = addr
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	env := &Env{Config: cfg, Stdout: &out, Stderr: &out, Logger: app.Logger}
	done := make(chan error, 1)
	go func() { done <- runWorker(ctx, env, []string{"all"}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker never became ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := get(t, "http://"+addr+"/metrics"); code != 200 || !strings.Contains(body, "engram_jetstream_consumer_pending_messages") {
		t.Errorf("/metrics: %d", code)
	}
	if code, _ := get(t, "http://"+addr+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
}
