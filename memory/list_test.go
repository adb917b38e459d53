package memory_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestListIndexes: a user's pages, with or without a metadata filter, are one range
// scan of memories_list_user after the cursor (the containment filters that range).
func TestListIndexes(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := t.Context()
	for i := range 20 {
		if _, err := s.CreateMemory(ctx, "acme", memory.NewMemory{UserID: fmt.Sprintf("u%d", i%3), Scope: memory.ScopeUser,
			Type: memory.Semantic, Category: memory.CatFact, Content: fmt.Sprintf("fact %d", i), Importance: 0.5,
			Confidence: 0.5, ValidFrom: time.Now(), Source: memory.SourceUser, Actor: "test",
			Metadata: map[string]any{"project": fmt.Sprintf("p%d", i%4)}}); err != nil {
			t.Fatal(err)
		}
	}
	pgtest.Exec(t, s.Pool(), "acme", "ANALYZE memories")
	for _, tc := range []struct {
		name    string
		q       memory.ListQuery
		disable []string
		index   string
	}{
		{"a user's page after a cursor", memory.ListQuery{UserID: "u1", Limit: 5,
			After: &memory.ListPosition{UpdatedAt: time.Now().Add(-time.Hour), ID: uuid.New()}}, []string{"enable_seqscan"}, "memories_list_user"},
		{"a user's metadata filter", memory.ListQuery{UserID: "u1", Metadata: map[string]any{"project": "p2"}, Limit: 5},
			[]string{"enable_seqscan"}, "memories_list_user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plan []string
			err := s.InTx(ctx, "acme", func(tx *memory.Tx) error {
				var err error
				plan, err = tx.ExplainList(ctx, tc.q, tc.disable...)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if p := strings.Join(plan, "\n"); !strings.Contains(p, tc.index) {
				t.Errorf("the plan does not use %s:\n%s", tc.index, p)
			}
		})
	}
	// Every page of a user, in order, read through the cursor.
	var got []string
	q := memory.ListQuery{UserID: "u0", Limit: 3}
	for {
		page, err := s.ListMemories(ctx, "acme", q)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Memories {
			got = append(got, m.Content)
		}
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	if want := "fact 0,fact 3,fact 6,fact 9,fact 12,fact 15,fact 18"; strings.Join(got, ",") != want {
		t.Errorf("pages %v, want %s", got, want)
	}
}
