package streams_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/streams"
	"github.com/nats-io/nats.go/jetstream"
)

// deliveryLog records when each delivery of each message reached the handler.
type deliveryLog struct {
	mu    sync.Mutex
	times map[uint64][]time.Time
}

func newDeliveryLog() *deliveryLog { return &deliveryLog{times: map[uint64][]time.Time{}} }

func (l *deliveryLog) add(seq uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.times[seq] = append(l.times[seq], time.Now())
	return len(l.times[seq])
}

func (l *deliveryLog) get(seq uint64) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.times[seq]...)
}

func consumerInfo(t *testing.T, js jetstream.JetStream, durable string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := js.Consumer(testCtx(t), streams.TurnsStream, durable)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestWorkerRetriesWithBackoffThenAcks(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("retry")
	cfg.InitialBackoff = 200 * time.Millisecond
	log := newDeliveryLog()
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		if n := log.add(m.StreamSeq); n <= 2 {
			return fmt.Errorf("transient failure %d", n)
		}
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))

	waitFor(t, 10*time.Second, "ack", func() bool { return w.Stats().Acked == 1 })
	times := log.get(1)
	if len(times) != 3 {
		t.Fatalf("%d deliveries, want 3", len(times))
	}
	// Nak delays: 200ms after the first delivery, 400ms after the second. Lower bounds
	// only: a slow machine may redeliver later, never earlier.
	for i, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		if got := times[i+1].Sub(times[i]); got < want {
			t.Errorf("redelivery %d after %s, want >= %s", i+1, got, want)
		}
	}
	st := w.Stats()
	if st.Acked != 1 || st.Nacked != 2 || st.DeadLettered != 0 {
		t.Errorf("stats %+v", st)
	}
	if info := consumerInfo(t, js, "retry"); info.NumAckPending != 0 || info.AckFloor.Stream != 1 {
		t.Errorf("consumer: ack pending %d, ack floor %d", info.NumAckPending, info.AckFloor.Stream)
	}
}

func TestWorkerRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	log := newDeliveryLog()
	w := startWorker(t, js, testWorkerConfig("retry-after"), func(ctx context.Context, m *streams.Msg) error {
		if log.add(m.StreamSeq) == 1 {
			return streams.RetryAfter(500*time.Millisecond, errors.New("rate limited"))
		}
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))
	waitFor(t, 10*time.Second, "ack", func() bool { return w.Stats().Acked == 1 })
	times := log.get(1)
	if len(times) != 2 || times[1].Sub(times[0]) < 500*time.Millisecond {
		t.Fatalf("deliveries %v, want 2 at least 500ms apart", times)
	}
}

func TestWorkerRecoversPanic(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	var calls atomic.Int32
	w := startWorker(t, js, testWorkerConfig("panic"), func(ctx context.Context, m *streams.Msg) error {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))
	waitFor(t, 10*time.Second, "ack", func() bool { return w.Stats().Acked == 1 })
	if st := w.Stats(); st.Panics != 1 || st.Nacked != 1 {
		t.Fatalf("stats %+v, want one panic, one nak", st)
	}
}

