package consolidator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestOneCandidateIDTwoOwnersAppliesOnce: owners do not share a lock, so the same
// candidate id resolved for two owners at once can pass both ledger checks; the ledger
// row of the pipelined transaction then conflicts at the commit, the loser rolls back
// everything it wrote and replays the winner's decision.
func TestOneCandidateIDTwoOwnersAppliesOnce(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	facts := []string{"The user keeps bees on the roof.", "用户每周四去游泳馆", "The user's cousin repairs clocks in Porto.",
		"用户的导师住在大连", "The user flies kites at the beach."}
	for round, f := range facts {
		// Each round a new fact, so whichever owner wins adds a memory.
		a := cand("ua", f)
		b := cand("ub", f)
		b.ID = a.ID
		var wg sync.WaitGroup
		ds := make([]consolidator.Decision, 2)
		errs := make([]error, 2)
		for i, c := range []memory.Candidate{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ds[i], errs[i] = r.Resolve(context.Background(), c)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ds[0].MemoryID != ds[1].MemoryID || ds[0].Replayed == ds[1].Replayed {
			t.Fatalf("round %d: decisions %+v and %+v, want one applied and one replaying it", round, ds[0], ds[1])
		}
		mems := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memories`)
		versions := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memory_versions`)
		ledger := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM applied_candidates`)
		if mems != round+1 || versions != round+1 || ledger != round+1 {
			t.Fatalf("round %d: %d memories, %d versions, %d ledger rows; want %d each", round, mems, versions, ledger, round+1)
		}
	}
}

// TestOwnerSequenceAppliedInOrder: one owner's candidates, resolved one after another
// through the pipelined path, each see the effects of the ones before: add, confirm,
// refine, supersede, and every change writes its version, lineage and audit rows.
func TestOwnerSequenceAppliedInOrder(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	steps := []struct {
		content string
		want    consolidator.DecisionKind
	}{
		{"The user plays tennis with Marta on Sundays.", consolidator.KindAdd},
		{"The user plays tennis with Marta on Sundays.", consolidator.KindConfirm},
		{"The user plays tennis with Marta on Sundays at the club near the river.", consolidator.KindUpdate},
		{"The user no longer plays tennis with Marta on Sundays at the club near the river.", consolidator.KindSupersede},
	}
	var first consolidator.Decision
	for i, st := range steps {
		c := cand("u1", st.content, withKey("sport.tennis"), validFrom(at.Add(time.Duration(i)*time.Hour)))
		d := resolve(t, r, c, st.want)
		if i == 0 {
			first = d
		} else if d.MemoryID != first.MemoryID {
			t.Fatalf("step %d changed memory %s, want %s", i, d.MemoryID, first.MemoryID)
		}
	}
	d := detail(t, s, first.MemoryID)
	// add, update, supersede write versions; the confirmation does not.
	if len(d.Versions) != 3 || d.Versions[1].Change != memory.ChangeUpdate || d.Versions[2].Change != memory.ChangeSupersede ||
		d.Memory.ConfirmCount < 1 || d.Memory.Content != steps[3].content {
		t.Fatalf("history %+v, memory %+v", d.Versions, d.Memory)
	}
	if n := len(d.Lineage); n != len(steps) {
		t.Fatalf("%d lineage rows, want one per candidate (%d)", n, len(steps))
	}
	if n := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM audit_log WHERE memory_id = $1`, first.MemoryID); n != len(steps) {
		t.Fatalf("%d audit rows, want %d", n, len(steps))
	}
	if n := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM applied_candidates`); n != len(steps) {
		t.Fatalf("%d ledger rows, want %d", n, len(steps))
	}
}
