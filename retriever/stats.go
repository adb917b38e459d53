package retriever

import (
	"context"
	"log/slog"
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
	count := func() (memory.TextStats, error) {
		return tx.OwnerTextStats(ctx, q.Scope, q.UserID, q.AgentID, q.statuses, q.now)
	}
	return r.textStats.get(memoryStatsKey(tx, q), r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		if k, ok := storedMemoryStats(q); ok {
			return r.storedStats(ctx, tx, k, count)
		}
		return count()
	})
}

// turnTextStats returns the BM25 statistics of userID's turns, cached.
func (r *Retriever) turnTextStats(ctx context.Context, tx *memory.Tx, userID string) (*memory.TextStats, error) {
	return r.textStats.get(turnStatsKey(tx, userID), r.cfg.StatsCacheTTL, func() (memory.TextStats, error) {
		return r.storedStats(ctx, tx, memory.StatsKey{Layer: memory.StatsTurns, Scope: memory.ScopeUser, Subject: userID},
			func() (memory.TextStats, error) { return tx.TurnTextStats(ctx, userID) })
	})
}

// storedMemoryStats is the stored statistics of q's collection of memories, when it is
// one that is stored: an owner's active memories, the collection of every search and
// context call that does not ask for other statuses.
func storedMemoryStats(q query) (memory.StatsKey, bool) {
	if len(q.statuses) != 1 || q.statuses[0] != string(memory.StatusActive) {
		return memory.StatsKey{}, false
	}
	switch q.Scope {
	case memory.ScopeGlobal:
		return memory.StatsKey{Layer: memory.StatsMemories, Scope: memory.ScopeGlobal}, true
	case memory.ScopeAgent:
		return memory.StatsKey{Layer: memory.StatsMemories, Scope: memory.ScopeAgent, Subject: q.AgentID}, q.AgentID != ""
	}
	return memory.StatsKey{Layer: memory.StatsMemories, Scope: memory.ScopeUser, Subject: q.UserID}, q.UserID != ""
}

// storedStats returns k's stored statistics, and has the background refresher count
// them again (with the frequent terms) once they are frequentTermLives cache lives
// old. The search never waits for a refresh: N moves by one row per write, and at the
// size where stored figures pay (smallStoredOwner rows and more) ten minutes of writes
// move an IDF by a hair. A smaller owner, whose figures move fastest and are cheap to
// count, is counted as before and takes only its frequent terms from the row.
// Without a stored row it counts with count and has the refresher store a row, so the
// owner's later searches know its frequent terms from the start.
func (r *Retriever) storedStats(ctx context.Context, tx *memory.Tx, k memory.StatsKey,
	count func() (memory.TextStats, error)) (memory.TextStats, error) {
	ttl := r.cfg.StatsCacheTTL
	if ttl <= 0 {
		return count()
	}
	st, ok, err := tx.ReadTextStats(ctx, k)
	if err != nil {
		return memory.TextStats{}, err
	}
	if !ok {
		r.refresher.enqueue(tx.Tenant(), k)
		return count()
	}
	oldest := st.CountedAt
	if st.TermsAt.Before(oldest) {
		oldest = st.TermsAt
	}
	if r.now().Sub(oldest) >= frequentTermLives*ttl {
		r.refresher.enqueue(tx.Tenant(), k)
	}
	if st.Stats.N < smallStoredOwner {
		s, err := count()
		s.Frequent = st.Stats.Frequent
		return s, err
	}
	return st.Stats, nil
}

// smallStoredOwner is the stored document count below which an owner is counted at
// each cache refresh rather than read from its stored row.
const smallStoredOwner = 200

// statsRefresher counts stored statistics again in the background, one owner at a
// time, off every search's path. An owner already waiting is asked for once; when the
// queue is full a request is dropped (the owner's next search asks again).
type statsRefresher struct {
	store *memory.Store
	now   func() time.Time
	log   *slog.Logger
	jobs  chan refreshKey

	mu      sync.Mutex
	waiting map[refreshKey]bool
}

type refreshKey struct {
	tenant string
	key    memory.StatsKey
}

// refreshQueue bounds the owners waiting for a refresh.
const refreshQueue = 1024

func newStatsRefresher(store *memory.Store, now func() time.Time, log *slog.Logger) *statsRefresher {
	return &statsRefresher{store: store, now: now, log: log, jobs: make(chan refreshKey, refreshQueue),
		waiting: map[refreshKey]bool{}}
}

// enqueue asks for k's statistics and frequent terms to be counted again.
func (s *statsRefresher) enqueue(tenant string, k memory.StatsKey) {
	rk := refreshKey{tenant: tenant, key: k}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[rk] {
		return
	}
	select {
	case s.jobs <- rk:
		s.waiting[rk] = true
	default:
	}
}

// refreshTimeout bounds one owner's count (the largest owners' frequent terms take a
// pass over every row).
const refreshTimeout = time.Minute

// Run refreshes what is asked until ctx ends.
func (s *statsRefresher) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case rk := <-s.jobs:
			if err := s.refresh(ctx, rk); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "refreshing stored text statistics failed", "tenant", rk.tenant,
					"layer", rk.key.Layer, "scope", rk.key.Scope, "error", err)
			}
			s.mu.Lock()
			delete(s.waiting, rk)
			s.mu.Unlock()
		}
	}
}

func (s *statsRefresher) refresh(ctx context.Context, rk refreshKey) error {
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	return s.store.InTx(ctx, rk.tenant, func(tx *memory.Tx) error {
		_, err := tx.RefreshTextStats(ctx, rk.key, s.now(), true)
		return err
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
		// A set, not a scan per term: both lists can hold thousands of terms.
		counted := make(map[string]bool, len(e.stats.Frequent))
		for _, g := range e.stats.Frequent {
			counted[g.Term] = true
		}
		for _, f := range old.stats.Frequent {
			if counted[f.Term] {
				continue // counted again (a stored row's frequent terms)
			}
			if at, ok := old.learnt[f.Term]; ok && now.Before(at.Add(frequentTermLives*ttl)) {
				if e.learnt == nil {
					e.learnt = map[string]time.Time{}
				}
				e.stats.Frequent = append(e.stats.Frequent, f)
				e.learnt[f.Term] = at
				counted[f.Term] = true
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

// maxFrequentTerms bounds the frequent terms kept for one owner: the stored ones and
// as many learnt.
const maxFrequentTerms = 2 * memory.MaxStoredFrequentTerms

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
