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
		// After the search SQL moves into memory: tx.ExplainMemoryCandidates(ctx, r.memorySearch(q, vec, n)).
		sql, args := r.buildMemorySQL(tenant, q, vec, n)
		rows, err := tx.Raw().Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				return err
			}
			plan = append(plan, l)
		}
		return rows.Err()
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
	type hit struct {
		id   uuid.UUID
		rank int64
	}
	var hs []hit
	err = r.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		// After the search SQL moves into memory: tx.MemoryCandidates(ctx, r.memorySearch(q, vec, n)),
		// keeping the hits with a VectorRank.
		sql, args := r.buildMemorySQL(tenant, q, vec, n)
		rows, err := tx.Raw().Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var vRank, kRank, rRank *int64
			var dist, kr *float64
			m, err := memory.ScanMemory(rows, tenant, &vRank, &dist, &kRank, &kr, &rRank)
			if err != nil {
				return err
			}
			if vRank != nil {
				hs = append(hs, hit{m.ID, *vRank})
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("the search's vector side: %w", err)
	}
	slices.SortFunc(hs, func(a, b hit) int { return int(a.rank - b.rank) })
	out := make([]uuid.UUID, len(hs))
	for i, h := range hs {
		out[i] = h.id
	}
	return out, nil
}
