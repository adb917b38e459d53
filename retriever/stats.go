package retriever

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/memory"
)

// BM25 statistics of an owner (document count and mean length) are read once and
// reused for StatsCacheTTL: counting them reads every row of the owner, which would
// make each keyword search grow with the owner's size, while they move by one row in
// N per write. Term document frequencies are never cached; each query counts them
// over the rows matching its terms (memory.bm25Spec).

// memoryTextStats returns the BM25 statistics of q's owner over memories, cached.
func (r *Retriever) memoryTextStats(ctx context.Context, tx *memory.Tx, q query) (*memory.TextStats, error) {
	key := strings.Join([]string{"m", tx.Tenant(), string(q.Scope), q.UserID, q.AgentID, strings.Join(q.statuses, ",")}, "\x00")
	return r.textStats.get(key, r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		return tx.OwnerTextStats(ctx, q.Scope, q.UserID, q.AgentID, q.statuses, q.now)
	})
}

// turnTextStats returns the BM25 statistics of userID's turns, cached.
func (r *Retriever) turnTextStats(ctx context.Context, tx *memory.Tx, userID string) (*memory.TextStats, error) {
	key := strings.Join([]string{"t", tx.Tenant(), userID}, "\x00")
	return r.textStats.get(key, r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		return tx.TurnTextStats(ctx, userID)
	})
}

// statsCache keeps recent per-owner statistics; when full it starts afresh.
type statsCache struct {
	mu sync.Mutex
	m  map[string]statsEntry
}

type statsEntry struct {
	stats   memory.TextStats
	expires time.Time
}

// maxStatsEntries bounds the cache (about 100 bytes an entry).
const maxStatsEntries = 100_000

// get returns the cached statistics of key or reads them with read (and caches them
// for ttl; ttl < 0 reads every time).
func (c *statsCache) get(key string, ttl time.Duration, read func() (memory.TextStats, error)) (*memory.TextStats, error) {
	now := time.Now()
	if ttl >= 0 {
		c.mu.Lock()
		e, ok := c.m[key]
		c.mu.Unlock()
		if ok && now.Before(e.expires) {
			return &e.stats, nil
		}
	}
	s, err := read()
	if err != nil {
		return nil, err
	}
	if ttl >= 0 {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxStatsEntries {
			c.m = map[string]statsEntry{}
		}
		c.m[key] = statsEntry{stats: s, expires: now.Add(ttl)}
		c.mu.Unlock()
	}
	return &s, nil
}
