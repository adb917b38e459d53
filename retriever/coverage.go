package retriever

import (
	"context"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// lackingVectors returns the hits without a vector in the query's model; none when
// the vector side did not run.
func (r *Retriever) lackingVectors(ctx context.Context, tx *memory.Tx, hits []memory.MemoryHit, vec []float32) (map[uuid.UUID]bool, error) {
	if vec == nil || r.emb == nil || r.complete() {
		return nil, nil
	}
	var ids []uuid.UUID
	for _, h := range hits {
		if h.VectorRank == 0 { // ranked by the vector side: it has one
			ids = append(ids, h.Memory.ID)
		}
	}
	has, err := tx.WithVectors(ctx, r.emb.Model(), ids)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]bool{}
	for _, id := range ids {
		if !has[id] {
			out[id] = true
		}
	}
	return out, nil
}

// vectorCoverage is the share of the owner's searched memories with a vector in the
// query's model, or nil when the vector side did not run. An owner without memories
// is fully covered.
func (r *Retriever) vectorCoverage(ctx context.Context, tx *memory.Tx, q query, vec []float32) (*float64, error) {
	if vec == nil || r.emb == nil || q.AsOf != nil {
		return nil, nil
	}
	if r.complete() {
		one := 1.0
		return &one, nil
	}
	total, with, err := tx.OwnerVectorCoverage(ctx, q.Scope, q.UserID, q.AgentID, q.statuses, r.emb.Model())
	if err != nil {
		return nil, err
	}
	c := 1.0
	if total > 0 {
		c = float64(with) / float64(total)
	}
	return &c, nil
}

func (r *Retriever) complete() bool {
	return r.cfg.VectorsComplete != nil && r.cfg.VectorsComplete(r.emb.Model())
}
