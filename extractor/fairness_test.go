package extractor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// blockingExtractor extracts nothing; batches of tenant "flood" wait until release is
// closed. It records which tenants' batches it finished, in order.
type blockingExtractor struct {
	release chan struct{}
	mu      sync.Mutex
	order   []string
}

func (*blockingExtractor) Name() string    { return "blocking" }
func (*blockingExtractor) Version() string { return "1" }
func (*blockingExtractor) Model() string   { return "" }

func (e *blockingExtractor) Extract(ctx context.Context, b extractor.Batch) ([]memory.Candidate, error) {
	if b.Tenant == "flood" {
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.mu.Lock()
	e.order = append(e.order, b.Tenant)
	e.mu.Unlock()
	return nil, nil
}

func (e *blockingExtractor) finished() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.order...)
}

// TestOtherTenantExtractedDuringFlood: one tenant's flood of turns in many sessions,
// far more than the worker's handlers and all stuck in extraction, does not keep another
// tenant's turn, published behind the whole flood, from being extracted: the worker
// caps each tenant's handlers and reaches past the flood. Without the cap the flood's
// turns would hold every handler and the other tenant's turn would wait for them.
func TestOtherTenantExtractedDuringFlood(t *testing.T) {
	t.Parallel()
	store := pgtest.Store(t)
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &blockingExtractor{release: make(chan struct{})}
	p, err := extractor.NewPipeline(extractor.PipelineConfig{Store: store, Publisher: js, Extractor: ex, Redactor: red,
		BatchQuiet: 50 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	// 16 handlers, at most 8 (BatchMax) per tenant.
	w, err := streams.NewWorker(js, p.WorkerConfig(streams.WorkerConfig{Concurrency: 16, FetchWait: 500 * time.Millisecond,
		ShutdownGrace: 10 * time.Second, Logger: quietLogger()}), p.Handle)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	const flood = 120
	for i := range flood {
		tr := userTurn(fmt.Sprintf("f%03d", i), fmt.Sprintf("s%02d", i%40), i, "I prefer my reports on Mondays.")
		if _, err := streams.PublishTurn(testCtx(t), js, streams.TurnEvent{Tenant: "flood", Turn: tr}); err != nil {
			t.Fatal(err)
		}
	}
	other := userTurn("o1", "s1", 0, "I prefer my reports on Tuesdays.")
	if _, err := streams.PublishTurn(testCtx(t), js, streams.TurnEvent{Tenant: "other", Turn: other}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the other tenant's turn extracted", func() bool { return len(ex.finished()) > 0 })
	if got := ex.finished(); got[0] != "other" {
		t.Fatalf("extraction order %v: want the other tenant's batch first", got)
	}
	if st := w.Stats(); st.Parked == 0 {
		t.Fatalf("stats %+v: no flood turn was parked", st)
	}
	close(ex.release)
	waitFor(t, 120*time.Second, "the flood extracted", func() bool { return w.Stats().Acked == flood+1 })
	if st := w.Stats(); st.DeadLettered != 0 {
		t.Fatalf("stats %+v", st)
	}
}
