package memory_test

import (
	"context"
	"testing"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/google/uuid"
)

// TestAddMissingEmbedding: a re-embedding write lands only for the content it was
// computed from, only once per model, and only in the writer's tenant.
func TestAddMissingEmbedding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	var id uuid.UUID
	if err := s.InTx(ctx, "t1", func(tx *memory.Tx) error {
		m, err := tx.CreateMemory(ctx, newMemory("u1", "likes oolong", memory.Embedding{Model: "a", Vector: unit(4, 0)}))
		id = m.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	add := func(tenant, content string) bool {
		t.Helper()
		var written bool
		if err := s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var err error
			written, err = tx.AddMissingEmbedding(ctx, id, content, memory.Embedding{Model: "b", Vector: unit(3, 1)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return written
	}
	var page []memory.TextToEmbed
	lacking := func() int {
		t.Helper()
		if err := s.InTx(ctx, "t1", func(tx *memory.Tx) error {
			var err error
			page, err = tx.MemoriesLackingVector(ctx, "u1", "b", uuid.Nil, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return len(page)
	}
	if n := lacking(); n != 1 || page[0].Text != "likes oolong" || page[0].ID != id.String() {
		t.Fatalf("lacking a b vector: %+v", page)
	}
	for _, step := range []struct {
		name, tenant, content string
		want                  bool
	}{
		{"content changed since it was read", "t1", "likes green tea", false},
		{"another tenant", "t2", "likes oolong", false},
		{"the content read", "t1", "likes oolong", true},
		{"a second time", "t1", "likes oolong", false},
	} {
		if got := add(step.tenant, step.content); got != step.want {
			t.Errorf("%s: written %v, want %v", step.name, got, step.want)
		}
	}
	if n := lacking(); n != 0 {
		t.Errorf("%d memories still lack a b vector", n)
	}
	u := "u1"
	c, err := s.MemoryCoverage(ctx, "t1", &u)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 1 || c.For("a") != 1 || c.For("b") != 1 {
		t.Errorf("coverage %+v", c)
	}
	if c, err := s.MemoryCoverage(ctx, "t2", nil); err != nil || c.Total != 0 {
		t.Errorf("another tenant's coverage: %+v, %v", c, err)
	}
}
