package memory_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// The counts across tenants (migration 0017) agree with each tenant's own counts,
// however the census cuts the table, and the path they take opens nothing of another
// tenant's rows to the application role.
func TestCountsAcrossTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	type mem struct {
		user, content string
		status        memory.Status
		typ           memory.Type
		models        []string
	}
	tenants := map[string][]mem{
		"acme": {
			{"u1", "likes oolong", memory.StatusActive, memory.Semantic, []string{"a", "b"}},
			{"u1", "walked the dog", memory.StatusActive, memory.Episodic, []string{"a"}},
			{"u2", "may own a bike", memory.StatusPending, memory.Semantic, nil},
		},
		"globex": {
			{"u1", "prefers trains", memory.StatusActive, memory.Semantic, []string{"b"}},
			{"u3", "used to live in Oslo", memory.StatusArchived, memory.Semantic, []string{"a"}},
		},
		"initech": {},  // turns only
		"hooli":   nil, // filler below
	}
	for tenant, ms := range tenants {
		if err := s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			for i, m := range ms {
				nm := newMemory(m.user, m.content)
				nm.Status, nm.Type = m.status, m.typ
				if m.typ == memory.Episodic {
					nm.Category = memory.CatEvent
				}
				for _, model := range m.models {
					nm.Embeddings = append(nm.Embeddings, memory.Embedding{Model: model, Vector: unit(4, i%4)})
				}
				if _, err := tx.CreateMemory(ctx, nm); err != nil {
					return err
				}
			}
			if tenant == "hooli" {
				for i := range 40 {
					if _, err := tx.CreateMemory(ctx, newMemory("u9", fmt.Sprintf("note %d %s", i, strings.Repeat("lorem ipsum ", 60)))); err != nil {
						return err
					}
				}
			}
			for i, content := range []string{"hello", ""} {
				if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: fmt.Sprintf("t%d", i), UserID: "u1", SessionID: "s1",
					Role: memory.RoleUser, Content: content, OccurredAt: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	// Three rows a fetch: the batches' boundaries split tenants' rows.
	census, err := s.MemoryCensus(ctx, memory.Pace{Rows: 3, Duty: 1})
	if err != nil {
		t.Fatal(err)
	}
	counts, embedded := census.Counts, census.Embedded()
	wantCounts := []memory.MemoryCount{
		{Tenant: "acme", Status: "active", Type: "episodic", Count: 1},
		{Tenant: "acme", Status: "active", Type: "semantic", Count: 1},
		{Tenant: "acme", Status: "pending", Type: "semantic", Count: 1},
		{Tenant: "globex", Status: "active", Type: "semantic", Count: 1},
		{Tenant: "globex", Status: "archived", Type: "semantic", Count: 1},
		{Tenant: "hooli", Status: "active", Type: "semantic", Count: 40},
	}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("census counts = %+v\nwant %+v", counts, wantCounts)
	}
	wantEmbedded := []memory.EmbeddingCount{
		{Tenant: "acme", Model: "a", Count: 2}, {Tenant: "acme", Model: "b", Count: 1},
		{Tenant: "globex", Model: "b", Count: 1}, // the archived memory's vector is not active
	}
	if !reflect.DeepEqual(embedded, wantEmbedded) {
		t.Errorf("embedded = %+v\nwant %+v", embedded, wantEmbedded)
	}

	for _, c := range []struct {
		what string
		all  func(context.Context) (map[string]memory.Coverage, error)
		one  func(context.Context, string, *string) (memory.Coverage, error)
	}{
		{"memories", func(context.Context) (map[string]memory.Coverage, error) { return census.Coverage(), nil }, s.MemoryCoverage},
		{"turns", s.AllTurnCoverage, s.TurnCoverage},
	} {
		all, err := c.all(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for tenant := range tenants {
			one, err := c.one(ctx, tenant, nil)
			if err != nil {
				t.Fatal(err)
			}
			if one.Total == 0 {
				if _, ok := all[tenant]; ok {
					t.Errorf("%s of %s: %+v across tenants, want absent", c.what, tenant, all[tenant])
				}
				continue
			}
			if !reflect.DeepEqual(all[tenant], one) {
				t.Errorf("%s of %s: %+v across tenants, %+v alone", c.what, tenant, all[tenant], one)
			}
		}
	}

	// The switch the counting functions use opens nothing to the application role,
	// neither set by itself nor left behind by a function in the same transaction.
	for _, call := range []string{"", "SELECT engram_op_memory_census()", "SELECT count(*) FROM engram_op_turn_coverage()"} {
		var n int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('engram.op_aggregate', 'on', true), set_config('engram.tenant', 'acme', true)`); err != nil {
				return err
			}
			if call != "" {
				if _, err := tx.Exec(ctx, call); err != nil {
					return err
				}
			}
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories WHERE tenant = 'globex')
				+ (SELECT count(*) FROM memory_embeddings WHERE tenant = 'globex')
				+ (SELECT count(*) FROM turns WHERE tenant = 'globex')
				+ (SELECT count(*) FROM turn_embeddings WHERE tenant = 'globex')`).Scan(&n)
		})
		if err != nil || n != 0 {
			t.Errorf("engram.op_aggregate on (then %q) reads %d of globex's rows (%v), want 0", call, n, err)
		}
	}
}

// RecentCensus reuses a census taken within maxAge and takes a new one otherwise.
func TestRecentCensus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memory.NewStore(pgtest.Pool(t))
	first, err := s.RecentCensus(ctx, time.Hour, memory.Pace{Duty: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, "acme", func(tx *memory.Tx) error {
		_, err := tx.CreateMemory(ctx, newMemory("u1", "likes oolong"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	again, err := s.RecentCensus(ctx, time.Hour, memory.Pace{Duty: 1})
	if err != nil || !again.TakenAt.Equal(first.TakenAt) || len(again.Counts) != 0 {
		t.Fatalf("within maxAge: %+v, %v; want the first census (no memories)", again, err)
	}
	fresh, err := s.RecentCensus(ctx, 0, memory.Pace{Duty: 1})
	if err != nil || len(fresh.Counts) != 1 || fresh.Counts[0].Count != 1 {
		t.Fatalf("maxAge 0: %+v, %v; want a new census counting the memory", fresh, err)
	}
}
