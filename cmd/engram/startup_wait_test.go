package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/tcpproxy"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// syncBuffer is a log sink the test reads while the worker writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// TestWorkerStartsWhileDependenciesAreDown: `engram worker all` started while
// PostgreSQL and NATS are both unreachable does not exit: it waits for PostgreSQL, then
// for NATS, logging what it waits for, and once both are back it consumes a turn
// published meanwhile and stores its memory.
func TestWorkerStartsWhileDependenciesAreDown(t *testing.T) {
	t.Parallel()
	appURL := pgtest.URL(t)
	pgProxy, pgURL, err := tcpproxy.URL(appURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pgProxy.Close)
	ns := natstest.Start(t)
	natsProxy, natsURL, err := tcpproxy.URL(ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(natsProxy.Close)
	pgProxy.Cut()
	natsProxy.Cut()

	cfg, err := LoadConfig(envMap(map[string]string{
		"ENGRAM_DATABASE_URL": pgURL, "ENGRAM_NATS_URL": natsURL, "ENGRAM_DATA_DIR": t.TempDir(),
		"ENGRAM_WORKER_HTTP_ADDR": "off", "ENGRAM_CONSOLIDATE_CRON": "off",
	}))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	env := &Env{Config: cfg, Stdout: io.Discard, Stderr: io.Discard,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWorker(ctx, env, []string{"all"}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("worker did not stop")
		}
	})
	waitLog := func(what string, n int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for logs.count(what) < n {
			select {
			case err := <-done:
				done <- err // for the clean-up
				t.Fatalf("the worker exited while waiting for %q: %v", what, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log after a minute", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLog(`msg="waiting for PostgreSQL"`, 3) // retried, still running
	if err := pgProxy.Restore(); err != nil {
		t.Fatal(err)
	}
	waitLog(`msg="PostgreSQL is reachable; starting"`, 1)
	waitLog(`msg="waiting for NATS"`, 2)
	if err := natsProxy.Restore(); err != nil {
		t.Fatal(err)
	}
	waitLog(`msg="NATS is reachable; starting"`, 1)

	// A turn published now is consumed: the worker came up.
	_, js := ns.Connect(t)
	tctx, tcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer tcancel()
	if err := streams.EnsureTopology(tctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	ev := streams.TurnEvent{Tenant: "t1", Turn: memory.Turn{TurnID: "late-1", UserID: "u1", SessionID: "s1",
		Role: memory.RoleUser, Content: "I prefer green tea in the afternoon", OccurredAt: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}}
	if _, err := streams.PublishTurn(tctx, js, ev); err != nil {
		t.Fatal(err)
	}
	pool, err := memory.Connect(tctx, appURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := memory.NewStore(pool)
	for {
		users, err := store.ConsoleUsers(tctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if len(users) > 0 {
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the worker exited: %v", err)
		case <-tctx.Done():
			t.Fatal("the turn published after start-up was never stored as a memory")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
