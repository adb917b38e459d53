package streams_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

// setup starts a JetStream server with engram's topology.
func setup(t *testing.T) (*natstest.Server, jetstream.JetStream) {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	return srv, js
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func turnEvent(tenant, user, turnID string) streams.TurnEvent {
	return streams.TurnEvent{
		Tenant: tenant,
		Turn: memory.Turn{
			TurnID: turnID, UserID: user, SessionID: "s1", Role: memory.RoleUser,
			Content: "I prefer tea", OccurredAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		},
	}
}

func publishTurn(t *testing.T, js jetstream.JetStream, ev streams.TurnEvent) {
	t.Helper()
	if _, err := streams.PublishTurn(testCtx(t), js, ev); err != nil {
		t.Fatal(err)
	}
}

// testWorkerConfig is a TURNS worker with test-sized timings.
func testWorkerConfig(durable string) streams.WorkerConfig {
	return streams.WorkerConfig{
		Stream:         streams.TurnsStream,
		Durable:        durable,
		InitialBackoff: 20 * time.Millisecond,
		MaxBackoff:     time.Second,
		BackoffJitter:  -1,
		FetchWait:      time.Second,
		ShutdownGrace:  10 * time.Second,
		Logger:         quietLogger(),
	}
}

// runningWorker is a worker running in the background until stop.
type runningWorker struct {
	*streams.Worker
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func startWorker(t *testing.T, js jetstream.JetStream, cfg streams.WorkerConfig, h streams.Handler) *runningWorker {
	t.Helper()
	w, err := streams.NewWorker(js, cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rw := &runningWorker{Worker: w, cancel: cancel, done: make(chan error, 1)}
	go func() { rw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		if err := rw.stop(); err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	return rw
}

// stop cancels the worker and waits for Run to return.
func (rw *runningWorker) stop() error {
	rw.once.Do(func() {
		rw.cancel()
		select {
		case rw.err = <-rw.done:
		case <-time.After(30 * time.Second):
			rw.err = errors.New("worker did not stop")
		}
	})
	return rw.err
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func streamMsgs(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	s, err := js.Stream(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
