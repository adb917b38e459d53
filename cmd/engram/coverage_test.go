package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams/natstest"
)

// TestServeRollsANewModelIn: memories embedded with the local model, then `engram
// serve` with model-b configured. With ENGRAM_REEMBED=off it logs the coverage,
// /readyz and /metrics show it, and search still finds every memory by keyword while
// saying vector_coverage 0; with auto, serve re-embeds in the background until
// /readyz says ok, and vector-mode search finds the memories, with coverage 1.
func TestServeRollsANewModelIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	pool, err := memory.Connect(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	hash, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	contents := map[string]string{
		"oolong tea":      "Mia drinks oolong tea every morning",
		"Brompton bike":   "Mia rides a red Brompton bike to work",
		"peanuts allergy": "Mia is allergic to peanuts",
	}
	for _, c := range contents {
		pgtest.SeedEpisode(t, ctx, memory.NewStore(pool), hash, "t1", "mia", c, time.Now().Add(-48*time.Hour))
	}
	fake := fakeopenai.New(t)
	fake.SetEmbedFunc(func(_, in string) []float32 {
		v := []float32{0, 0, 0, 0.05}
		for i, w := range []string{"tea", "bike", "peanut"} {
			if strings.Contains(strings.ToLower(in), w) {
				v[i] = 1
			}
		}
		return v
	})
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	ns := natstest.Start(t)

	serve := func(reembedMode string, check func(base string, c *client.Client, log *lockedBuffer)) {
		t.Helper()
		port := freeLoopbackPort(t)
		env := map[string]string{
			"ENGRAM_DATABASE_URL": dbURL, "ENGRAM_NATS_URL": ns.URL(), "ENGRAM_DATA_DIR": t.TempDir(),
			"ENGRAM_HTTP_ADDR": "127.0.0.1:" + strconv.Itoa(port), "ENGRAM_TOKENS": "t1/test=" + httpapi.HashToken(tok),
			"ENGRAM_EMBED_BASE_URL": fake.URL(), "ENGRAM_EMBED_MODEL": "model-b", "ENGRAM_CONSOLIDATE_CRON": "off",
			"ENGRAM_REEMBED": reembedMode, "ENGRAM_METRICS_INTERVAL": "1s",
		}
		sctx, stop := context.WithCancel(ctx)
		var log lockedBuffer
		done := make(chan int, 1)
		go func() { done <- run(sctx, []string{"serve"}, envMap(env), &log, &log) }()
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		for {
			if code, _ := tryGet(base + "/healthz"); code == 200 {
				break
			}
			select {
			case code := <-done:
				t.Fatalf("serve exited with %d:\n%s", code, log.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
		check(base, client.New(base, tok), &log)
		stop()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d:\n%s", code, log.String())
		}
	}
	readyCoverage := func(base string) (string, string) {
		t.Helper()
		_, body := tryGet(base + "/readyz")
		var r struct {
			Status string            `json:"status"`
			Checks map[string]string `json:"checks"`
		}
		_ = json.Unmarshal([]byte(body), &r)
		return r.Status, r.Checks["vector_coverage"]
	}
	search := func(c *client.Client, query, mode string) client.SearchResponse {
		t.Helper()
		resp, err := c.Search(ctx, client.SearchRequest{Query: query, UserID: "mia", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	found := func(resp client.SearchResponse, content string) bool {
		for _, r := range resp.Results {
			if r.Content == content {
				return true
			}
		}
		return false
	}

	serve("off", func(base string, c *client.Client, log *lockedBuffer) {
		if !strings.Contains(log.String(), "memories lack a vector in the configured embedding model") ||
			!strings.Contains(log.String(), "coverage=0") {
			t.Errorf("no coverage warning on start:\n%s", log.String())
		}
		status, detail := readyCoverage(base)
		if status != "degraded" || !strings.HasPrefix(detail, "incomplete: 0 of 3 memories (0.0%) have a model-b vector") {
			t.Errorf("/readyz: status %q, vector_coverage %q", status, detail)
		}
		if _, body := tryGet(base + "/metrics"); !strings.Contains(body, `engram_vector_coverage{model="model-b"} 0`) {
			t.Errorf("/metrics lacks the coverage gauge at 0")
		}
		for q, content := range contents {
			resp := search(c, q, "")
			if !found(resp, content) || resp.VectorCoverage == nil || *resp.VectorCoverage != 0 {
				t.Errorf("hybrid %q: found %v, vector_coverage %v", q, found(resp, content), resp.VectorCoverage)
			}
			if found(search(c, q, "vector"), content) {
				t.Errorf("vector mode %q found a memory without a model-b vector", q)
			}
		}
	})

	serve("auto", func(base string, c *client.Client, log *lockedBuffer) {
		deadline := time.Now().Add(time.Minute)
		for {
			if _, detail := readyCoverage(base); detail == "ok" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the background re-embedding never completed:\n%s", log.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		for q, content := range contents {
			resp := search(c, q, "vector")
			if !found(resp, content) || resp.VectorCoverage == nil || *resp.VectorCoverage != 1 {
				t.Errorf("vector mode %q after re-embedding: found %v, vector_coverage %v", q, found(resp, content), resp.VectorCoverage)
			}
		}
		if _, body := tryGet(base + "/metrics"); !strings.Contains(body, `engram_vector_coverage{model="model-b"} 1`) {
			t.Errorf("/metrics: the coverage gauge is not 1")
		}
	})
	if n := pgtest.Count(t, pool, "t1", "SELECT count(*) FROM memory_embeddings WHERE model = 'model-b'"); n != len(contents) {
		t.Errorf("%d model-b vectors, want %d", n, len(contents))
	}
}

// tryGet is an HTTP GET that reports a failed request as status 0.
func tryGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestReembedSetting(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"": "auto", "auto": "auto", "OFF": "off"} {
		c, err := LoadConfig(envMap(map[string]string{"ENGRAM_REEMBED": v}))
		if err != nil || c.Reembed != want {
			t.Errorf("ENGRAM_REEMBED=%q: %q, %v; want %q", v, c.Reembed, err, want)
		}
	}
	if _, err := LoadConfig(envMap(map[string]string{"ENGRAM_REEMBED": "sometimes"})); err == nil || !strings.Contains(err.Error(), "ENGRAM_REEMBED") {
		t.Errorf("a bad ENGRAM_REEMBED: %v", err)
	}
}
