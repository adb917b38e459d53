package retriever

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// lackingVectors returns the hits without a vector in the query's model; none when
// the vector side did not run or the owner is fully covered (the common case, known
// from the cached count without reading the hits' vectors).
func (r *Retriever) lackingVectors(ctx context.Context, tx *memory.Tx, q query, hits []memory.MemoryHit, vec []float32) (map[uuid.UUID]bool, error) {
	if vec == nil || r.emb == nil || r.complete() {
		return nil, nil
	}
	if q.AsOf == nil {
		c, err := r.vectorCoverage(ctx, tx, q, vec)
		if err != nil {
			return nil, err
		}
		if c != nil && *c >= 1 {
			return nil, nil
		}
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
	key := strings.Join([]string{tx.Tenant(), string(q.Scope), q.UserID, q.AgentID, strings.Join(q.statuses, ","), r.emb.Model()}, "\x00")
	now := time.Now()
	if c, ok := r.coverage.get(key, now); ok {
		return &c, nil
	}
	total, with, err := tx.OwnerVectorCoverage(ctx, q.Scope, q.UserID, q.AgentID, q.statuses, r.emb.Model())
	if err != nil {
		return nil, err
	}
	c := 1.0
	if total > 0 {
		c = float64(with) / float64(total)
	}
	if r.cfg.CoverageCacheTTL > 0 {
		r.coverage.put(key, c, now.Add(r.cfg.CoverageCacheTTL))
	}
	return &c, nil
}

// coverageCache keeps recent per-owner coverage counts (keyed by model too).
type coverageCache struct {
	mu sync.Mutex
	m  map[string]coverageEntry
}

type coverageEntry struct {
	ratio   float64
	expires time.Time
}

// maxCoverageEntries bounds the cache; when full it starts afresh.
const maxCoverageEntries = 10_000

func (c *coverageCache) get(key string, now time.Time) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || now.After(e.expires) {
		return 0, false
	}
	return e.ratio, true
}

func (c *coverageCache) put(key string, ratio float64, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCoverageEntries {
		c.m = map[string]coverageEntry{}
	}
	c.m[key] = coverageEntry{ratio: ratio, expires: expires}
}

func (r *Retriever) complete() bool {
	return r.cfg.VectorsComplete != nil && r.cfg.VectorsComplete(r.emb.Model())
}
