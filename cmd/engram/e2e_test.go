package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams/natstest"
	"github.com/google/uuid"
)

// testApp opens a fresh database and an in-process JetStream server, as a node's
// dependencies.
func testApp(t *testing.T) *App {
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
	return app
}

// startTestNode starts the real wiring (HTTP API and workers) of app, with one token of
// tenant "t1", stopped when the test ends.
func startTestNode(t *testing.T, ctx context.Context, app *App) (*node, string) {
	t.Helper()
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
	return n, tok
}

// testNode starts the real wiring (HTTP API and workers) on a fresh database and an
// in-process JetStream server, and returns a client for tenant "t1".
func testNode(t *testing.T) (*node, *App, *client.Client) {
	t.Helper()
	ctx := context.Background()
	app := testApp(t)
	n, tok := startTestNode(t, ctx, app)
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
	// Every memory of the conversation's user, through the store (the order does not matter).
	var mems []memory.Memory
	err := app.Store.InTx(ctx, "t1", func(tx *memory.Tx) error {
		page, err := tx.ExportMemories(ctx, "u1", uuid.Nil, 1000)
		for _, e := range page {
			mems = append(mems, e.Memory)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	storedTurns := pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM turns")
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

func TestEndToEndReadSideAndSDK(t *testing.T) {
	t.Parallel()
	_, app, c := testNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	week1 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if _, err := c.AddTurns(ctx,
		client.Turn{TurnID: "a1", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "以后安排会议尽量避开每周五下午，因为周五要写周报", OccurredAt: week1},
		client.Turn{TurnID: "a2", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "会议室优先选三楼靠窗那间", OccurredAt: week1.Add(time.Minute)},
		client.Turn{TurnID: "a3", UserID: "u1", SessionID: "a", Role: client.RoleUser, Content: "今天天气不错", OccurredAt: week1.Add(2 * time.Minute)},
		client.Turn{TurnID: "x1", UserID: "u2", SessionID: "x", Role: client.RoleUser, Content: "I prefer morning meetings before 10am", OccurredAt: week1},
	); err != nil {
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	// Session B, a new session, asks for help that depends on session A.
	cr, err := c.Context(ctx, client.ContextRequest{UserID: "u1", SessionID: "b", Query: "帮我安排下一次产品评审会的时间和会议室", BudgetTokens: 800})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"周五下午", "三楼靠窗", "[memory_ref: "} {
		if !strings.Contains(cr.Text, want) {
			t.Errorf("context lacks %q:\n%s", want, cr.Text)
		}
	}
	for _, bad := range []string{"天气不错", "morning meetings"} {
		if strings.Contains(cr.Text, bad) {
			t.Errorf("context holds %q:\n%s", bad, cr.Text)
		}
	}
	if cr.TokensUsed > 800 || len(cr.MemoryIDs) == 0 || cr.RetrievalID == "" {
		t.Fatalf("context: tokens %d, ids %v, retrieval %q", cr.TokensUsed, cr.MemoryIDs, cr.RetrievalID)
	}

	// The user changes the meeting constraint a week later: the old version stays in history.
	week2 := week1.Add(7 * 24 * time.Hour)
	if _, err := c.AddTurns(ctx, client.Turn{TurnID: "c1", UserID: "u1", SessionID: "c", Role: client.RoleUser,
		Content: "以后周五下午开会也可以了", OccurredAt: week2}); err != nil {
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	sr, err := c.Search(ctx, client.SearchRequest{UserID: "u1", Query: "周五下午开会"})
	if err != nil {
		t.Fatal(err)
	}
	var meetingID string
	for _, r := range sr.Results {
		if r.Key == "meeting.avoid_time" {
			meetingID = r.ID
		}
	}
	if meetingID == "" {
		t.Fatalf("no meeting.avoid_time memory in %+v", sr.Results)
	}
	hist, err := c.History(ctx, meetingID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) < 2 || hist[0].Status != "superseded" || hist[len(hist)-1].Change != "supersede" {
		t.Fatalf("history after the change: %+v", hist)
	}

	// An explicit memory goes through the same pipeline.
	imp := 0.9
	rr, err := c.Remember(ctx, client.RememberRequest{ID: "r1", UserID: "u1", Category: "preference", Content: "用户喜欢用 Go 写后端服务", Importance: &imp})
	if err != nil || rr.CandidateID == "" {
		t.Fatalf("remember: %+v %v", rr, err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	sr, err = c.Search(ctx, client.SearchRequest{UserID: "u1", Query: "Go 后端"})
	if err != nil || len(sr.Results) == 0 || !strings.Contains(sr.Results[0].Content, "Go") || sr.Results[0].Source != "manual" {
		t.Fatalf("remembered memory not found first: %+v %v", sr.Results, err)
	}

	// Working memory.
	if _, err := c.PutTaskState(ctx, "task-1", map[string]any{"step": 2}); err != nil {
		t.Fatal(err)
	}
	ts, err := c.TaskState(ctx, "task-1")
	if err != nil || !strings.Contains(string(ts.State), `"step":2`) {
		t.Fatalf("task state: %+v %v", ts, err)
	}
	if err := c.DeleteTaskState(ctx, "task-1"); err != nil {
		t.Fatal(err)
	}
	var apiErr *client.APIError
	if _, err := c.TaskState(ctx, "task-1"); !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Fatalf("deleted task state: %v", err)
	}
}
