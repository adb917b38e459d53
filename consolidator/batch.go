package consolidator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Owner batches. One owner's candidates serialise on its lock, so when several of
// them are handled at once (a burst of one conversation, a user's backlog after an
// outage) all but one would wait for the lock, each then paying a transaction of its
// own: BEGIN, the tenant, the lock, a commit and its WAL flush. ResolveQueued lets
// them wait in a queue instead: the first becomes the owner's leader and resolves
// everything queued for the owner in one transaction, in arrival order, each
// candidate exactly as Resolve would (its reads see the earlier candidates' writes;
// every change writes its version, lineage, audit and ledger rows); the others get
// their decisions when it commits, and the first of those queued meanwhile leads
// the next batch. A batch that fails is resolved again one candidate at a time, with
// Resolve's retries, so one bad candidate fails alone.

// maxOwnerBatch bounds the candidates of one transaction (and so how long the owner's
// lock is held at once).
const maxOwnerBatch = 32

// ownerBatches holds the owners that have candidates waiting or being resolved.
type ownerBatches struct {
	mu     sync.Mutex
	owners map[string]*ownerQueue
	// Committed batches of more than one candidate, and their candidates.
	shared, sharedCandidates atomic.Int64
}

// BatchStats reports the transactions that resolved more than one candidate of an
// owner (ResolveQueued) and how many candidates they resolved.
func (r *Resolver) BatchStats() (transactions, candidates int64) {
	return r.batches.shared.Load(), r.batches.sharedCandidates.Load()
}

// waiting is how many candidates of the owner key wait for a batch.
func (b *ownerBatches) waiting(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if oq := b.owners[key]; oq != nil {
		return len(oq.waiting)
	}
	return 0
}

// batchKey names c's owner among every tenant's: the tenant and its lock key.
func batchKey(c memory.Candidate) string { return c.Tenant + "\x00" + lockKey(c) }

type ownerQueue struct {
	waiting []*queuedCandidate
	leader  *queuedCandidate // takes the next batch; its batch always starts with it
}

type queuedCandidate struct {
	c   memory.Candidate
	vec []float32
	// done receives exactly one message: the candidate's decision (resolved in
	// another's batch) or the lead (its goroutine resolves the next batch itself).
	done chan queuedResult
}

type queuedResult struct {
	d    Decision
	err  error
	lead bool
}

// join queues q for the owner key and reports whether q leads (nobody was running).
func (b *ownerBatches) join(key string, q *queuedCandidate) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners == nil {
		b.owners = map[string]*ownerQueue{}
	}
	oq := b.owners[key]
	if oq == nil {
		oq = &ownerQueue{}
		b.owners[key] = oq
	}
	oq.waiting = append(oq.waiting, q)
	if oq.leader == nil {
		oq.leader = q
		return true
	}
	return false
}

// take removes the next batch from the owner's queue: its leader and those queued
// after it, at most maxOwnerBatch.
func (b *ownerBatches) take(key string) []*queuedCandidate {
	b.mu.Lock()
	defer b.mu.Unlock()
	oq := b.owners[key]
	n := min(len(oq.waiting), maxOwnerBatch)
	batch := slices.Clone(oq.waiting[:n])
	oq.waiting = slices.Delete(oq.waiting, 0, n)
	return batch
}

// handOn passes the lead to the first candidate still waiting, or forgets the owner
// when none is; the caller led (or would have led) and is done.
func (b *ownerBatches) handOn(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handOnLocked(key)
}

func (b *ownerBatches) handOnLocked(key string) {
	oq := b.owners[key]
	if len(oq.waiting) == 0 {
		delete(b.owners, key)
		return
	}
	oq.leader = oq.waiting[0]
	oq.leader.done <- queuedResult{lead: true}
}

// leave takes q out of the owner's queue when its caller gives up (its context
// ended); were it to lead next, the lead goes on to the one after it.
func (b *ownerBatches) leave(key string, q *queuedCandidate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	oq := b.owners[key]
	if oq == nil {
		return
	}
	if i := slices.Index(oq.waiting, q); i >= 0 {
		oq.waiting = slices.Delete(oq.waiting, i, i+1)
	}
	if oq.leader == q {
		b.handOnLocked(key)
	}
}

// ResolveQueued is Resolve for a worker that handles several candidates at once: the
// candidates of one owner that are being handled at the same time are resolved
// together, in one transaction, in the order they arrived (see Owner batches above).
// Its guarantees are Resolve's: the decision is durable when it returns, a candidate
// already recorded is a no-op, and one that can never apply comes back wrapped in
// streams.Permanent. With a judge it is Resolve (the judge is asked outside the lock).
func (r *Resolver) ResolveQueued(ctx context.Context, c memory.Candidate) (Decision, error) {
	if r.judge != nil {
		return r.Resolve(ctx, c)
	}
	if err := checkCandidate(c); err != nil {
		return Decision{}, streams.Permanent(fmt.Errorf("resolving candidate %q: %w", c.ID, err))
	}
	vec, err := r.embed(ctx, c.Content)
	if err != nil {
		return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
	}
	key := batchKey(c)
	q := &queuedCandidate{c: c, vec: vec, done: make(chan queuedResult, 1)}
	if r.batches.join(key, q) {
		return r.leadBatch(ctx, key, q)
	}
	select {
	case res := <-q.done:
		if res.lead {
			return r.leadBatch(ctx, key, q)
		}
		return res.d, res.err
	case <-ctx.Done():
		r.batches.leave(key, q)
		// A decision that arrived meanwhile is the one that stands.
		select {
		case res := <-q.done:
			if !res.lead {
				return res.d, res.err
			}
		default:
		}
		return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, ctx.Err())
	}
}

// leadBatch resolves the owner's next batch, which starts with self, hands every other
// candidate its decision and the lead on, and returns self's decision.
func (r *Resolver) leadBatch(ctx context.Context, key string, self *queuedCandidate) (Decision, error) {
	batch := r.batches.take(key)
	out := r.resolveBatch(ctx, batch)
	var mine queuedResult
	for i, q := range batch {
		if q == self {
			mine = out[i]
			continue
		}
		q.done <- out[i]
	}
	r.batches.handOn(key)
	return mine.d, mine.err
}

// resolveBatch resolves candidates of one owner in one transaction, in order; when it
// fails, each again on its own.
func (r *Resolver) resolveBatch(ctx context.Context, batch []*queuedCandidate) []queuedResult {
	out := make([]queuedResult, len(batch))
	if len(batch) > 1 {
		c0 := batch[0].c
		err := r.store.InOwnerTx(ctx, c0.Tenant, lockKey(c0), func(tx *memory.Tx) error {
			for i, q := range batch {
				d, err := r.decideLocked(ctx, tx, q.c, q.vec, nil)
				if err != nil {
					return err
				}
				out[i] = queuedResult{d: d}
			}
			return nil
		})
		if err == nil {
			r.batches.shared.Add(1)
			r.batches.sharedCandidates.Add(int64(len(batch)))
			for i, q := range batch {
				if !out[i].d.Replayed {
					r.log.Debug("resolved", "candidate", q.c.ID, "kind", out[i].d.Kind, "memory", out[i].d.MemoryID,
						"by", out[i].d.By, "reason", out[i].d.Reason, "batch", len(batch))
				}
			}
			return out
		}
		r.log.Debug("owner batch failed; resolving its candidates one by one", "candidates", len(batch), "err", err)
	}
	for i, q := range batch {
		d, err := r.resolveVec(ctx, q.c, q.vec)
		out[i] = queuedResult{d: d, err: err}
	}
	return out
}
