package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// lifecycleMemory is a user memory from one turn with one vector.
func lifecycleMemory(user, turnID, content string) memory.NewMemory {
	return memory.NewMemory{UserID: user, Scope: memory.ScopeUser, Type: memory.Semantic, Category: memory.CatPreference,
		Content: content, Importance: 0.7, Confidence: 0.8, Source: memory.SourceUser, SourceTurnIDs: []string{turnID},
		Embeddings: []memory.Embedding{{Model: "m", Vector: []float32{1, 0, 0}}}, Actor: "test",
		CandidateID: "cand-" + uuid.NewString()}
}

func inTx(t *testing.T, s *memory.Store, tenant string, fn func(ctx context.Context, tx *memory.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := s.InTx(ctx, tenant, func(tx *memory.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

func TestExportImportRows(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	var id uuid.UUID
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: "t1", UserID: "u1", SessionID: "s1", Role: memory.RoleTool,
			Content: "paid", Tool: &memory.ToolCall{Name: "pay", Status: "success"}, OccurredAt: time.Now().UTC()}); err != nil {
			return err
		}
		m, err := tx.CreateMemory(ctx, lifecycleMemory("u1", "t1", "The user likes tea"))
		if err != nil {
			return err
		}
		id = m.ID
		content := "The user likes green tea"
		_, err = tx.Apply(ctx, id, memory.Update{Change: memory.ChangeCorrect, Content: &content, Actor: "test"})
		return err
	})
	var ms []memory.MemoryExport
	var ts []memory.TurnExport
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		var err error
		if ms, err = tx.ExportMemories(ctx, "u1", uuid.Nil, 10); err != nil {
			return err
		}
		if ts, err = tx.ExportTurns(ctx, "u1", "", 10); err != nil {
			return err
		}
		if more, err := tx.ExportMemories(ctx, "u1", id, 10); err != nil || len(more) != 0 {
			t.Errorf("memories after the last: %d, %v", len(more), err)
		}
		return nil
	})
	if len(ms) != 1 || len(ms[0].Versions) != 2 || len(ms[0].Lineage) != 1 || len(ms[0].Embeddings) != 1 || ms[0].Memory.Version != 2 {
		t.Fatalf("exported memories %+v", ms)
	}
	if len(ts) != 1 || ts[0].Turn.Tool == nil || ts[0].Turn.Tool.Name != "pay" || len(ts[0].ContentHash) == 0 {
		t.Fatalf("exported turns %+v", ts)
	}

	// Into another tenant and user, twice: the second import changes nothing.
	for i, want := range []bool{true, false} {
		inTx(t, s, "globex", func(ctx context.Context, tx *memory.Tx) error {
			m, tr := ms[0], ts[0]
			m.Memory.UserID, tr.Turn.UserID = "u9", "u9"
			if added, err := tx.ImportMemory(ctx, m); err != nil || added != want {
				t.Errorf("import %d of the memory: %v, %v", i, added, err)
			}
			if added, err := tx.ImportTurn(ctx, tr); err != nil || added != want {
				t.Errorf("import %d of the turn: %v, %v", i, added, err)
			}
			return nil
		})
	}
	var back []memory.MemoryExport
	var backTurns []memory.TurnExport
	inTx(t, s, "globex", func(ctx context.Context, tx *memory.Tx) error {
		var err error
		if back, err = tx.ExportMemories(ctx, "u9", uuid.Nil, 10); err != nil {
			return err
		}
		backTurns, err = tx.ExportTurns(ctx, "u9", "", 10)
		return err
	})
	norm := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	ms[0].Memory.Tenant, ms[0].Memory.UserID = "", ""
	back[0].Memory.Tenant, back[0].Memory.UserID = "", ""
	if norm(ms) != norm(back) {
		t.Fatalf("re-imported memory differs:\n%s\n%s", norm(ms), norm(back))
	}
	ts[0].Turn.Tenant, ts[0].Turn.UserID = "", ""
	backTurns[0].Turn.Tenant, backTurns[0].Turn.UserID = "", ""
	if norm(ts) != norm(backTurns) {
		t.Fatalf("re-imported turn differs:\n%s\n%s", norm(ts), norm(backTurns))
	}
	if n := pgtest.Count(t, pool, "globex", `SELECT count(*) FROM memory_embeddings WHERE user_id = 'u9'`); n != 1 {
		t.Fatalf("%d embeddings of u9", n)
	}
}

func TestDeleteMemoryKeepsLedgerAsDrop(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	var id uuid.UUID
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		m, err := tx.CreateMemory(ctx, lifecycleMemory("u1", "t1", "The user likes tea"))
		if err != nil {
			return err
		}
		id = m.ID
		_, err = tx.RecordCandidate(ctx, "cand-1", id, "add", "new")
		return err
	})
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		n, err := tx.DeleteMemory(ctx, id)
		if err != nil {
			return err
		}
		if n != (memory.MemoryRowCounts{Versions: 1, Lineage: 1, Embeddings: 1}) {
			t.Errorf("counts %+v", n)
		}
		return nil
	})
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories`); n != 0 {
		t.Fatalf("%d memories left", n)
	}
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM applied_candidates
		WHERE candidate_id = 'cand-1' AND memory_id IS NULL AND decision = 'drop'`); n != 1 {
		t.Fatal("the ledger entry is not kept as a drop")
	}
}

