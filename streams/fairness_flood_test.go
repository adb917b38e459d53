package streams_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/streams"
)

// TestWorkerFloodDoesNotStarveOtherTenant: tenant A has thousands of turns queued, each
// taking a while to handle; tenant B's one turn, published after all of them, is handled
// while most of A's backlog is still waiting, and afterwards every message is acked
// once and none is dead-lettered, without redeliveries: parking is not a delivery.
func TestWorkerFloodDoesNotStarveOtherTenant(t *testing.T) {
	t.Parallel()
	_, js := setup(t)
	cfg := testWorkerConfig("flood")
	cfg.Concurrency = 8
	cfg.TenantInFlight = 2
	cfg.MaxDeliver = 2
	cfg.MaxAckPending = 50_000
	const flood = 3000
	var floodDone atomic.Int32
	floodAtOther := make(chan int32, 1)
	var handled [flood + 2]atomic.Int32 // by stream sequence; A's are 1…flood, B's flood+1
	w := startWorker(t, js, cfg, func(ctx context.Context, m *streams.Msg) error {
		if m.StreamSeq < uint64(len(handled)) {
			handled[m.StreamSeq].Add(1)
		}
		if m.Tenant() == "other" {
			floodAtOther <- floodDone.Load()
			return nil
		}
		// Real work takes time; the assertion below is on counts, not on this.
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		floodDone.Add(1)
		return nil
	})
	evs := make([]streams.TurnEvent, flood)
	for i := range evs {
		evs[i] = turnEvent("flood", fmt.Sprintf("u%d", i%7), fmt.Sprintf("f%d", i))
	}
	if _, err := streams.PublishTurns(testCtx(t), js, evs); err != nil {
		t.Fatal(err)
	}
	publishTurn(t, js, turnEvent("other", "u1", "o1"))
	var done int32
	select {
	case done = <-floodAtOther:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the other tenant's turn was not handled (%d of %d flood turns done)", floodDone.Load(), flood)
	}
	if done > flood/2 {
		t.Fatalf("the other tenant's turn was handled after %d of %d flood turns: it waited behind the flood", done, flood)
	}
	t.Logf("the other tenant's turn was handled after %d of %d flood turns", done, flood)
	waitFor(t, 2*time.Minute, "everything acked", func() bool { return w.Stats().Acked == flood+1 })
	if st := w.Stats(); st.DeadLettered != 0 || st.Nacked != 0 {
		t.Fatalf("stats %+v: want no dead letters and no redeliveries", st)
	}
	for seq := 1; seq < len(handled); seq++ {
		if n := handled[seq].Load(); n != 1 {
			t.Fatalf("message %d handled %d times, want once", seq, n)
		}
	}
}
