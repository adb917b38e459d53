package retriever

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// Probes of the memory-candidate query a search runs, for the search benchmark
// (internal/bench): its plan, and what its vector side ranks. n is the number of
// candidates a side, vec the query vector (the search embeds the query itself).

// ExplainMemorySearch returns the plan of the memory-candidate query a search for req
// runs, one line a row.
func (r *Retriever) ExplainMemorySearch(ctx context.Context, tenant string, req SearchRequest, vec []float32, n int) ([]string, error) {
	q, err := r.validate(tenant, req)
	if err != nil {
		return nil, err
	}
	var plan []string
	err = r.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		plan, err = tx.ExplainMemoryCandidates(ctx, r.memorySearch(q, vec, n))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("explaining the memory search: %w", err)
	}
	return plan, nil
}

// VectorSide returns the memories the vector side of a search for req ranks, best
// first: the side without keyword and recency, before fusion and cut-off.
func (r *Retriever) VectorSide(ctx context.Context, tenant string, req SearchRequest, vec []float32, n int) ([]uuid.UUID, error) {
	q, err := r.validate(tenant, req)
	if err != nil {
		return nil, err
	}
	var hits []memory.MemoryHit
	err = r.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		hits, err = tx.MemoryCandidates(ctx, r.memorySearch(q, vec, n))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the search's vector side: %w", err)
	}
	hits = slices.DeleteFunc(hits, func(h memory.MemoryHit) bool { return h.VectorRank == 0 })
	slices.SortFunc(hits, func(a, b memory.MemoryHit) int { return int(a.VectorRank - b.VectorRank) })
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = h.Memory.ID
	}
	return out, nil
}
