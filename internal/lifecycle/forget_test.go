package lifecycle

import (
	"testing"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/streams"
)

// TestDeleteUserMemoriesKeepsTurns: forgetting a user's memories removes them as a
// hard delete of each would (versions, lineage, embeddings; ledger kept as dropped;
// one delete audit row per memory with its content hash) and the user's candidates
// in flight with their dead letters, and leaves the turns, their messages and every other user alone.
func TestDeleteUserMemoriesKeepsTurns(t *testing.T) {
	t.Parallel()
	e := newLifecycleEnv(t)
	e.seedUser("u1")
	e.seedUser("u2")
	e.run(consolidator.RunOptions{})
	u1Mem, u1Turns := e.idsOf("u1")
	u2Mem, u2Turns := e.idsOf("u2")
	before := e.userRows("u2", u2Mem, u2Turns)
	ledger := e.count("acme", `SELECT count(*) FROM applied_candidates WHERE memory_id = ANY($1)`, u1Mem)
	if ledger == 0 {
		t.Fatal("the seed has no ledger entries to keep")
	}

	rep, err := e.lc.DeleteUserMemories(e.ctx, "acme", "u1", false, "test")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != len(u1Mem) || !rep.TurnsKept || rep.CandidateMsgs != 2 || rep.Versions < rep.Memories {
		t.Fatalf("report %+v (u1 had %d memories)", rep, len(u1Mem))
	}
	rows := e.userRows("u1", u1Mem, nil)
	for _, table := range []string{"memories", "memory_versions", "memory_embeddings", "applied_candidates"} {
		if rows[table] != 0 {
			t.Errorf("%s still holds %d rows of u1's memories", table, rows[table])
		}
	}
	if n := e.count("acme", `SELECT count(*) FROM turns WHERE turn_id = ANY($1)`, u1Turns); n != len(u1Turns) {
		t.Errorf("%d of u1's %d turns left", n, len(u1Turns))
	}
	if n := e.count("acme", `SELECT count(*) FROM applied_candidates WHERE memory_id IS NULL AND decision = 'drop'`); n != ledger {
		t.Errorf("%d ledger entries kept as dropped, want %d", n, ledger)
	}
	if n := e.count("acme", `SELECT count(*) FROM audit_log WHERE action = 'delete' AND memory_id = ANY($1) AND content_hash IS NOT NULL`, u1Mem); n != len(u1Mem) {
		t.Errorf("%d delete audit rows, want one per memory (%d)", n, len(u1Mem))
	}
	turnSubj, _ := streams.TurnSubject("acme", "u1")
	candSubj, _ := streams.CandidateSubject("acme", "u1")
	if n := e.subjectCount(streams.CandidatesStream, candSubj); n != 0 {
		t.Errorf("%d candidates of u1 left in flight", n)
	}
	if n := e.subjectCount(streams.TurnsStream, turnSubj); n != 2 {
		t.Errorf("%d turn messages of u1, want the 2 kept", n)
	}
	// The candidate's dead letter went with it; those of the kept turns stay.
	dlq, err := streams.NewDLQ(e.js).List(e.ctx, streams.DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dlq) != 5 {
		t.Errorf("%d dead letters left, want u1's 2 of turns and u2's 3", len(dlq))
	}
	for _, d := range dlq {
		if d.Subject == candSubj {
			t.Errorf("dead letter %d of u1's candidate left", d.ID)
		}
	}
	after := e.userRows("u2", u2Mem, u2Turns)
	for table, n := range before {
		if after[table] != n {
			t.Errorf("u2's %s: %d rows, had %d", table, after[table], n)
		}
	}
}
