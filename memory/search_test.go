package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

func TestRetrievalRecordRoundTrip(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	err := s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		// Nil id lists are stored as empty arrays, not NULL.
		return tx.RecordRetrieval(ctx, memory.Retrieval{ID: id, Kind: "search", QueryHash: []byte{1, 2}, UserID: "u"})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRetrieval(ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Kind != "search" || got.UserID != "u" || got.MemoryIDs == nil || got.TurnIDs == nil || got.CreatedAt.IsZero() {
		t.Errorf("record %+v", got)
	}
	if _, err := s.GetRetrieval(ctx, "globex", id); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("another tenant read the record: %v", err)
	}
}

func TestSessionSummaryAndAccessCounts(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i, role := range []memory.Role{memory.RoleUser, memory.RoleAssistant, memory.RoleUser, memory.RoleUser} {
		_, err := s.InsertTurn(ctx, "t", memory.Turn{TurnID: uuid.NewString(), UserID: "u1", SessionID: "s1",
			Role: role, Content: string(rune('a' + i)), OccurredAt: base.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.CreateMemory(ctx, "t", newMemory("u1", "likes tea"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, "t", func(tx *memory.Tx) error {
		n, last, err := tx.SessionTurnStats(ctx, "u1", "s1")
		if err != nil {
			return err
		}
		if n != 4 || last == nil || !last.Equal(base.Add(3*time.Minute)) {
			t.Errorf("stats %d %v", n, last)
		}
		texts, err := tx.SessionUserTexts(ctx, "u1", "s1", 1)
		if err != nil {
			return err
		}
		if len(texts) != 2 || texts[0] != "a" || texts[1] != "c" {
			t.Errorf("user texts before the newest turn: %q", texts)
		}
		st, err := tx.SessionSummary(ctx, "u1", "s1")
		if err != nil {
			return err
		}
		if st != (memory.SessionSummaryState{Turns: 4}) {
			t.Errorf("state before a summary: %+v", st)
		}
		if err := tx.PutSessionSummary(ctx, memory.SessionSummary{UserID: "u1", SessionID: "s1", Summary: "sum",
			TurnCount: 3, LastTurnAt: last}); err != nil {
			return err
		}
		st, err = tx.SessionSummary(ctx, "u1", "s1")
		if err != nil {
			return err
		}
		if st != (memory.SessionSummaryState{Turns: 4, Summary: "sum", SummaryTurns: 3}) {
			t.Errorf("state after a summary: %+v", st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.AddAccessCounts(ctx, "t", []memory.MemoryAccess{{ID: m.ID, N: 3, At: at}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Detail(ctx, "t", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory.AccessCount != 3 || got.Memory.LastAccessAt == nil || !got.Memory.LastAccessAt.Equal(at) {
		t.Errorf("access count %d at %v", got.Memory.AccessCount, got.Memory.LastAccessAt)
	}
}