func TestDeleteUserRowsAndRestore(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	var u2 uuid.UUID
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		for _, u := range []string{"u1", "u2"} {
			if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: "turn-" + u, UserID: u, SessionID: "s1", TaskID: "task-" + u,
				Role: memory.RoleUser, Content: "hello", OccurredAt: time.Now().UTC()}); err != nil {
				return err
			}
			m, err := tx.CreateMemory(ctx, lifecycleMemory(u, "turn-"+u, "The user likes tea"))
			if err != nil {
				return err
			}
			u2 = m.ID
		}
		// A global memory derived from u1's turn: the link goes with u1.
		_, err := tx.CreateMemory(ctx, memory.NewMemory{Scope: memory.ScopeGlobal, Type: memory.Semantic,
			Category: memory.CatFact, Content: "People like tea", Importance: 0.5, Confidence: 0.8,
			Source: memory.SourceManual, SourceTurnIDs: []string{"turn-u1"}, Actor: "test"})
		return err
	})
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		if err := tx.LockOwner(ctx, "u1"); err != nil {
			return err
		}
		n, err := tx.DeleteUserRows(ctx, "u1")
		if err != nil {
			return err
		}
		if n.Memories != 1 || n.Versions != 1 || n.Lineage != 1 || n.Embeddings != 1 || n.ForeignLineage != 1 ||
			n.Turns != 1 || len(n.TaskIDs) != 1 || n.TaskIDs[0] != "task-u1" || len(n.MissingTables) != 0 {
			t.Errorf("counts %+v", n)
		}
		return nil
	})
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories WHERE user_id = 'u2'`) +
		pgtest.Count(t, pool, "acme", `SELECT count(*) FROM turns WHERE user_id = 'u2'`); n != 2 {
		t.Fatalf("u2 kept %d of its 2 rows", n)
	}

	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		archived := memory.StatusArchived
		if _, err := tx.Apply(ctx, u2, memory.Update{Change: memory.ChangeArchive, Status: &archived, Actor: "test"}); err != nil {
			return err
		}
		m, err := tx.RestoreFromArchive(ctx, u2, "ops", "test", "back")
		if err != nil {
			return err
		}
		if m.Status != memory.StatusActive || m.Version != 3 {
			t.Errorf("restored %+v", m)
		}
		return nil
	})
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories WHERE id = $1 AND last_access_at IS NOT NULL`, u2); n != 1 {
		t.Fatal("restore did not mark the memory used")
	}
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memory_versions
		WHERE memory_id = $1 AND version = 3 AND change = 'restore' AND actor = 'ops'`, u2); n != 1 {
		t.Fatal("restore wrote no restore version")
	}
}

// TestDeletionMarksSourceTurnsForgotten: deleting a memory marks the turns it came from
// forgotten (and only those), and an export carries the mark into an import.
func TestDeletionMarksSourceTurnsForgotten(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		for _, id := range []string{"t1", "t2"} {
			if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: id, UserID: "u1", SessionID: "s1", Role: memory.RoleUser,
				Content: "I keep bees on the roof", OccurredAt: time.Now().UTC()}); err != nil {
				return err
			}
		}
		m, err := tx.CreateMemory(ctx, lifecycleMemory("u1", "t1", "The user keeps bees"))
		if err != nil {
			return err
		}
		_, err = tx.DeleteMemory(ctx, m.ID)
		return err
	})
	var ts []memory.TurnExport
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		var err error
		ts, err = tx.ExportTurns(ctx, "u1", "", 10)
		return err
	})
	if len(ts) != 2 || !ts[0].Forgotten || ts[1].Forgotten {
		t.Fatalf("exported turns: %+v", ts)
	}
	inTx(t, s, "globex", func(ctx context.Context, tx *memory.Tx) error {
		for _, x := range ts {
			if _, err := tx.ImportTurn(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	if n := pgtest.Count(t, pool, "globex", `SELECT count(*) FROM turns WHERE forgotten`); n != 1 {
		t.Fatalf("%d forgotten turns imported, want 1", n)
	}
}

// TestImportRefusesWhatTheTablesWould: ImportMemory and ImportTurn refuse a record the
// tables cannot hold with a FieldError naming the field (the import's bad input), not
// a database error, and write nothing of it.
func TestImportRefusesWhatTheTablesWould(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	good := func() memory.MemoryExport {
		id := uuid.New()
		return memory.MemoryExport{
			Memory: memory.Memory{ID: id, UserID: "u1", Scope: memory.ScopeUser, Type: memory.Semantic,
				Category: memory.CatFact, Content: "The user likes tea", Importance: 0.5, Confidence: 0.5,
				Status: memory.StatusActive, Version: 1, ValidFrom: at, Source: memory.SourceUser},
			Versions: []memory.Version{{MemoryID: id, Version: 1, Change: memory.ChangeAdd, Content: "The user likes tea",
				Status: memory.StatusActive, Category: memory.CatFact, Importance: 0.5, Confidence: 0.5, ValidFrom: at, Actor: "test"}},
			Lineage:    []memory.Lineage{{MemoryID: id, Kind: memory.LineageTurn, SourceID: "t1", AddedAt: at}},
			Embeddings: []memory.Embedding{{Model: "m", Vector: []float32{1, 0}}},
		}
	}
	goodTurn := func() memory.TurnExport {
		return memory.TurnExport{Turn: memory.Turn{TurnID: "t-" + uuid.NewString(), UserID: "u1", SessionID: "s1",
			Role: memory.RoleUser, Content: "hi", OccurredAt: at}}
	}
	before := at.Add(-time.Hour)
	for _, tc := range []struct {
		name  string
		mem   func(*memory.MemoryExport)
		turn  func(*memory.TurnExport)
		field string
	}{
		{name: "NUL in content", mem: func(x *memory.MemoryExport) { x.Memory.Content = "a\x00b" }, field: "memory.content"},
		{name: "invalid UTF-8 in content", mem: func(x *memory.MemoryExport) { x.Memory.Content = "a\xffb" }, field: "memory.content"},
		{name: "blank content", mem: func(x *memory.MemoryExport) { x.Memory.Content = " " }, field: "memory.content"},
		{name: "content too long", mem: func(x *memory.MemoryExport) { x.Memory.Content = strings.Repeat("é", 8001) }, field: "memory.content"},
		{name: "importance 2", mem: func(x *memory.MemoryExport) { x.Memory.Importance = 2 }, field: "memory.importance"},
		{name: "confidence below 0", mem: func(x *memory.MemoryExport) { x.Memory.Confidence = -0.1 }, field: "memory.confidence"},
		{name: "scope x", mem: func(x *memory.MemoryExport) { x.Memory.Scope = "x" }, field: "memory.scope"},
		{name: "session scope without session", mem: func(x *memory.MemoryExport) { x.Memory.Scope = memory.ScopeSession }, field: "memory.session_id"},
		{name: "valid_to before valid_from", mem: func(x *memory.MemoryExport) { x.Memory.ValidTo = &before }, field: "memory.valid_to"},
		{name: "key too long", mem: func(x *memory.MemoryExport) { x.Memory.Key = strings.Repeat("k", 201) }, field: "memory.key"},
		{name: "NUL in metadata", mem: func(x *memory.MemoryExport) { x.Memory.Metadata = map[string]any{"a": "\x00"} }, field: "memory.metadata.a"},
		{name: "nil id", mem: func(x *memory.MemoryExport) { x.Memory.ID = uuid.Nil }, field: "memory.id"},
		{name: "version change x", mem: func(x *memory.MemoryExport) { x.Versions[0].Change = "x" }, field: "versions[0].change"},
		{name: "version 0", mem: func(x *memory.MemoryExport) { x.Versions[0].Version = 0 }, field: "versions[0].version"},
		{name: "NUL in a version reason", mem: func(x *memory.MemoryExport) { x.Versions[0].Reason = "\x00" }, field: "versions[0].reason"},
		{name: "lineage kind x", mem: func(x *memory.MemoryExport) { x.Lineage[0].Kind = "x" }, field: "lineage[0].kind"},
		{name: "embedding model too long", mem: func(x *memory.MemoryExport) { x.Embeddings[0].Model = strings.Repeat("m", 201) }, field: "embeddings[0].model"},
		{name: "empty turn id", turn: func(x *memory.TurnExport) { x.Turn.TurnID = "" }, field: "turn.turn_id"},
		{name: "NUL in turn content", turn: func(x *memory.TurnExport) { x.Turn.Content = "a\x00b" }, field: "turn.content"},
		{name: "turn role x", turn: func(x *memory.TurnExport) { x.Turn.Role = "x" }, field: "turn.role"},
		{name: "turn without session", turn: func(x *memory.TurnExport) { x.Turn.SessionID = "" }, field: "turn.session_id"},
	} {
		err := s.InTx(context.Background(), "acme", func(tx *memory.Tx) error {
			var err error
			if tc.mem != nil {
				x := good()
				tc.mem(&x)
				_, err = tx.ImportMemory(context.Background(), x)
			} else {
				x := goodTurn()
				tc.turn(&x)
				_, err = tx.ImportTurn(context.Background(), x)
			}
			return err
		})
		var fe *memory.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a FieldError on %s", tc.name, err, tc.field)
		}
	}
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories`) + pgtest.Count(t, pool, "acme", `SELECT count(*) FROM turns`); n != 0 {
		t.Fatalf("%d rows written by refused imports", n)
	}
	// The good ones are stored.
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		if ok, err := tx.ImportMemory(ctx, good()); !ok || err != nil {
			t.Errorf("good memory: %v, %v", ok, err)
		}
		if ok, err := tx.ImportTurn(ctx, goodTurn()); !ok || err != nil {
			t.Errorf("good turn: %v, %v", ok, err)
		}
		return nil
	})
}
