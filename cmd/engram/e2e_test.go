package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest/httpapi"
	"github.com/engramhq/engram/internal/testutil/natstest"
	"github.com/engramhq/engram/internal/testutil/pgtest"
	"github.com/engramhq/engram/memory"
)

// testNode starts the real wiring (HTTP API and workers) on a fresh database and an
// in-process JetStream server, and returns a client for tenant "t1".
func testNode(t *testing.T) (*node, *App, *client.Client) {
	t.Helper()
	ctx := context.Background()
	ns := natstest.Start(t)
	cfg, err := LoadConfig(envMap(map[string]string{
		"ENGRAM_DATABASE_URL": pgtest.URL(t), "ENGRAM_NATS_URL": ns.URL(), "ENGRAM_HTTP_ADDR": "127.0.0.1:0",
		"ENGRAM_DATA_DIR": t.TempDir(), "ENGRAM_DB_MAX_CONNS": "24",
	}))
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t.Cleanup(app.Close)
	if err := app.openDB(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := app.openNATS(ctx, false); err != nil {
		t.Fatal(err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "t1", Name: "test", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := startNode(ctx, app, tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n, app, client.New(n.URL, tok)
}

func TestEndToEndTurnsBecomeMemories(t *testing.T) {
	t.Parallel()
	n, app, c := testNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	turns := []client.Turn{
		{TurnID: "a1", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "你好", OccurredAt: at},
		{TurnID: "a2", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "以后安排会议尽量避开每周五下午，因为周五要写周报", OccurredAt: at.Add(time.Minute)},
		{TurnID: "a3", UserID: "u1", SessionID: "a", Role: client.RoleAssistant, Content: "好的，记住了。", OccurredAt: at.Add(2 * time.Minute)},
		{TurnID: "a4", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "My api key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", OccurredAt: at.Add(3 * time.Minute)},
	}
	if _, err := c.AddTurns(ctx, turns...); err != nil {
		t.Fatal(err)
	}
	// Sending the same turns again changes nothing downstream.
	if _, err := c.AddTurns(ctx, turns...); err != nil {
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	var mems []memory.Memory
	var storedTurns int
	err := app.Store.InTx(ctx, "t1", func(tx *memory.Tx) error {
		if err := tx.Raw().QueryRow(ctx, "SELECT count(*) FROM turns").Scan(&storedTurns); err != nil {
			return err
		}
		rows, err := tx.Raw().Query(ctx, "SELECT "+memory.MemoryColumnsAs("")+" FROM memories ORDER BY recorded_at")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := memory.ScanMemory(rows, "t1")
			if err != nil {
				return err
			}
			mems = append(mems, m)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if storedTurns != 4 {
		t.Fatalf("stored %d turns, want 4", storedTurns)
	}
	var found bool
	for _, m := range mems {
		if strings.Contains(m.Content, "sk-proj-") {
			t.Fatalf("a secret reached a memory: %q", m.Content)
		}
		if strings.Contains(m.Content, "你好") {
			t.Fatalf("small talk became a memory: %q", m.Content)
		}
		if strings.Contains(m.Content, "周五下午") {
			found = true
			if m.Status != memory.StatusActive || m.Source != memory.SourceUser {
				t.Fatalf("meeting constraint: %+v", m)
			}
		}
	}
	if !found {
		t.Fatalf("the meeting constraint was not remembered; memories: %+v", mems)
	}
	_ = n
}
