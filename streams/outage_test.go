package streams_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/engramhq/engram/streams"
)

func TestIsOutage(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("bad turn"), false},
		{"marked", streams.Outage(errors.New("db down")), true},
		{"marked then permanent", streams.Permanent(streams.Outage(errors.New("x"))), false},
		{"refused", fmt.Errorf("storing: %w", refused), true},
		{"reset", fmt.Errorf("query: %w", syscall.ECONNRESET), true},
		{"nats timeout", fmt.Errorf("publishing: %w", nats.ErrTimeout), true},
		{"no responders", nats.ErrNoResponders, true},
		{"deadline", fmt.Errorf("embedding: %w", context.DeadlineExceeded), true},
		{"canceled", fmt.Errorf("embedding: %w", context.Canceled), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := streams.IsOutage(tt.err); got != tt.want {
				t.Fatalf("IsOutage(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// outageConfig is a worker config whose retry budget (MaxDeliver deliveries with Nak
// backoff) is far shorter than the outages the tests make.
func outageConfig(durable string) streams.WorkerConfig {
	cfg := testWorkerConfig(durable)
	cfg.MaxDeliver = 2
	cfg.OutageBackoff = 10 * time.Millisecond
	cfg.MaxOutageBackoff = 40 * time.Millisecond
	return cfg
}

// TestWorkerHoldsThroughOutage: a dependency down for many times the retry budget
// (2 deliveries) neither dead-letters nor redelivers the message: it is held, retried
// in-process, and acked on its first delivery once the dependency is back.
func TestWorkerHoldsThroughOutage(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	var down atomic.Bool
	down.Store(true)
	var deliveries sync.Map // seq → last NumDelivered seen
	w := startWorker(t, js, outageConfig("outage"), func(ctx context.Context, m *streams.Msg) error {
		deliveries.Store(m.StreamSeq, m.NumDelivered)
		if down.Load() {
			return fmt.Errorf("storing turn: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
		}
		return nil
	})
	for i := range 5 {
		publishTurn(t, js, turnEvent("acme", "u1", fmt.Sprintf("t%d", i)))
	}
	// Far more attempts than MaxDeliver allows, and than the Nak path would make.
	waitFor(t, 20*time.Second, "held retries", func() bool { return w.Stats().Held >= 30 })
	down.Store(false)
	waitFor(t, 20*time.Second, "all acked", func() bool { return w.Stats().Acked == 5 })
	st := w.Stats()
	if st.DeadLettered != 0 || st.Nacked != 0 {
		t.Fatalf("stats %+v: want no dead letters and no redeliveries", st)
	}
	deliveries.Range(func(k, v any) bool {
		if v.(uint64) != 1 {
			t.Errorf("message %v was delivered %v times, want 1", k, v)
		}
		return true
	})
	if n := streamMsgs(t, js, streams.DLQStream); n != 0 {
		t.Fatalf("%d DLQ entries", n)
	}
}

// TestWorkerPausesFetchingDuringOutage: while the one message in flight is held, the
// backlog published behind it stays in the stream except for one probe at a time.
func TestWorkerPausesFetchingDuringOutage(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := outageConfig("pause")
	cfg.Concurrency = 50
	// A pull request already waiting when the outage began may still take messages in;
	// a short one expires long before the backlog is published (Held >= 10 means at least
	// 10+20+8*40 ms of hold waits).
	cfg.FetchWait = 100 * time.Millisecond
	var down atomic.Bool
	down.Store(true)
	var seen sync.Map
	var distinct atomic.Int32
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		if _, loaded := seen.LoadOrStore(m.StreamSeq, true); !loaded {
			distinct.Add(1)
		}
		if down.Load() {
			return streams.Outage(errors.New("model endpoint unreachable"))
		}
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "first"))
	waitFor(t, 10*time.Second, "first held", func() bool { return w.Stats().Held >= 10 })
	for i := range 49 {
		publishTurn(t, js, turnEvent("acme", "u1", fmt.Sprintf("t%d", i)))
	}
	waitFor(t, 20*time.Second, "held retries", func() bool { return w.Stats().Held >= 60 })
	// Each probe is one message; the first held message and its hold retries alone make
	// more than 60 attempts, so far fewer than all 50 messages were taken in.
	if d := distinct.Load(); d >= 50 {
		t.Fatalf("%d of 50 messages fetched during the outage: consumption did not pause", d)
	}
	down.Store(false)
	waitFor(t, 20*time.Second, "all acked", func() bool { return w.Stats().Acked == 50 })
	if st := w.Stats(); st.DeadLettered != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestWorkerDeadLettersMessageFailingAlone: a message that keeps failing with an
// outage-like error while other messages succeed is the message's fault: it reaches the
// DLQ after MaxMessageFaults such failures, and the others are all acked.
func TestWorkerDeadLettersMessageFailingAlone(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := outageConfig("alone")
	cfg.Concurrency = 4
	cfg.MaxMessageFaults = 3
	var badCalls atomic.Int32
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		ev, err := streams.DecodeTurnEvent(m.Data)
		if err != nil {
			return streams.Permanent(err)
		}
		if ev.Turn.TurnID == "bad" {
			badCalls.Add(1)
			return streams.Outage(errors.New("embedding reply still invalid"))
		}
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "bad"))
	waitFor(t, 10*time.Second, "bad held", func() bool { return w.Stats().Held >= 1 })
	// Keep other work succeeding until the bad message is judged.
	for i := 0; w.Stats().DeadLettered == 0; i++ {
		if i > 2000 {
			t.Fatal("bad message never dead-lettered")
		}
		publishTurn(t, js, turnEvent("acme", "u1", fmt.Sprintf("ok%d", i)))
		time.Sleep(5 * time.Millisecond)
	}
	entries, err := streams.NewDLQ(js).List(testCtx(t), streams.DLQFilter{Stage: "alone"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("list: %+v, %v", entries, err)
	}
	if e := entries[0]; !strings.Contains(e.Error, "while other messages succeeded") || e.Attempts != 1 {
		t.Fatalf("entry %+v", e)
	}
	if n := badCalls.Load(); n < 4 {
		t.Fatalf("bad message tried %d times, want at least MaxMessageFaults+1", n)
	}
}

// TestWorkerShutdownWhileHoldingRedelivers: stopping the worker during an outage on the
// message's last allowed delivery neither dead-letters nor loses it: the next worker
// gets it again and acks it.
func TestWorkerShutdownWhileHoldingRedelivers(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := outageConfig("shutdown")
	cfg.MaxDeliver = 1
	var down atomic.Bool
	down.Store(true)
	h := func(ctx context.Context, m *streams.Msg) error {
		if down.Load() {
			return streams.Outage(errors.New("database unreachable"))
		}
		return nil
	}
	w1 := startWorker(t, js, cfg, h)
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))
	waitFor(t, 10*time.Second, "held", func() bool { return w1.Stats().Held >= 3 })
	if err := w1.stop(); err != nil {
		t.Fatal(err)
	}
	if st := w1.Stats(); st.DeadLettered != 0 {
		t.Fatalf("first worker dead-lettered: %+v", st)
	}
	down.Store(false)
	w2 := startWorker(t, js, cfg, h)
	waitFor(t, 20*time.Second, "acked by the second worker", func() bool { return w2.Stats().Acked == 1 })
	if st := w2.Stats(); st.DeadLettered != 0 {
		t.Fatalf("second worker: %+v", st)
	}
}