func TestWorkerDeadLettersAfterMaxDeliverAndReplays(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("extractor")
	cfg.MaxDeliver = 3
	var healthy atomic.Bool
	var processed atomic.Pointer[streams.Msg]
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		if !healthy.Load() {
			return errors.New("llm unavailable\nsecond line")
		}
		processed.Store(m)
		return nil
	})
	ev := turnEvent("acme", "u1", "t1")
	publishTurn(t, js, ev)
	waitFor(t, 10*time.Second, "dead letter", func() bool { return w.Stats().DeadLettered == 1 })

	dlq := streams.NewDLQ(js)
	entries, err := dlq.List(testCtx(t), streams.DLQFilter{Stage: "extractor"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("list: %d entries, %v", len(entries), err)
	}
	e := entries[0]
	s, _ := js.Stream(testCtx(t), streams.TurnsStream)
	orig, err := s.GetMsg(testCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if e.Stage != "extractor" || e.Tenant != "acme" || e.Subject != orig.Subject || e.Stream != streams.TurnsStream ||
		e.Seq != 1 || e.Attempts != 3 || e.MsgID != ev.MsgID() || !strings.Contains(e.Error, "llm unavailable second line") ||
		e.FirstFailure.IsZero() || e.LastFailure.Before(e.FirstFailure) || !bytes.Equal(e.Data, orig.Data) {
		t.Fatalf("entry %+v", e)
	}
	for _, h := range []string{streams.HeaderMsgID, streams.HeaderTenant, streams.HeaderEvent} {
		if e.Headers.Get(h) != orig.Header.Get(h) {
			t.Errorf("header %s = %q, original %q", h, e.Headers.Get(h), orig.Header.Get(h))
		}
	}
	if got, err := dlq.Get(testCtx(t), e.ID); err != nil || got.Seq != 1 || got.Attempts != 3 {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if info := consumerInfo(t, js, "extractor"); info.NumAckPending != 0 || info.NumRedelivered != 0 {
		t.Fatalf("original not terminated: %+v", info)
	}
	if st := w.Stats(); st.Nacked != 2 || st.Acked != 0 {
		t.Fatalf("stats %+v", st)
	}

	healthy.Store(true)
	res, err := dlq.Replay(testCtx(t), streams.DLQFilter{Stage: "extractor"})
	if err != nil || res.Replayed != 1 || res.Failed != 0 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	waitFor(t, 10*time.Second, "replayed message processed", func() bool { return w.Stats().Acked == 1 })
	m := processed.Load()
	if !bytes.Equal(m.Data, orig.Data) || m.Subject != orig.Subject || m.NumDelivered != 1 ||
		m.Headers.Get(streams.HeaderMsgID) != streams.ReplayMsgID(ev.MsgID(), e.ID) ||
		m.Headers.Get(streams.HeaderTenant) != "acme" || m.Headers.Get(streams.HeaderDLQStage) != "" {
		t.Fatalf("replayed message %+v", m)
	}
	if left, err := dlq.List(testCtx(t), streams.DLQFilter{}); err != nil || len(left) != 0 {
		t.Fatalf("DLQ after replay: %d entries, %v", len(left), err)
	}
}

func TestWorkerPermanentAndPoisonGoStraightToDLQ(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("resolver")
	cfg.Validate = streams.ValidateTurnPayload
	var calls atomic.Int32
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		calls.Add(1)
		return streams.Permanent(errors.New("contradicts policy"))
	})
	if _, err := js.Publish(testCtx(t), "engram.turns.acme.u1", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "poison dead-lettered", func() bool { return w.Stats().Poison == 1 })
	if calls.Load() != 0 {
		t.Fatal("handler saw the poison payload")
	}
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))
	waitFor(t, 10*time.Second, "permanent dead-lettered", func() bool { return w.Stats().DeadLettered == 2 })

	entries, err := streams.NewDLQ(js).List(testCtx(t), streams.DLQFilter{Stage: "resolver"})
	if err != nil || len(entries) != 2 {
		t.Fatalf("list: %+v, %v", entries, err)
	}
	if e := entries[0]; e.Attempts != 1 || !strings.HasPrefix(e.Error, "poison: ") || e.Tenant != "acme" || string(e.Data) != "{not json" {
		t.Errorf("poison entry %+v", e)
	}
	if e := entries[1]; e.Attempts != 1 || !strings.Contains(e.Error, "contradicts policy") || calls.Load() != 1 {
		t.Errorf("permanent entry %+v, %d calls", e, calls.Load())
	}
}

