package reembed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/engramhq/engram/memory"
)

// Tracker keeps the configured model's coverage (memories with a vector in it, of
// the active, pending and archived ones, over every tenant) for readiness and
// metrics, which read the last count instead of counting on every probe. Safe for
// concurrent use.
type Tracker struct {
	store Store
	model string
	// OnRefresh, when set, is told every fresh count (the metrics gauge).
	OnRefresh func(model string, c memory.Coverage)
	// MaxAge reuses the store's census of memories when one started within it (the
	// memory gauges' of the same process).
	MaxAge time.Duration

	mu    sync.Mutex
	last  memory.Coverage
	known bool
}

// NewTracker tracks model's coverage in store.
func NewTracker(store Store, model string) *Tracker {
	return &Tracker{store: store, model: model}
}

// Model is the tracked model.
func (t *Tracker) Model() string { return t.model }

// Refresh counts the coverage now.
func (t *Tracker) Refresh(ctx context.Context) (memory.Coverage, error) {
	// The first count runs without pauses (readiness waits for it), later ones at the
	// background pace.
	t.mu.Lock()
	pace := memory.Pace{}
	if !t.known {
		pace.Duty = 1
	}
	t.mu.Unlock()
	c, err := coverage(ctx, t.store, nil, Options{Pace: pace, CensusAge: t.MaxAge})
	if err != nil {
		return memory.Coverage{}, err
	}
	t.mu.Lock()
	t.last, t.known = c.Memories, true
	t.mu.Unlock()
	if t.OnRefresh != nil {
		t.OnRefresh(t.model, c.Memories)
	}
	return c.Memories, nil
}

// Run refreshes every interval until ctx ends.
func (t *Tracker) Run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, _ = t.Refresh(ctx) // a failed count keeps the last one; the next tick retries
	}
}

// Detail is the readiness reason: "ok" when every memory has a vector in the model,
// otherwise how many do (a search ranks the others by keyword and recency only).
func (t *Tracker) Detail(context.Context) string {
	t.mu.Lock()
	c, known := t.last, t.known
	t.mu.Unlock()
	if !known {
		return "not counted yet"
	}
	with := c.For(t.model)
	if with >= c.Total {
		return "ok"
	}
	return fmt.Sprintf("incomplete: %d of %d memories (%.1f%%) have a %s vector; the others are searched by keyword and recency until re-embedded (engram reembed)",
		with, c.Total, 100*Ratio(c, t.model), t.model)
}

// Ratio is the last counted coverage; ok is false before the first count.
func (t *Tracker) Ratio() (ratio float64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.known {
		return 0, false
	}
	return Ratio(t.last, t.model), true
}

// Complete reports whether the last count found every memory with a vector in model
// (false before the first count, and for another model): the retriever's
// Config.VectorsComplete.
func (t *Tracker) Complete(model string) bool {
	r, ok := t.Ratio()
	return ok && model == t.model && r >= 1
}
