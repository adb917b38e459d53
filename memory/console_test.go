package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestConsoleReads: the console's listings see one tenant's rows only, and filter.
func TestConsoleReads(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	ctx := context.Background()
	var src, digest memory.Memory
	inTx(t, s, "acme", func(ctx context.Context, tx *memory.Tx) error {
		var err error
		if _, err = tx.InsertTurn(ctx, memory.Turn{TurnID: "t1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser,
			Content: "console turn", OccurredAt: time.Now().UTC()}); err != nil {
			return err
		}
		if src, err = tx.CreateMemory(ctx, lifecycleMemory("u1", "t1", "prefers window seats")); err != nil {
			return err
		}
		p := lifecycleMemory("u1", "t1", "may own a 100% wool_coat")
		p.Status, p.Key = memory.StatusPending, "clothing.coat"
		if _, err = tx.CreateMemory(ctx, p); err != nil {
			return err
		}
		d := lifecycleMemory("u1", "t1", "travels often")
		d.SourceTurnIDs, d.SourceMemoryIDs = nil, []string{src.ID.String()}
		if digest, err = tx.CreateMemory(ctx, d); err != nil {
			return err
		}
		_, err = tx.CreateMemory(ctx, lifecycleMemory("u2", "t1", "likes jazz"))
		return err
	})
	inTx(t, s, "globex", func(ctx context.Context, tx *memory.Tx) error {
		_, err := tx.CreateMemory(ctx, lifecycleMemory("g1", "t9", "globex secret"))
		return err
	})

	users, err := s.ConsoleUsers(ctx, "acme")
	if err != nil || len(users) != 2 || users[0].UserID != "u1" || users[0].Total != 3 ||
		users[0].ByStatus[memory.StatusPending] != 1 || users[0].ByStatus[memory.StatusActive] != 2 || users[1].UserID != "u2" {
		t.Errorf("ConsoleUsers(acme) = %+v, %v", users, err)
	}
	for _, tc := range []struct {
		name string
		f    memory.MemoryFilter
		want []string
	}{
		{"user", memory.MemoryFilter{User: "u2"}, []string{"likes jazz"}},
		{"status", memory.MemoryFilter{AnyUser: true, Status: memory.StatusPending}, []string{"may own a 100% wool_coat"}},
		{"key", memory.MemoryFilter{User: "u1", Key: "COAT"}, []string{"may own a 100% wool_coat"}},
		{"text", memory.MemoryFilter{User: "u1", Text: "WINDOW"}, []string{"prefers window seats"}},
		{"wildcards are literal", memory.MemoryFilter{AnyUser: true, Text: "0% w"}, []string{"may own a 100% wool_coat"}},
		{"underscore is literal", memory.MemoryFilter{AnyUser: true, Text: "l_c"}, []string{"may own a 100% wool_coat"}},
		{"no match", memory.MemoryFilter{AnyUser: true, Text: "globex"}, nil},
		{"type and category", memory.MemoryFilter{AnyUser: true, Type: memory.Episodic}, nil},
	} {
		ms, err := s.ConsoleMemories(ctx, "acme", tc.f)
		var got []string
		for _, m := range ms {
			got = append(got, m.Content)
		}
		if err != nil || len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: ConsoleMemories = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	ms, err := s.ConsoleMemoriesByID(ctx, "acme", []uuid.UUID{digest.ID, uuid.New(), src.ID})
	if err != nil || len(ms) != 2 || ms[0].ID != digest.ID || ms[1].ID != src.ID {
		t.Errorf("ConsoleMemoriesByID = %v, %v", ms, err)
	}
	if ms, err := s.ConsoleMemoriesByID(ctx, "globex", []uuid.UUID{src.ID}); err != nil || len(ms) != 0 {
		t.Errorf("globex reads acme's memory by id: %v, %v", ms, err)
	}
	if ds, err := s.ConsoleDistilledFrom(ctx, "acme", src.ID); err != nil || len(ds) != 1 || ds[0].ID != digest.ID {
		t.Errorf("ConsoleDistilledFrom = %v, %v", ds, err)
	}
	if ts, err := s.ConsoleTurns(ctx, "acme", []string{"nope", "t1"}); err != nil || len(ts) != 1 || ts[0].Content != "console turn" {
		t.Errorf("ConsoleTurns = %v, %v", ts, err)
	}
	if ts, err := s.ConsoleTurns(ctx, "globex", []string{"t1"}); err != nil || len(ts) != 0 {
		t.Errorf("globex reads acme's turn: %v, %v", ts, err)
	}
	if a, err := s.ConsoleAudit(ctx, "acme", src.ID); err != nil || len(a) != 1 || a[0].Action != "create" || a[0].Version != 1 {
		t.Errorf("ConsoleAudit = %+v, %v", a, err)
	}
	if a, err := s.ConsoleAudit(ctx, "globex", src.ID); err != nil || len(a) != 0 {
		t.Errorf("globex reads acme's audit: %+v, %v", a, err)
	}

	// Runs: a tenant sees unfiltered runs and its own, with its owners' counts only.
	var all, mine, theirs int64
	for _, r := range []struct {
		id     *int64
		tenant string
	}{{&all, ""}, {&mine, "acme"}, {&theirs, "globex"}} {
		// Run records are written by the operator functions only: set them up as the owner.
		*r.id = int64(pgtest.OwnerCount(t, pool, "acme", `INSERT INTO consolidation_runs (status, tenant_filter) VALUES ('completed', $1) RETURNING id::int`, r.tenant))
	}
	pgtest.OwnerExec(t, pool, "acme", `INSERT INTO consolidation_progress (root_id, tenant, user_id, run_id, counts) VALUES
		($1, 'acme', 'u1', $1, '{"archived": 2, "decayed": 1}'), ($1, 'acme', 'u2', $1, '{"archived": 1}'),
		($1, 'globex', 'g1', $1, '{"archived": 40}')`, all)
	runs, err := s.ConsoleRuns(ctx, "acme", 10)
	if err != nil || len(runs) != 2 || runs[0].ID != mine || runs[1].ID != all {
		t.Fatalf("ConsoleRuns(acme) = %+v, %v; want runs %d and %d", runs, err, mine, all)
	}
	if r := runs[1]; r.OwnersDone != 2 || r.Counts["archived"] != 3 || r.Counts["decayed"] != 1 {
		t.Errorf("acme's view of run %d: %+v, want its two owners' counts", all, r)
	}
}