func TestWorkerInProgressOutlivesAckWait(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	// Many handlers blocked at once, as behind a micro-batcher: every one of them must
	// keep its message alive past AckWait.
	const n = 50
	evs := make([]streams.TurnEvent, n)
	for i := range evs {
		evs[i] = turnEvent("acme", "u1", fmt.Sprintf("t%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}
	cfg := testWorkerConfig("slow")
	cfg.AckWait = 2 * time.Second // reports every third of it: room for a late one under -race
	cfg.Concurrency = 64
	var calls atomic.Int32
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		calls.Add(1)
		select {
		case <-time.After(5 * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	waitFor(t, 30*time.Second, "acks", func() bool { return w.Stats().Acked == n })
	time.Sleep(cfg.AckWait + 200*time.Millisecond) // longer than AckWait: a timed-out copy would show up
	if got := calls.Load(); got != n {
		t.Fatalf("%d deliveries, want %d", got, n)
	}
	if info := consumerInfo(t, js, "slow"); info.NumRedelivered != 0 {
		t.Fatalf("%d redelivered", info.NumRedelivered)
	}
}

func TestWorkerShutdownDrainsInFlightAndLosesNothing(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	const total = 24
	evs := make([]streams.TurnEvent, total)
	for i := range evs {
		evs[i] = turnEvent("acme", "u1", fmt.Sprintf("t%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	handled := map[string]int{}
	var started, finished atomic.Int32
	handler := func(ctx context.Context, m *streams.Msg) error {
		started.Add(1)
		defer finished.Add(1)
		time.Sleep(300 * time.Millisecond) // slow work that must not be cut short
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ev, err := streams.DecodeTurnEvent(m.Data)
		if err != nil {
			return streams.Permanent(err)
		}
		mu.Lock()
		handled[ev.Turn.TurnID]++
		mu.Unlock()
		return nil
	}
	cfg := testWorkerConfig("drain")
	cfg.Concurrency = 4
	cfg.AckWait = 2 * time.Second // bounds the wait if a pull was cut off mid-flight

	w1 := startWorker(t, js, cfg, handler)
	waitFor(t, 10*time.Second, "handlers running", func() bool { return started.Load() >= 4 })
	if err := w1.stop(); err != nil {
		t.Fatal(err)
	}
	st := w1.Stats()
	if s, f := started.Load(), finished.Load(); s != f || int64(f) != st.Acked || st.Delivered != st.Acked {
		t.Fatalf("after shutdown: started %d, finished %d, stats %+v", s, f, st)
	}
	if st.Acked == 0 || st.Acked == total {
		t.Fatalf("shutdown test did not interrupt processing: stats %+v", st)
	}

	w2 := startWorker(t, js, cfg, handler)
	waitFor(t, 20*time.Second, "all turns handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == total
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range handled {
		if n != 1 {
			t.Errorf("turn %s handled %d times", id, n)
		}
	}
	if got := st.Acked + w2.Stats().Acked; got != total {
		t.Errorf("%d acked in total, want %d", got, total)
	}
}

func TestWorkerConcurrencyBoundsUnacked(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	evs := make([]streams.TurnEvent, 40)
	for i := range evs {
		evs[i] = turnEvent("acme", fmt.Sprintf("u%d", i%5), fmt.Sprintf("t%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var running, peak atomic.Int32
	cfg := testWorkerConfig("bounded")
	cfg.Concurrency = 8
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release // a micro-batch that flushes later
		return nil
	})
	waitFor(t, 10*time.Second, "handlers blocked", func() bool { return running.Load() == 8 })
	time.Sleep(200 * time.Millisecond)
	if info := consumerInfo(t, js, "bounded"); info.NumAckPending != 8 {
		t.Fatalf("%d un-acked with 8 handlers busy, want 8", info.NumAckPending)
	}
	close(release)
	waitFor(t, 10*time.Second, "all acked", func() bool { return w.Stats().Acked == 40 })
	if peak.Load() > 8 {
		t.Fatalf("peak concurrency %d > 8", peak.Load())
	}
}

func TestNewWorkerRejectsBadConfig(t *testing.T) {
	t.Parallel()
	h := func(context.Context, *streams.Msg) error { return nil }
	tests := []struct {
		name string
		cfg  streams.WorkerConfig
		h    streams.Handler
		want string
	}{
		{"no stream", streams.WorkerConfig{Durable: "d"}, h, "Stream"},
		{"no durable", streams.WorkerConfig{Stream: "S"}, h, "Durable"},
		{"bad stage", streams.WorkerConfig{Stream: "S", Durable: "d", Stage: "a b"}, h, "Stage"},
		{"nil handler", streams.WorkerConfig{Stream: "S", Durable: "d"}, nil, "handler"},
		{"jitter", streams.WorkerConfig{Stream: "S", Durable: "d", BackoffJitter: 1}, h, "BackoffJitter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := streams.NewWorker(nil, tt.cfg, tt.h); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want mention of %q", err, tt.want)
			}
		})
	}
	w, err := streams.NewWorker(nil, streams.WorkerConfig{Stream: "S", Durable: "d", Concurrency: 2000}, h)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Config()
	if c.Stage != "d" || c.MaxDeliver != 5 || c.AckWait != 30*time.Second || c.MaxAckPending != 2000 ||
		c.ShutdownGrace != 30*time.Second || c.InitialBackoff != time.Second {
		t.Fatalf("defaults %+v", c)
	}
}

func TestWorkerKeepsPullingAcrossServerRestart(t *testing.T) {
	t.Parallel()
	srv, js := setup(t)
	var calls atomic.Int32
	w := startWorker(t, js, testWorkerConfig("restart"), func(ctx context.Context, m *streams.Msg) error {
		calls.Add(1)
		return nil
	})
	publishTurn(t, js, turnEvent("acme", "u1", "before"))
	waitFor(t, 10*time.Second, "first ack", func() bool { return w.Stats().Acked == 1 })

	srv.Restart(t)
	waitFor(t, 15*time.Second, "publish after restart", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := streams.PublishTurn(ctx, js, turnEvent("acme", "u1", "after"))
		return err == nil
	})
	waitFor(t, 15*time.Second, "second ack", func() bool { return w.Stats().Acked == 2 })
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d handler calls, want 2", n)
	}
}
