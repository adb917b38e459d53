package retriever

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// AccessRecorder counts reads of memories off the request path: reads are queued on a
// buffered channel and Run writes them once per interval, one statement per tenant
// (memory.Store.AddAccessCounts). A full queue drops updates (counted) instead of
// slowing reads down: access counts feed decay and ranking heuristics, not correctness.
type AccessRecorder struct {
	store    *memory.Store
	ch       chan accessEvent
	interval time.Duration
	logger   *slog.Logger

	mu      sync.Mutex // guards pending and serialises flushes
	pending map[string]map[uuid.UUID]*accessCount

	dropped, statements, flushes atomic.Int64
}

type accessEvent struct {
	tenant string
	ids    []uuid.UUID
	at     time.Time
}

type accessCount struct {
	n  int64
	at time.Time
}

// AccessStats reports what the recorder has done.
type AccessStats struct {
	Dropped    int64 // reads not counted because the queue was full
	Statements int64 // UPDATE statements written (one per tenant per flush)
	Flushes    int64 // flushes that wrote something
}

// NewAccessRecorder makes a recorder with a queue of buffer reads, flushing every interval.
func NewAccessRecorder(store *memory.Store, buffer int, interval time.Duration, logger *slog.Logger) *AccessRecorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &AccessRecorder{store: store, ch: make(chan accessEvent, buffer), interval: interval, logger: logger,
		pending: map[string]map[uuid.UUID]*accessCount{}}
}

// Record queues one read of ids; it never blocks.
func (a *AccessRecorder) Record(tenant string, ids []uuid.UUID) {
	if len(ids) == 0 {
		return
	}
	select {
	case a.ch <- accessEvent{tenant: tenant, ids: ids, at: time.Now().UTC()}:
	default:
		a.dropped.Add(int64(len(ids)))
	}
}

// Stats returns the counters.
func (a *AccessRecorder) Stats() AccessStats {
	return AccessStats{Dropped: a.dropped.Load(), Statements: a.statements.Load(), Flushes: a.flushes.Load()}
}

// Run drains the queue and flushes every interval until ctx ends, then flushes what
// is left (with a short grace period of its own).
func (a *AccessRecorder) Run(ctx context.Context) error {
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case ev := <-a.ch:
			a.add(ev)
		case <-t.C:
			if err := a.Flush(ctx); err != nil && ctx.Err() == nil {
				a.logger.WarnContext(ctx, "flushing access counts failed", "error", err)
			}
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := a.Flush(fctx)
			cancel()
			return err
		}
	}
}

func (a *AccessRecorder) add(ev accessEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	byID := a.pending[ev.tenant]
	if byID == nil {
		byID = map[uuid.UUID]*accessCount{}
		a.pending[ev.tenant] = byID
	}
	for _, id := range ev.ids {
		c := byID[id]
		if c == nil {
			c = &accessCount{}
			byID[id] = c
		}
		c.n++
		if ev.at.After(c.at) {
			c.at = ev.at
		}
	}
}

// Flush writes everything queued so far: one statement per tenant.
func (a *AccessRecorder) Flush(ctx context.Context) error {
	for drained := false; !drained; {
		select {
		case ev := <-a.ch:
			a.add(ev)
		default:
			drained = true
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		return nil
	}
	batch := a.pending
	a.pending = map[string]map[uuid.UUID]*accessCount{}
	var firstErr error
	for tenant, byID := range batch {
		ids := make([]uuid.UUID, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		// A fixed order keeps concurrent flushers (several processes) from deadlocking.
		slices.SortFunc(ids, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
		reads := make([]memory.MemoryAccess, len(ids))
		for i, id := range ids {
			reads[i] = memory.MemoryAccess{ID: id, N: byID[id].n, At: byID[id].at}
		}
		err := a.store.AddAccessCounts(ctx, tenant, reads)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("writing access counts of tenant %s: %w", tenant, err)
			}
			continue
		}
		a.statements.Add(1)
	}
	a.flushes.Add(1)
	return firstErr
}
