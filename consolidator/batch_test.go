package consolidator_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestOwnerBatch: candidates of one owner handled at once (ResolveQueued) wait while
// the owner's lock is held and are then resolved together in one transaction, each as
// Resolve would in arrival order (a restatement of a fact added earlier in the same
// batch confirms it); a candidate the database refuses fails alone, the batch being
// resolved again one by one; redelivering every candidate changes nothing.
func TestOwnerBatch(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	ctx := testCtx(t)
	first := cand("u1", "The user keeps bees on the roof.")
	later := []memory.Candidate{
		cand("u1", "The user's cousin repairs clocks in Porto."),
		cand("u1", "The user keeps bees on the roof."), // restates the first: confirm
		cand("u1", "用户每周四去游泳馆"),
		cand("u1", "The user flies kites at the beach."),
	}
	bad := cand("u1", "The user collects old maps of Lisbon.")
	// PostgreSQL's jsonb refuses a NUL character, which nothing before it checks.
	bad.Metadata = map[string]any{"note": "a\x00b"}
	later = append(later[:2], append([]memory.Candidate{bad}, later[2:]...)...)

	// Another transaction holds the owner's lock: the first candidate leads, takes a
	// batch of itself and waits for the lock; the others queue behind it.
	release := holdOwnerLock(ctx, t, s, first)
	type result struct {
		d   consolidator.Decision
		err error
	}
	results := make([]result, 1+len(later))
	var wg sync.WaitGroup
	start := func(i int, c memory.Candidate) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := r.ResolveQueued(ctx, c)
			results[i] = result{d, err}
		}()
	}
	start(0, first)
	waitFor(t, func() bool { return consolidator.Leading(r, first) })
	for i, c := range later {
		start(i+1, c)
		waitFor(t, func() bool { return consolidator.QueuedFor(r, first) == i+1 })
	}
	release()
	wg.Wait()

	want := []consolidator.DecisionKind{consolidator.KindAdd, consolidator.KindAdd, consolidator.KindConfirm, "",
		consolidator.KindAdd, consolidator.KindAdd}
	for i, res := range results {
		if want[i] == "" {
			if res.err == nil {
				t.Errorf("the bad candidate was accepted: %+v", res.d)
			}
			continue
		}
		if res.err != nil || res.d.Kind != want[i] {
			t.Errorf("candidate %d: %+v, %v; want %s", i, res.d, res.err, want[i])
		}
	}
	if results[2].d.MemoryID != results[0].d.MemoryID {
		t.Errorf("the restatement confirmed %s, want %s", results[2].d.MemoryID, results[0].d.MemoryID)
	}
	// The bad candidate failed its batch: the batch was resolved again one by one, so
	// only the first candidate's batch of one counts as shared... which is none.
	if txs, n := r.BatchStats(); txs != 0 || n != 0 {
		t.Errorf("batch stats %d/%d after a failed batch, want 0/0", txs, n)
	}
	counts := func() (mems, versions, ledger int) {
		return pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memories`),
			pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memory_versions`),
			pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM applied_candidates`)
	}
	mems, versions, ledger := counts()
	if mems != 4 || versions != 4 || ledger != 5 {
		t.Fatalf("%d memories, %d versions, %d ledger rows; want 4, 4, 5", mems, versions, ledger)
	}

	// Redelivered, all at once and without the bad one: one shared transaction, every
	// decision replayed, nothing written.
	good := []memory.Candidate{first, later[0], later[1], later[3], later[4]}
	errs := make([]error, len(good))
	replayed := make([]bool, len(good))
	for i, c := range good {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := r.ResolveQueued(ctx, c)
			errs[i], replayed[i] = err, d.Replayed
		}()
	}
	wg.Wait()
	for i := range good {
		if errs[i] != nil || !replayed[i] {
			t.Errorf("redelivered candidate %d: replayed %v, %v", i, replayed[i], errs[i])
		}
	}
	if m, v, l := counts(); m != mems || v != versions || l != ledger {
		t.Fatalf("the redelivery wrote: %d/%d/%d rows, was %d/%d/%d", m, v, l, mems, versions, ledger)
	}
}

// TestOwnerBatchShared: candidates queued behind a busy owner share one transaction,
// and a caller that gives up while queued leaves the queue without holding it up.
func TestOwnerBatchShared(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	ctx := testCtx(t)
	facts := []string{"The user restores vintage radios.", "用户的室友在昆明开书店", "The user's dentist is called Okafor.",
		"The user swims in the lake before breakfast.", "用户周末去菜市场买花", "The user's landlord lives in Bergen."}
	cs := make([]memory.Candidate, len(facts))
	for i, f := range facts {
		cs[i] = cand("u2", f)
	}
	release := holdOwnerLock(ctx, t, s, cs[0])
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	gaveUp, cancel := context.WithCancel(ctx)
	for i, c := range cs {
		cctx := ctx
		if i == 2 {
			cctx = gaveUp
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.ResolveQueued(cctx, c)
		}()
		if i == 0 {
			waitFor(t, func() bool { return consolidator.Leading(r, cs[0]) })
		} else {
			waitFor(t, func() bool { return consolidator.QueuedFor(r, cs[0]) == i })
		}
	}
	cancel() // candidate 2 gives up while queued
	waitFor(t, func() bool { return consolidator.QueuedFor(r, cs[0]) == len(cs)-2 })
	release()
	wg.Wait()
	for i, err := range errs {
		if (i == 2) != (err != nil) || (i == 2 && !errors.Is(err, context.Canceled)) {
			t.Errorf("candidate %d: %v", i, err)
		}
	}
	if txs, n := r.BatchStats(); txs != 1 || n != int64(len(cs)-2) {
		t.Errorf("shared transactions %d with %d candidates, want 1 with %d", txs, n, len(cs)-2)
	}
	if n := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memories WHERE user_id = 'u2'`); n != len(cs)-1 {
		t.Errorf("%d memories, want %d", n, len(cs)-1)
	}
}

// holdOwnerLock holds c's owner's lock in another transaction until the returned
// release is called, or the test ends (pgtest.Held).
func holdOwnerLock(ctx context.Context, t *testing.T, s testDB, c memory.Candidate) (release func()) {
	t.Helper()
	locked, released := make(chan struct{}), make(chan struct{})
	release = pgtest.Held(t, func() { close(released) })
	go func() {
		_ = s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			if err := tx.LockOwner(ctx, consolidator.LockKey(c)); err != nil {
				return err
			}
			close(locked)
			<-released
			return nil
		})
	}()
	select {
	case <-locked:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out taking the owner's lock")
	}
	return release
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}
