package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestChangeWriterRows: creating and changing a memory, one at a time or as a set,
// writes the same version and audit rows (the change writer is one statement).
func TestChangeWriterRows(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	ctx := context.Background()
	n := newMemory("u1", "The user likes tea.")
	m, err := s.CreateMemory(ctx, "acme", n)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || m.Content != n.Content {
		t.Fatalf("created %+v", m)
	}
	// The audit row of the creation: action create, version 1, content hash, details.
	if got := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM audit_log WHERE action = 'create' AND memory_id = $1
		AND version = 1 AND actor = 'test' AND module = 'memory' AND subject = 'u1' AND content_hash = $2
		AND details = jsonb_build_object('candidate_id', $3::text, 'status', 'active')`,
		m.ID, memory.ContentHash(n.Content), n.CandidateID); got != 1 {
		t.Fatalf("%d create audit rows", got)
	}
	content := "The user likes green tea."
	up, err := s.Apply(ctx, "acme", m.ID, memory.Update{Change: memory.ChangeUpdate, Content: &content,
		Actor: "test", Module: "api", Reason: "refined", CandidateID: "cand-2"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Detail(ctx, "acme", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Versions) != 2 || d.Memory.Version != 2 || d.Memory.Content != content || up.Content != content {
		t.Fatalf("after the update %+v", d)
	}
	v1, v2 := d.Versions[0], d.Versions[1]
	if v1.Change != memory.ChangeAdd || v1.CandidateID != n.CandidateID || !v1.RecordedAt.Equal(m.UpdatedAt) ||
		v1.ValidTo == nil {
		t.Fatalf("version 1 %+v", v1)
	}
	if v2.Change != memory.ChangeUpdate || v2.OldContent != n.Content || v2.Content != content || v2.Reason != "refined" ||
		v2.CandidateID != "cand-2" || v2.Actor != "test" || !v2.RecordedAt.Equal(d.Memory.UpdatedAt) {
		t.Fatalf("version 2 %+v", v2)
	}
	if got := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM audit_log WHERE action = 'update' AND memory_id = $1
		AND version = 2 AND module = 'api' AND content_hash = $2
		AND details = jsonb_build_object('candidate_id', 'cand-2', 'status', 'active', 'reason', 'refined')`,
		m.ID, memory.ContentHash(content)); got != 1 {
		t.Fatalf("%d update audit rows", got)
	}

	// A set-based change: decay of the unused memory.
	pgtest.Exec(t, pool, "acme", `UPDATE memories SET updated_at = now() - interval '40 days',
		last_confirmed_at = now() - interval '40 days' WHERE id = $1`, m.ID)
	var decayed int
	err = s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		decayed, err = tx.DecayUnused(ctx, "u1", memory.Decay{After: 30 * 24 * time.Hour, Factor: 0.5, Floor: 0.1,
			Actor: "nightly", Module: "consolidator", Reason: "unused"})
		return err
	})
	if err != nil || decayed != 1 {
		t.Fatalf("decayed %d, %v", decayed, err)
	}
	d, err = s.Detail(ctx, "acme", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	v3 := d.Versions[len(d.Versions)-1]
	if len(d.Versions) != 3 || v3.Change != memory.ChangeDecay || v3.Version != 3 || v3.Actor != "nightly" ||
		v3.Reason != "unused" || v3.OldContent != "" || v3.CandidateID != "" || v3.Importance < 0.349 || v3.Importance > 0.351 {
		t.Fatalf("decay version %+v", v3)
	}
	if got := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM audit_log WHERE action = 'decay' AND memory_id = $1
		AND version = 3 AND module = 'consolidator' AND content_hash = $2`, m.ID, memory.ContentHash(content)); got != 1 {
		t.Fatalf("%d decay audit rows", got)
	}
	// Decay ran: the interval guard keeps a second one out.
	err = s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		decayed, err = tx.DecayUnused(ctx, "u1", memory.Decay{After: 30 * 24 * time.Hour, Factor: 0.5, Floor: 0.1,
			Interval: time.Hour, Actor: "nightly", Module: "consolidator"})
		return err
	})
	if err != nil || decayed != 0 {
		t.Fatalf("second decay %d, %v", decayed, err)
	}
}

func TestLedgerEntryAndSourceTurns(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	m, err := s.CreateMemory(ctx, "acme", newMemory("u1", "The user likes tea."))
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		if _, ok, err := tx.LedgerEntry(ctx, "c1"); err != nil || ok {
			t.Fatalf("entry before recording: %v %v", ok, err)
		}
		if _, err := tx.RecordCandidate(ctx, "c1", m.ID, "add", "new"); err != nil {
			return err
		}
		if _, err := tx.RecordCandidate(ctx, "c2", uuid.Nil, "noop", "nothing new"); err != nil {
			return err
		}
		if e, ok, err := tx.LedgerEntry(ctx, "c1"); err != nil || !ok || e.MemoryID != m.ID || e.Decision != "add" || e.Reason != "new" {
			t.Fatalf("entry c1 %+v %v %v", e, ok, err)
		}
		if e, ok, err := tx.LedgerEntry(ctx, "c2"); err != nil || !ok || e.MemoryID != uuid.Nil || e.Decision != "noop" {
			t.Fatalf("entry c2 %+v %v %v", e, ok, err)
		}
		turns, err := tx.SourceTurns(ctx, []uuid.UUID{m.ID})
		if err != nil || len(turns) != 1 || turns[0] != "t1" {
			t.Fatalf("source turns %v %v", turns, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
