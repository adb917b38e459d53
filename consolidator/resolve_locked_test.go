package consolidator_test

import (
	"errors"
	"testing"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

var errRollback = errors.New("roll back")

// TestResolveLocked: several candidates of one owner resolved in the caller's locked
// transaction see each other's effects, the judge included, and a rollback leaves
// nothing behind, not even the ledger.
func TestResolveLocked(t *testing.T) {
	t.Parallel()
	ctx := resolvertest.Ctx(t)
	s, r, fake := judgeSetup(t, func(ms []map[string]any) consolidator.Verdict {
		return consolidator.Verdict{Decision: "confirm", Target: ms[0]["id"].(string), Reason: "same habit"}
	})
	first := cand("u1", "The user drinks green tea every afternoon.")
	second := cand("u1", "Every afternoon the user has a cup of green tea.")
	run := func(commit bool) (consolidator.Decision, consolidator.Decision) {
		var d1, d2 consolidator.Decision
		err := s.InTx(ctx, first.Tenant, func(tx *memory.Tx) error {
			if err := tx.LockOwner(ctx, memory.Owner{UserID: "u1", Scope: memory.ScopeUser}.LockKey()); err != nil {
				return err
			}
			var err error
			if d1, err = r.ResolveLocked(ctx, tx, first); err != nil {
				return err
			}
			if d2, err = r.ResolveLocked(ctx, tx, second); err != nil {
				return err
			}
			if !commit {
				return errRollback
			}
			return nil
		})
		if err != nil && !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		return d1, d2
	}
	d1, d2 := run(false)
	if d1.Kind != consolidator.KindAdd || d2.Kind != consolidator.KindConfirm || d2.MemoryID != d1.MemoryID || d2.By != "judge" {
		t.Fatalf("decisions %+v %+v", d1, d2)
	}
	if n := pgtest.Count(t, s.pool, first.Tenant, `SELECT count(*) FROM memories`) +
		pgtest.Count(t, s.pool, first.Tenant, `SELECT count(*) FROM applied_candidates`); n != 0 {
		t.Fatalf("a rolled-back transaction left %d rows", n)
	}
	calls := fake.ChatCalls()
	d1, d2 = run(true)
	if d1.Replayed || d2.Kind != consolidator.KindConfirm || fake.ChatCalls() != calls+1 {
		t.Fatalf("after the rollback: %+v %+v, %d judge calls", d1, d2, fake.ChatCalls()-calls)
	}
	// Committed: the live path replays them from the ledger.
	if d := resolve(t, r, second, consolidator.KindConfirm); !d.Replayed {
		t.Fatalf("not in the ledger: %+v", d)
	}
	// A transaction of another tenant is refused.
	other := first
	other.Tenant = "other-tenant"
	err := s.InTx(ctx, first.Tenant, func(tx *memory.Tx) error {
		_, err := r.ResolveLocked(ctx, tx, other)
		return err
	})
	if err == nil {
		t.Fatal("a candidate of another tenant was resolved")
	}
}
