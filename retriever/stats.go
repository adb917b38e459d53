package retriever

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/memory"
)

// BM25 statistics of an owner (document count and mean length) are read once and
// reused for StatsCacheTTL: counting them reads every row of the owner, which would
// make each keyword search grow with the owner's size, while they move by one row in
// N per write. Term document frequencies are counted by each query over the rows
// matching its terms (memory.bm25Spec), except those of the owner's frequent terms: a
// query that counted one reports it, and it is kept beside N for the rest of the
// entry's life, so later queries holding it match through their other terms first
// instead of reading most of the owner.

// memoryStatsKey names the statistics of q's owner over memories.
func memoryStatsKey(tx *memory.Tx, q query) string {
	return strings.Join([]string{"m", tx.Tenant(), string(q.Scope), q.UserID, q.AgentID, strings.Join(q.statuses, ",")}, "\x00")
}

// turnStatsKey names the statistics of userID's turns.
func turnStatsKey(tx *memory.Tx, userID string) string {
	return strings.Join([]string{"t", tx.Tenant(), userID}, "\x00")
}

// memoryTextStats returns the BM25 statistics of q's owner over memories, cached.
func (r *Retriever) memoryTextStats(ctx context.Context, tx *memory.Tx, q query) (*memory.TextStats, error) {
	return r.textStats.get(memoryStatsKey(tx, q), r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		return tx.OwnerTextStats(ctx, q.Scope, q.UserID, q.AgentID, q.statuses, q.now)
	})
}

// turnTextStats returns the BM25 statistics of userID's turns, cached.
func (r *Retriever) turnTextStats(ctx context.Context, tx *memory.Tx, userID string) (*memory.TextStats, error) {
	return r.textStats.get(turnStatsKey(tx, userID), r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		return tx.TurnTextStats(ctx, userID)
	})
}

// statsCache keeps recent per-owner statistics; when full it starts afresh.
type statsCache struct {
	mu  sync.Mutex
	m   map[string]statsEntry
	now func() time.Time // nil: time.Now
}

func (c *statsCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

type statsEntry struct {
	stats   memory.TextStats
	expires time.Time
	// learnt is when each of stats.Frequent was last counted: a frequent term stays
	// frequent long after N has moved, so it outlives the entry's refresh for
	// frequentTermLives entry lives (a query that prunes it does not count it again;
	// once it is dropped, the next full match counts it afresh).
	learnt map[string]time.Time
}

// frequentTermLives is how many lives of its entry a learnt frequent term is kept.
const frequentTermLives = 10

// maxStatsEntries bounds the cache (about 100 bytes an entry).
const maxStatsEntries = 100_000

// get returns the cached statistics of key or reads them with read (and caches them
// for ttl; ttl < 0 reads every time).
func (c *statsCache) get(key string, ttl time.Duration, read func() (memory.TextStats, error)) (*memory.TextStats, error) {
	now := c.clock()
	var old statsEntry
	if ttl >= 0 {
		c.mu.Lock()
		e, ok := c.m[key]
		c.mu.Unlock()
		if ok && now.Before(e.expires) {
			return &e.stats, nil
		}
		old = e
	}
	s, err := read()
	if err != nil {
		return nil, err
	}
	if ttl >= 0 {
		e := statsEntry{stats: s, expires: now.Add(ttl)}
		for _, f := range old.stats.Frequent {
			if at, ok := old.learnt[f.Term]; ok && now.Before(at.Add(frequentTermLives*ttl)) {
				if e.learnt == nil {
					e.learnt = map[string]time.Time{}
				}
				e.stats.Frequent = append(e.stats.Frequent, f)
				e.learnt[f.Term] = at
			}
		}
		s = e.stats
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxStatsEntries {
			c.m = map[string]statsEntry{}
		}
		c.m[key] = e
		c.mu.Unlock()
	}
	return &s, nil
}

// maxFrequentTerms bounds the frequent terms kept for one owner.
const maxFrequentTerms = 64

// learn records terms a query found frequent among key's rows, with their document
// frequencies, in key's entry (a newer count replaces an older one). The entry keeps
// its expiry; a term is carried into its refreshed entries for frequentTermLives
// lives from its count. Nothing is kept without a live entry or with caching off.
func (c *statsCache) learn(key string, terms []memory.TermDF) {
	if len(terms) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	e, ok := c.m[key]
	if !ok || !now.Before(e.expires) {
		return
	}
	// A new slice: readers hold copies of the entry that share the old one.
	merged := make([]memory.TermDF, 0, len(e.stats.Frequent)+len(terms))
	for _, f := range e.stats.Frequent {
		if !slices.ContainsFunc(terms, func(t memory.TermDF) bool { return t.Term == f.Term }) {
			merged = append(merged, f)
		}
	}
	merged = append(merged, terms...)
	if len(merged) > maxFrequentTerms {
		merged = merged[len(merged)-maxFrequentTerms:]
	}
	learnt := make(map[string]time.Time, len(merged))
	for _, f := range merged {
		learnt[f.Term] = e.learnt[f.Term]
		if slices.ContainsFunc(terms, func(t memory.TermDF) bool { return t.Term == f.Term }) {
			learnt[f.Term] = now
		}
	}
	e.stats.Frequent, e.learnt = merged, learnt
	c.m[key] = e
}
