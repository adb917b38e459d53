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
		hits, _, err = tx.MemoryCandidates(ctx, r.memorySearch(q, vec, n))
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

// SearchPlans are the executed plans (EXPLAIN ANALYZE, BUFFERS) of the statements a
// search runs: its memory-candidate query and, when it reads turns, its turn query.
type SearchPlans struct {
	Memories []string
	Turns    []string
}

// ExplainAnalyzeSearch runs the candidate statements of a search for req (n
// candidates a side; a context call uses Config.ContextCandidates) under EXPLAIN
// (ANALYZE, BUFFERS), embedding the query as the search does.
func (r *Retriever) ExplainAnalyzeSearch(ctx context.Context, tenant string, req SearchRequest, n int) (SearchPlans, error) {
	var plans SearchPlans
	q, err := r.validate(tenant, req)
	if err != nil {
		return plans, err
	}
	var vec []float32
	if q.Mode != ModeKeyword {
		vec = r.embedQuery(ctx, q.Query)
	}
	err = r.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		// The statistics come from the cache, as in a search (cached on a miss).
		if q.memories {
			ms := r.memorySearch(q, vec, n)
			if !ms.VectorOnly {
				if ms.Stats, err = r.memoryTextStats(ctx, tx, q); err != nil {
					return err
				}
			}
			// An indexed owner's search runs its vector side apart (memoryCandidates):
			// both statements are explained, the keyword and recency sides' first.
			parts, err := r.memoryStatements(ctx, tx, ms)
			if err != nil {
				return err
			}
			for i, part := range parts {
				plan, err := tx.ExplainAnalyzeMemoryCandidates(ctx, part)
				if err != nil {
					return err
				}
				if i > 0 {
					plans.Memories = append(plans.Memories, "", "-- the vector side, run alongside:")
				}
				plans.Memories = append(plans.Memories, plan...)
			}
		}
		if q.turns {
			if ts, ok := r.turnSearch(q, vec); ok {
				if ts.Keyword {
					if ts.Stats, err = r.turnTextStats(ctx, tx, q.UserID); err != nil {
						return err
					}
				}
				plans.Turns, err = tx.ExplainAnalyzeTurnCandidates(ctx, ts)
			}
		}
		return err
	})
	if err != nil {
		return plans, fmt.Errorf("explaining the search: %w", err)
	}
	return plans, nil
}
