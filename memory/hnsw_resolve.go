package memory

import (
	"context"
	"sync"
	"time"
)

// The resolver's side of the owner indexes (memory/hnsw_index.go). A search reads
// the registry before each query; the resolver reads its owner's nearest memories in
// one batch with its other reads (ResolveReads), which must know the path before it
// is sent, so it keeps each tenant's ready indexes for ownerIndexesTTL instead. A
// stale entry only costs speed: an index built meanwhile is used from the entry's
// renewal on, and the statement of one dropped meanwhile still answers exactly (the
// planner scans the owner's vectors when the index is gone).

// ownerIndexesTTL is how long a tenant's ready indexes are reused: short beside the
// maintenance interval (ENGRAM_HNSW_INTERVAL, default 10 minutes), so a new index
// waits little longer for the resolver than for the search, for one registry read a
// tenant a minute.
const ownerIndexesTTL = time.Minute

// maxOwnerIndexTenants bounds the cache; when full it starts afresh.
const maxOwnerIndexTenants = 10_000

// ownerIndexes is a Store's cache of its tenants' ready owner indexes.
type ownerIndexes struct {
	mu      sync.Mutex
	tenants map[string]tenantIndexes
	now     func() time.Time // nil: time.Now
}

func (c *ownerIndexes) clock() time.Time {
	if c != nil && c.now != nil {
		return c.now()
	}
	return time.Now()
}

type tenantIndexes struct {
	ready   map[[2]string]HNSWOwnerIndex // by model and user_id
	expires time.Time
}

// forget drops every entry, so the next read sees the registry as it is now.
func (c *ownerIndexes) forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tenants = nil
}

// ownerIndex is the ready index of the owner (t's tenant, model, user) that can answer
// a query for vec, or nil. It reads the tenant's registry on a miss; without a cache
// (a Tx made outside a Store) on every call.
func (t *Tx) ownerIndex(ctx context.Context, model, user string, vec []float32) (*HNSWOwnerIndex, error) {
	c := t.indexes
	now := c.clock()
	if c != nil {
		c.mu.Lock()
		e, ok := c.tenants[t.tenant]
		c.mu.Unlock()
		if ok && now.Before(e.expires) {
			return pickIndex(e.ready, model, user, vec), nil
		}
	}
	ixs, err := t.hnswRegistry(ctx)
	if err != nil {
		return nil, err
	}
	e := tenantIndexes{ready: map[[2]string]HNSWOwnerIndex{}, expires: now.Add(ownerIndexesTTL)}
	for _, ix := range ixs {
		if ix.State == "ready" {
			e.ready[[2]string{ix.Model, ix.UserID}] = ix
		}
	}
	if c != nil {
		c.mu.Lock()
		if c.tenants == nil || len(c.tenants) >= maxOwnerIndexTenants {
			c.tenants = map[string]tenantIndexes{}
		}
		c.tenants[t.tenant] = e
		c.mu.Unlock()
	}
	return pickIndex(e.ready, model, user, vec), nil
}

func pickIndex(ready map[[2]string]HNSWOwnerIndex, model, user string, vec []float32) *HNSWOwnerIndex {
	ix, ok := ready[[2]string{model, user}]
	if !ok || !ix.serves(vec) {
		return nil
	}
	return &ix
}

// maxResolveEfSearch caps the resolver's hnsw.ef_search below the index's own, which
// is set for searches (DefaultHNSWEfSearch: recall at 100,000 vectors and a candidate
// list of its own): the resolver wants K+slack (about 32) of a list that costs about
// its length. `engram bench resolve` on its owner of 10,000 (quiet machine, 2026-12-01):
// recall@10 of the resolver's neighbours 0.997–0.999 at 100 against 1.0 at 400, for
// 2.8 ms a read instead of 4.1–4.7 ms; at 40 recall fell to 0.985 and the duplicates it
// missed became adds.
const maxResolveEfSearch = 100

// ResolveEfSearch is the hnsw.ef_search of the resolver's reads through the index.
func (ix HNSWOwnerIndex) ResolveEfSearch() int { return min(ix.EfSearch, maxResolveEfSearch) }

// resolveNearestSQL is nearestVectorsFirstSQL for an owner with a ready index (same
// parameters and columns): the index's nearest active and pending memories, the
// status filter inside the iterative scan so it reads on until K+slack pass, re-ranked
// by exact distance. It takes K+slack of the scan, not the search's ef_search: the
// index's distances are exact, so the scan's first ef_search results come in order
// and a longer list would only re-rank rows that cannot enter the top K. The count
// column is the rows that passed (see scanNearestVectorsFirst).
func (ix *HNSWOwnerIndex) resolveNearestSQL() string {
	return `WITH near AS MATERIALIZED (` + ix.hnswNearestSQL("$2", "$4", "$3", "m.status IN ('active', 'pending')", "$5") + `)
		SELECT ` + memoryColumnsAs("m") + `, 1 - near.dist, (SELECT count(*) FROM near)
		FROM near CROSS JOIN ` + lookupSQL("*", "memories", "m", "m.tenant = $1 AND m.id = near.id") + `
		ORDER BY near.dist, m.id LIMIT $6`
}
