package memory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

var errStop = errors.New("stop here")

// TestInOwnerTxQueuedWritesAreOrderedAndAtomic: statements a pipelined transaction
// queues are seen by the statements after them, are committed with the transaction,
// and vanish with it when it fails at any point — in fn, in a queued statement, or
// at the commit.
func TestInOwnerTxQueuedWritesAreOrderedAndAtomic(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	ctx := context.Background()
	const tn = "acme"
	vec := memory.Embedding{Model: "m", Vector: unit(8, 1)}
	count := func(sql string, args ...any) int { return pgtest.Count(t, pool, tn, sql, args...) }

	// Committed: the memory, its lineage (queued) and the ledger row.
	var id uuid.UUID
	err := s.InOwnerTx(ctx, tn, "u1", func(tx *memory.Tx) error {
		if !tx.Pipelined() {
			t.Error("InOwnerTx is not pipelined")
		}
		m, err := tx.CreateMemory(ctx, newMemory("u1", "The user likes tea.", vec))
		if err != nil {
			return err
		}
		id = m.ID
		if err := tx.AddLineage(ctx, id, memory.LineageTurn, []string{"t2"}, ""); err != nil {
			return err
		}
		// A read after queued writes sees them.
		ls, err := tx.LineageOf(ctx, id)
		if err != nil {
			return err
		}
		if len(ls) != 2 {
			t.Errorf("lineage read after the queued inserts: %d rows, want 2", len(ls))
		}
		ok, err := tx.RecordCandidate(ctx, "c1", id, "add", "new")
		if !ok || err != nil {
			t.Errorf("RecordCandidate: %v %v", ok, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM memory_lineage WHERE memory_id = $1`, id) +
		count(`SELECT count(*) FROM applied_candidates WHERE candidate_id = 'c1'`) +
		count(`SELECT count(*) FROM memory_embeddings WHERE memory_id = $1`, id); n != 4 {
		t.Fatalf("committed %d of 4 rows (2 lineage, the ledger, the vector)", n)
	}
	before := count(`SELECT count(*) FROM memories`) + count(`SELECT count(*) FROM memory_versions`) +
		count(`SELECT count(*) FROM audit_log`) + count(`SELECT count(*) FROM memory_lineage`) +
		count(`SELECT count(*) FROM applied_candidates`)

	failures := []struct {
		name string
		fn   func(tx *memory.Tx) error
		want error
	}{
		{"fn fails after queued writes", func(tx *memory.Tx) error {
			m, err := tx.CreateMemory(ctx, newMemory("u1", "The user likes coffee.", vec))
			if err != nil {
				return err
			}
			if _, err := tx.RecordCandidate(ctx, "c2", m.ID, "add", "new"); err != nil {
				return err
			}
			return errStop
		}, errStop},
		{"the ledger row conflicts at the commit", func(tx *memory.Tx) error {
			m, err := tx.CreateMemory(ctx, newMemory("u1", "The user likes cocoa.", vec))
			if err != nil {
				return err
			}
			_, err = tx.RecordCandidate(ctx, "c1", m.ID, "add", "again")
			return err
		}, memory.ErrAlreadyRecorded},
		{"a queued statement fails before a read", func(tx *memory.Tx) error {
			if _, err := tx.CreateMemory(ctx, newMemory("u1", "The user likes juice.", vec)); err != nil {
				return err
			}
			// No such memory: the lineage row breaks its foreign key.
			if err := tx.AddLineage(ctx, uuid.New(), memory.LineageTurn, []string{"t3"}, ""); err != nil {
				return err
			}
			_, err := tx.Get(ctx, id)
			return err
		}, nil},
	}
	for _, f := range failures {
		err := s.InOwnerTx(ctx, tn, "u1", f.fn)
		if err == nil || (f.want != nil && !errors.Is(err, f.want)) {
			t.Fatalf("%s: err %v, want %v", f.name, err, f.want)
		}
		after := count(`SELECT count(*) FROM memories`) + count(`SELECT count(*) FROM memory_versions`) +
			count(`SELECT count(*) FROM audit_log`) + count(`SELECT count(*) FROM memory_lineage`) +
			count(`SELECT count(*) FROM applied_candidates`)
		if after != before {
			t.Fatalf("%s: %d rows left behind", f.name, after-before)
		}
	}
}

// TestInOwnerTxHoldsTheOwnerLock: once a pipelined transaction has sent its first
// statement it holds the owner's advisory lock, as InTx with LockOwner does.
func TestInOwnerTxHoldsTheOwnerLock(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	ctx := context.Background()
	const tn = "acme"
	free := func() bool {
		var ok bool
		// Another session, so the try succeeds only if nobody holds the lock.
		if err := pool.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`,
			"engram-owner/"+tn+"/u1").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	err := s.InOwnerTx(ctx, tn, "u1", func(tx *memory.Tx) error {
		if _, err := tx.ByKey(ctx, "u1", "k"); err != nil {
			return err
		}
		if free() {
			t.Error("the owner's lock is free while its pipelined transaction runs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !free() {
		t.Error("the owner's lock is still held after the commit")
	}
}
