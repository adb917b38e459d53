package streams_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/streams"
)

// TestWorkerTenantInFlightLetsOtherTenantsThrough: one tenant's flood, far larger than
// the worker's concurrency and with every handler of it blocked, does not keep another
// tenant's message, published behind the whole flood, from being handled. Without the
// cap the flood would take every slot and the other tenant's message would wait until
// the flood's handlers returned (here: never before the test releases them). With the
// surplus deferred by NakWithDelay instead of parked, 3,000 flood messages kept coming
// back ahead of it and it was not handled within a minute.
func TestWorkerTenantInFlightLetsOtherTenantsThrough(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("fair")
	cfg.Concurrency = 8
	cfg.TenantInFlight = 2
	cfg.MaxDeliver = 2       // a park is not a delivery
	cfg.MaxAckPending = 5000 // the worker holds the whole flood to reach past it
	release := make(chan struct{})
	var floodDone, floodRunning, floodMax atomic.Int32
	otherDone := make(chan struct{})
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		if m.Tenant() == "other" {
			close(otherDone)
			return nil
		}
		n := floodRunning.Add(1)
		defer floodRunning.Add(-1)
		for {
			cur := floodMax.Load()
			if n <= cur || floodMax.CompareAndSwap(cur, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		floodDone.Add(1)
		return nil
	})
	const flood = 3000
	evs := make([]streams.TurnEvent, flood)
	for i := range evs {
		evs[i] = turnEvent("flood", fmt.Sprintf("u%d", i%7), fmt.Sprintf("f%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}
	publishTurn(t, js, turnEvent("other", "u1", "o1"))
	select {
	case <-otherDone:
	case <-time.After(60 * time.Second):
		t.Fatal("the other tenant's message was not handled while the flood was blocked")
	}
	if d := floodDone.Load(); d != 0 {
		t.Fatalf("%d flood messages finished before the other tenant's: the flood was not blocked", d)
	}
	close(release)
	waitFor(t, 60*time.Second, "everything acked", func() bool { return w.Stats().Acked == flood+1 })
	st := w.Stats()
	if st.DeadLettered != 0 || st.Nacked != 0 || st.Parked < flood/2 {
		t.Fatalf("stats %+v: want the flood parked, no redeliveries and no dead letters", st)
	}
	// Parked: most of the flood (a few lost by a pull request that expired under them
	// come back after AckWait, when nothing waits any more). Alone, the flood may use
	// all but one of the 8 handlers; never all of them.
	if m := floodMax.Load(); m > 7 {
		t.Fatalf("%d flood handlers ran at once, want at most 7 of 8", m)
	}
}

// TestWorkerParkedMessagesLiveThroughAckWaitShutdownAndErasure: messages parked behind a
// blocked handler for many ack waits are kept alive (no redelivery); one deleted from
// the stream while parked is settled without reaching the handler; at shutdown the
// parked ones are handed back, and the next worker handles each of them once.
func TestWorkerParkedMessagesLiveThroughAckWaitShutdownAndErasure(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("parked")
	cfg.Concurrency = 2
	cfg.TenantInFlight = 1
	// Progress reports go out every third of AckWait; a second leaves a loaded CI
	// machine room for a late one without a redelivery.
	cfg.AckWait = time.Second
	cfg.MaxAckPending = 100
	release := make(chan struct{})
	var mu sync.Mutex
	handled := map[uint64][]uint64{} // seq → NumDelivered of each run
	h := func(ctx context.Context, m *streams.Msg) error {
		mu.Lock()
		handled[m.StreamSeq] = append(handled[m.StreamSeq], m.NumDelivered)
		mu.Unlock()
		if m.StreamSeq == 1 {
			<-release
		}
		return nil
	}
	w1 := startWorker(t, js, cfg, h)
	const n = 20
	evs := make([]streams.TurnEvent, n)
	for i := range evs {
		evs[i] = turnEvent("acme", "u1", fmt.Sprintf("t%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}
	// Alone, the tenant may use 1 of the 2 handlers: 1 runs (blocked), 19 parked.
	waitFor(t, 20*time.Second, "the flood parked", func() bool { return w1.Stats().Parked == n-1 })
	s, err := js.Stream(testCtx(t), streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(testCtx(t), 2); err != nil { // next in line: erased while parked
		t.Fatal(err)
	}
	cons, err := js.Consumer(testCtx(t), streams.TurnsStream, "parked")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * cfg.AckWait) // several ack waits with the first handler blocked
	info, err := cons.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	// n-1: JetStream drops a deleted message from the pending set itself.
	if info.NumRedelivered != 0 || info.NumAckPending != n-1 {
		t.Fatalf("consumer %d redelivered, %d pending: want the parked messages kept alive", info.NumRedelivered, info.NumAckPending)
	}
	// Stop with the blocked handler released during the grace period.
	go func() { time.Sleep(100 * time.Millisecond); close(release) }()
	if err := w1.stop(); err != nil {
		t.Fatal(err)
	}
	w2 := startWorker(t, js, cfg, h)
	waitFor(t, 20*time.Second, "everything settled", func() bool {
		i, err := cons.Info(testCtx(t))
		return err == nil && i.NumAckPending == 0 && i.NumPending == 0
	})
	if err := w2.stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := handled[2]; ok {
		t.Fatal("the message deleted from the stream reached the handler")
	}
	for seq := uint64(1); seq <= n; seq++ {
		if seq == 2 {
			continue
		}
		if runs := handled[seq]; len(runs) != 1 {
			t.Fatalf("message %d handled %d times (%v), want once", seq, len(runs), runs)
		}
	}
	if st := w2.Stats(); st.DeadLettered != 0 {
		t.Fatalf("second worker %+v", st)
	}
}
