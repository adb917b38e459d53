package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

const tenant = "acme"

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func hashEmbedder(t *testing.T) *llm.HashEmbedder {
	t.Helper()
	e, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newResolver is a store with the resolver that fills it, as the pipeline would.
func newResolver(t *testing.T) (*memory.Store, *consolidator.Resolver) {
	t.Helper()
	s := pgtest.Store(t)
	return s, consolidator.NewResolver(s, hashEmbedder(t), nil, consolidator.ResolverConfig{}, nil)
}

// cand builds a trusted user candidate; opts adjust it.
func cand(user, content string, opts ...func(*memory.Candidate)) memory.Candidate {
	c := memory.Candidate{
		ID: "cand-" + uuid.NewString(), Tenant: tenant, UserID: user, Scope: memory.ScopeUser,
		Type: memory.Semantic, Category: memory.CatPreference, Content: content,
		Importance: 0.6, Confidence: 0.8, Source: memory.SourceUser, Trusted: true,
		SourceTurnIDs: []string{"turn-" + uuid.NewString()}, ValidFrom: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}
func withKey(k string) func(*memory.Candidate) { return func(c *memory.Candidate) { c.Key = k } }
func validFrom(t time.Time) func(*memory.Candidate) {
	return func(c *memory.Candidate) { c.ValidFrom = t }
}

func resolve(t *testing.T, r *consolidator.Resolver, c memory.Candidate, want consolidator.DecisionKind) consolidator.Decision {
	t.Helper()
	d, err := r.Resolve(testCtx(t), c)
	if err != nil {
		t.Fatalf("resolving %q: %v", c.Content, err)
	}
	if d.Kind != want {
		t.Fatalf("resolving %q: got %s (%s), want %s", c.Content, d.Kind, d.Reason, want)
	}
	return d
}

func detail(t *testing.T, s *memory.Store, id uuid.UUID) memory.Detail {
	t.Helper()
	d, err := s.Detail(testCtx(t), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
