// Package resolvertest helps tests that need memories made the way the pipeline makes
// them: candidates with sensible defaults, resolved by the real resolver on the local
// hashing embedder. It is test support (like memory/pgtest), not used in production.
package resolvertest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// Ctx is a context that ends with the test, or after a minute.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// HashEmbedder is the local embedder at its default size.
func HashEmbedder(t testing.TB) *llm.HashEmbedder {
	t.Helper()
	e, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Option adjusts a candidate.
type Option = func(*memory.Candidate)

// Candidate is a trusted user candidate of tenant: a semantic preference of user, valid
// from 2026-01-05, from one fresh turn; opts adjust it.
func Candidate(tenant, user, content string, opts ...Option) memory.Candidate {
	c := memory.Candidate{
		ID: "cand-" + uuid.NewString(), Tenant: tenant, UserID: user, Scope: memory.ScopeUser,
		Type: memory.Semantic, Category: memory.CatPreference, Content: content,
		Importance: 0.6, Confidence: 0.8, Source: memory.SourceUser, Trusted: true,
		SourceTurnIDs: []string{"turn-" + uuid.NewString()}, ValidFrom: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		Extractor: "test", ExtractorVersion: "1",
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithKey sets the candidate's slot key.
func WithKey(k string) Option { return func(c *memory.Candidate) { c.Key = k } }

// ValidFrom sets when the candidate became true.
func ValidFrom(at time.Time) Option { return func(c *memory.Candidate) { c.ValidFrom = at } }

// Resolve resolves c with r and fails the test unless the decision is want.
func Resolve(t testing.TB, r *consolidator.Resolver, c memory.Candidate, want consolidator.DecisionKind) consolidator.Decision {
	t.Helper()
	d, err := r.Resolve(Ctx(t), c)
	if err != nil {
		t.Fatalf("resolving %q: %v", c.Content, err)
	}
	if d.Kind != want {
		t.Fatalf("resolving %q: got %s (%s), want %s", c.Content, d.Kind, d.Reason, want)
	}
	return d
}
