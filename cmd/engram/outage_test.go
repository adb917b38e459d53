package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/tcpproxy"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// outageNode starts the real wiring (API and workers) on a fresh database reached
// through a TCP proxy the test can cut, an in-process JetStream server and extra
// environment; it returns a client for tenant "t1".
func outageNode(t *testing.T, env map[string]string) (*node, *App, *tcpproxy.Proxy, *client.Client) {
	t.Helper()
	ctx := context.Background()
	ns := natstest.Start(t)
	px, url, err := tcpproxy.URL(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	vars := map[string]string{
		"ENGRAM_DATABASE_URL": url, "ENGRAM_NATS_URL": ns.URL(), "ENGRAM_HTTP_ADDR": "127.0.0.1:0",
		"ENGRAM_DATA_DIR": t.TempDir(), "ENGRAM_DB_MAX_CONNS": "24", "ENGRAM_CONSOLIDATE_CRON": "off",
		// Held messages retry at least every second once the dependency is back.
		"ENGRAM_OUTAGE_BACKOFF_MAX": "1s",
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := LoadConfig(envMap(vars))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() && os.Getenv("ENGRAM_OUTAGE_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	app := &App{Config: cfg, Logger: logger}
	t.Cleanup(app.Close)
	if err := app.openDB(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := app.openNATS(ctx, false); err != nil {
		t.Fatal(err)
	}
	n, tok := startTestNode(t, ctx, app)
	return n, app, px, client.New(n.URL, tok, client.WithRetry(client.Retry{MaxElapsedTime: time.Minute}))
}

// preferenceTurns are n turns of n users, each stating one preference: the offline
// extractor makes one candidate of each and the resolver one memory.
func preferenceTurns(from, n int, content func(i int) string) []client.Turn {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var out []client.Turn
	for i := from; i < from+n; i++ {
		c := fmt.Sprintf("I prefer tea number %d with my breakfast", i)
		if content != nil {
			c = content(i)
		}
		out = append(out, client.Turn{TurnID: fmt.Sprintf("turn-%06d", i), UserID: fmt.Sprintf("user-%06d", i),
			SessionID: "s", Role: client.RoleUser, OccurredAt: at.Add(time.Duration(i) * time.Second), Content: c})
	}
	return out
}

func sendTurns(ctx context.Context, t *testing.T, c *client.Client, turns []client.Turn) {
	t.Helper()
	for start := 0; start < len(turns); start += 20 {
		b := turns[start:min(start+20, len(turns))]
		res, err := c.AddTurns(ctx, b...)
		if err != nil || res.Accepted+res.Duplicates != len(b) {
			t.Fatalf("sending turns: %+v, %v", res, err)
		}
	}
}

// drainedCounts waits until both workers are idle and returns the stored turns, distinct
// turns, memories, users with a memory and dead letters of tenant t1.
func drainedCounts(ctx context.Context, t *testing.T, app *App) (turns, distinct, memories, users, dlq int) {
	t.Helper()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := waitDrained(dctx, app.JS); err != nil {
		t.Fatal(err)
	}
	turns = pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM turns")
	distinct = pgtest.Count(t, app.Pool, "t1", "SELECT count(DISTINCT turn_id) FROM turns")
	memories = pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM memories")
	users = pgtest.Count(t, app.Pool, "t1", "SELECT count(DISTINCT user_id) FROM memories")
	st, err := app.JS.Stream(ctx, streams.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return turns, distinct, memories, users, int(info.State.Msgs)
}

// TestPostgresOutageHoldsTurns: PostgreSQL unreachable (the proxy closed: new
// connections refused, open ones cut) for longer than the old retry budget (5 deliveries,
// 1+2+4+8 s) while turns keep arriving. Nothing is dead-lettered and every turn is stored
// and becomes one memory once PostgreSQL is back. ENGRAM_TEST_PG_OUTAGE sets the outage
// (default 20s; 5m is the full check).
func TestPostgresOutageHoldsTurns(t *testing.T) {
	t.Parallel()
	outage := 20 * time.Second
	if v := os.Getenv("ENGRAM_TEST_PG_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ENGRAM_TEST_PG_OUTAGE=%q: %v", v, err)
		}
		outage = d
	}
	const total = 300
	ctx, cancel := context.WithTimeout(context.Background(), outage+10*time.Minute)
	defer cancel()
	n, app, px, c := outageNode(t, nil)
	all := preferenceTurns(0, total, nil)
	sendTurns(ctx, t, c, all[:total/3])
	px.Cut()
	t.Logf("PostgreSQL cut for %s", outage)
	down := time.Now()
	// Accepted while PostgreSQL is down: ingest needs only JetStream.
	sendTurns(ctx, t, c, all[total/3:])
	time.Sleep(time.Until(down.Add(outage)))
	if err := px.Restore(); err != nil {
		t.Fatal(err)
	}
	turns, distinct, memories, users, dlq := drainedCounts(ctx, t, app)
	st := n.p.extract.Stats()
	t.Logf("after %s of outage: %d turns stored (%d distinct), %d memories for %d users, %d dead letters; extractor saw %d deliveries, %d already stored",
		outage, turns, distinct, memories, users, dlq, st.TurnsReceived, st.TurnsRedelivered)
	if dlq != 0 {
		t.Errorf("%d dead letters, want 0", dlq)
	}
	if turns != total || distinct != total || memories != total || users != total {
		t.Errorf("turns %d (%d distinct), memories %d for %d users; want %d of each", turns, distinct, memories, users, total)
	}
}

// TestEmbeddingWrongDimsThenRecovers: the embedding endpoint answers vectors of the
// wrong size for a while (a model swapped under the same name) and then recovers:
// nothing is dead-lettered, every turn becomes its memory.
func TestEmbeddingWrongDimsThenRecovers(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.SetEmbedDims(8)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, app, _, c := outageNode(t, map[string]string{
		"ENGRAM_EMBED_BASE_URL": fake.URL(), "ENGRAM_EMBED_MODEL": "fake-embed", "ENGRAM_EMBED_DIMS": "8",
	})
	const total = 60
	all := preferenceTurns(0, total, nil)
	sendTurns(ctx, t, c, all[:10])
	fake.SetEmbedDims(12) // wrong from now on
	bad := len(fake.EmbedRequests())
	sendTurns(ctx, t, c, all[10:])
	// The old runtime dead-lettered on the first invalid reply; ENGRAM_TEST_EMBED_FAULT
	// makes the fault last longer (1m is the full check).
	fault := 5 * time.Second
	if v := os.Getenv("ENGRAM_TEST_EMBED_FAULT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ENGRAM_TEST_EMBED_FAULT=%q: %v", v, err)
		}
		fault = d
	}
	time.Sleep(fault)
	if n := len(fake.EmbedRequests()) - bad; n < 3 {
		t.Fatalf("only %d embedding requests during the fault", n)
	}
	t.Logf("%d embedding requests answered with wrong dims for %s", len(fake.EmbedRequests())-bad, fault)
	fake.SetEmbedDims(8)
	turns, distinct, memories, users, dlq := drainedCounts(ctx, t, app)
	if dlq != 0 {
		t.Errorf("%d dead letters, want 0", dlq)
	}
	if turns != total || distinct != total || memories != total || users != total {
		t.Errorf("turns %d (%d distinct), memories %d for %d users; want %d of each", turns, distinct, memories, users, total)
	}
}

// TestEmbeddingInvalidForOneTextIsDeadLettered: an embedding reply that stays invalid
// for one candidate while the others embed fine is that message's fault: it reaches the
// DLQ after bounded retries; every other turn becomes its memory.
func TestEmbeddingInvalidForOneTextIsDeadLettered(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.SetEmbedFunc(func(_, input string) []float32 {
		if strings.Contains(input, "zanzibar") {
			return fakeopenai.DefaultEmbedding(input, 12)
		}
		return fakeopenai.DefaultEmbedding(input, 8)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, app, _, c := outageNode(t, map[string]string{
		"ENGRAM_EMBED_BASE_URL": fake.URL(), "ENGRAM_EMBED_MODEL": "fake-embed", "ENGRAM_EMBED_DIMS": "8",
		"ENGRAM_EMBED_TURNS": "false",
	})
	sendTurns(ctx, t, c, preferenceTurns(0, 1, func(int) string { return "I prefer holidays in zanzibar" }))
	// Other work keeps succeeding until the bad candidate is judged.
	sent := 1
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the bad candidate was never dead-lettered")
		}
		entries, err := streams.NewDLQ(app.JS).List(ctx, streams.DLQFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			if len(entries) != 1 || entries[0].Stage != "resolve" || !strings.Contains(entries[0].Error, "dims") {
				t.Fatalf("DLQ entries %+v", entries)
			}
			break
		}
		sendTurns(ctx, t, c, preferenceTurns(sent, 5, nil))
		sent += 5
		time.Sleep(200 * time.Millisecond)
	}
	turns, _, memories, _, dlq := drainedCounts(ctx, t, app)
	t.Logf("%d turns sent, %d stored, %d memories, %d dead letters", sent, turns, memories, dlq)
	if dlq != 1 || turns != sent || memories != sent-1 {
		t.Errorf("turns %d, memories %d, dead letters %d; want %d, %d, 1", turns, memories, dlq, sent, sent-1)
	}
}
