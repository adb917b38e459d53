package retriever

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/memory"
)

// RecordWriter writes retrieval records off the request path: while Run runs, a search
// or context call queues its record and returns, and Run writes the queue in batches
// (one transaction per tenant, pipelined), at the latest every interval. When Run is
// not running, or the queue is full, the caller writes its record itself, so a record
// is never dropped for lack of room. What a crash loses: the records queued and not
// yet written (at most one interval's worth, 100 ms by default), and, as before, the
// last asynchronously committed ones (memory.Store.RecordRetrievals). A record is
// written at most once: its id is its key.
type RecordWriter struct {
	store    *memory.Store
	ch       chan tenantRecord
	interval time.Duration
	logger   *slog.Logger
	running  atomic.Bool
	mu       sync.Mutex // serialises flushes
	written  atomic.Int64
}

type tenantRecord struct {
	tenant string
	rec    memory.Retrieval
}

// recordBatch bounds one flush's batch per tenant.
const recordBatch = 512

// NewRecordWriter makes a writer with a queue of buffer records, flushing every interval.
func NewRecordWriter(store *memory.Store, buffer int, interval time.Duration, logger *slog.Logger) *RecordWriter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &RecordWriter{store: store, ch: make(chan tenantRecord, buffer), interval: interval, logger: logger}
}

// Queue hands rec to the writer; false when the caller must write it itself (the
// writer is not running, or its queue is full).
func (w *RecordWriter) Queue(tenant string, rec memory.Retrieval) bool {
	if !w.running.Load() {
		return false
	}
	select {
	case w.ch <- tenantRecord{tenant: tenant, rec: rec}:
		return true
	default:
		return false
	}
}

// Written is how many records the writer has written.
func (w *RecordWriter) Written() int64 { return w.written.Load() }

// Run writes queued records until ctx ends, then writes what is left (with a short
// grace period of its own).
func (w *RecordWriter) Run(ctx context.Context) error {
	w.running.Store(true)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := w.Flush(ctx); err != nil && ctx.Err() == nil {
				w.logger.WarnContext(ctx, "writing retrieval records failed; retrying", "error", err)
			}
		case <-ctx.Done():
			w.running.Store(false)
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := w.Flush(fctx)
			cancel()
			return err
		}
	}
}

// Flush writes every queued record now (a reader of a record calls it first, so a
// record is readable as soon as its call has returned). Records of a batch that failed
// are queued again when there is room, so a database outage delays them.
func (w *RecordWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	byTenant := map[string][]memory.Retrieval{}
	for drained := false; !drained; {
		select {
		case x := <-w.ch:
			byTenant[x.tenant] = append(byTenant[x.tenant], x.rec)
		default:
			drained = true
		}
	}
	var firstErr error
	for tenant, recs := range byTenant {
		for lo := 0; lo < len(recs); lo += recordBatch {
			batch := recs[lo:min(lo+recordBatch, len(recs))]
			if err := w.store.RecordRetrievals(ctx, tenant, batch); err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("writing %d retrieval records of tenant %s: %w", len(batch), tenant, err)
				}
				w.requeue(tenant, batch)
				continue
			}
			w.written.Add(int64(len(batch)))
		}
	}
	return firstErr
}

// requeue puts records back for the next flush; those without room are logged lost.
func (w *RecordWriter) requeue(tenant string, recs []memory.Retrieval) {
	for i, r := range recs {
		select {
		case w.ch <- tenantRecord{tenant: tenant, rec: r}:
		default:
			w.logger.Warn("retrieval record queue full; records lost", "tenant", tenant, "lost", len(recs)-i)
			return
		}
	}
}
