package streams_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/streams"
)

// TestWorkerTenantInFlightLetsOtherTenantsThrough: one tenant's flood, larger than the
// worker's concurrency and with every handler of it blocked, does not keep another
// tenant's message, published behind the whole flood, from being handled. Without the
// cap the flood would take every slot and the other tenant's message would wait until
// the flood's handlers returned (here: never before the test releases them).
func TestWorkerTenantInFlightLetsOtherTenantsThrough(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("fair")
	cfg.Concurrency = 8
	cfg.TenantInFlight = 2
	cfg.MaxDeliver = 2 // deferrals must not count: every flood message is deferred many times
	cfg.MaxAckPending = 1000
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
	const flood = 100
	for i := range flood {
		publishTurn(t, js, turnEvent("flood", fmt.Sprintf("u%d", i%7), fmt.Sprintf("f%d", i)))
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
	if st.DeadLettered != 0 || st.Deferred == 0 {
		t.Fatalf("stats %+v: want deferrals and no dead letters", st)
	}
	// Alone, the flood may use all but one of the 8 handlers; never all of them.
	if m := floodMax.Load(); m > 7 {
		t.Fatalf("%d flood handlers ran at once, want at most 7 of 8", m)
	}
}
