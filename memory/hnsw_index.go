package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Approximate vector indexes for very large owners (migration 0011). A search scans
// its owner's vectors exactly, which costs about 2 µs a vector: fine at the sizes
// owners usually have, too slow for an agent's or a tenant's global scope of hundreds
// of thousands. An owner (tenant, model, user_id; user_id '' is the tenant's global
// scope) whose vectors pass HNSWConfig.Threshold gets a partial HNSW index of its
// own, which only its searches can use (the predicate names the owner), and every
// other owner keeps the exact scan. MaintainHNSW builds and drops them; the search
// reads the registry (hnsw_owner_indexes) to choose its path.

// HNSWConfig says which owners get an index and how it is searched.
type HNSWConfig struct {
	// Threshold is the owner size (vectors of one model) from which it gets an index;
	// an indexed owner keeps it until it shrinks below half of this, so an owner near
	// the threshold does not flap. <= 0: DefaultHNSWThreshold.
	Threshold int
	// EfSearch is the index's candidate list per search (hnsw.ef_search); the search
	// re-ranks the candidates by exact distance. <= 0: DefaultHNSWEfSearch.
	EfSearch int
	// M and EfConstruction are the graph's build parameters (links per node, candidate
	// list while building); <= 0: DefaultHNSWM, DefaultHNSWEfConstruction. A denser
	// graph reaches a recall at a smaller ef_search, for a slower build and slower
	// inserts.
	M, EfConstruction int
}

// Defaults. The threshold: an exact scan costs ~2 µs a vector (FACTS.md: 18/19 ms
// p50/p95 at 10,000 on a quiet machine): from ~10,000 on the vector side alone
// takes two thirds of the 30 ms budget, while `engram bench large` saw the index win
// from 2,000 (loaded machine) at the price of slower writes (27/s vs 75/s).
const (
	DefaultHNSWThreshold = 10_000
	// The graph and search parameters: with pgvector's defaults (m 16, ef_construction
	// 64) the 100,000-memory owners of `engram bench large` reached recall@10 0.93 at
	// ef_search 400; with m 24 and ef_construction 128, 0.98 at 16–19 ms p95, for
	// builds 1.7× as long and inserts into an indexed owner at 114/s instead of 202/s
	// (quiet machine, 2026-12-01).
	DefaultHNSWEfSearch       = 400
	DefaultHNSWM              = 24
	DefaultHNSWEfConstruction = 128
)

func (c HNSWConfig) withDefaults() HNSWConfig {
	if c.Threshold <= 0 {
		c.Threshold = DefaultHNSWThreshold
	}
	if c.EfSearch <= 0 {
		c.EfSearch = DefaultHNSWEfSearch
	}
	if c.M <= 0 {
		c.M = DefaultHNSWM
	}
	if c.EfConstruction <= 0 {
		c.EfConstruction = DefaultHNSWEfConstruction
	}
	return c
}

// HNSWOwnerIndex is one owner's index as the registry records it.
type HNSWOwnerIndex struct {
	Tenant   string `json:"tenant"`
	Model    string `json:"model"`
	UserID   string `json:"user_id"` // "" is the tenant's global scope
	Dims     int    `json:"dims"`
	Name     string `json:"index"`
	State    string `json:"state"`         // building, ready
	Rows     int64  `json:"rows_at_build"` // the owner's vectors when the build started
	EfSearch int    `json:"ef_search"`
	// BuildSeconds is how long MaintainHNSW took to build it (in its report only).
	BuildSeconds float64 `json:"build_seconds,omitempty"`
}

// hnswIndexName names an owner's index by a hash, so catalog names carry no tenant
// or user id and fit PostgreSQL's 63 characters whatever the ids.
func hnswIndexName(tenant, model, userID string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + model + "\x00" + userID))
	return "engram_hnsw_" + hex.EncodeToString(h[:8])
}

// hnswIndexFor is the ready index of the search's owner, or nil: the search's choice
// between the exact scan and the index. History (AsOf) and agent-scoped searches
// read other rows than the owner's current vectors and keep the exact path.
func (t *Tx) hnswIndexFor(ctx context.Context, q MemorySearch) (*HNSWOwnerIndex, error) {
	if q.Vector == nil || q.AsOf != nil || q.Scope == ScopeAgent {
		return nil, nil
	}
	user := q.UserID
	if q.Scope == ScopeGlobal {
		user = ""
	}
	// The tenant's ready indexes, as the resolver reads them (hnsw_resolve.go): one
	// registry read a tenant a minute rather than one a search. A stale entry costs
	// speed only: an index built meanwhile is used from the entry's renewal on (the
	// maintenance pass that builds one in this process renews it at once), and the
	// statement of one dropped meanwhile answers exactly, by the owner's vectors.
	ix, err := t.ownerIndex(ctx, q.Model, user, q.Vector)
	if err != nil {
		return nil, fmt.Errorf("looking up the owner's vector index: %w", err)
	}
	return ix, nil
}

// serves reports whether the ready index can answer a query for vec: it covers the
// owner's vectors of its dimension only.
func (ix *HNSWOwnerIndex) serves(vec []float32) bool {
	return ix.State == "ready" && ix.Dims == len(vec)
}

// hnswScanSQL sets the transaction up for a statement that reads an owner's index
// ($1: hnsw.ef_search), and hnswScanDoneSQL restores the planner for the statements
// after it (plannerRestoreSQL). Iterative scans keep reading the index until enough
// rows pass the statement's filters; relaxed order is re-sorted by the exact
// distance. Custom plans: the index's predicate names the owner, so only a plan made
// with the owner's values can use it, and a cached generic plan would fall back to the
// exact scan. No sort: the planner would otherwise sort a mid-sized owner's exact
// distances (cheap by its estimate, not by the measurement) and ignore the index.
const (
	hnswScanSQL = `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true), ` +
		plannerSaveSQL + `, set_config('plan_cache_mode', 'force_custom_plan', true), set_config('enable_sort', 'off', true)`
	hnswScanDoneSQL = plannerRestoreSQL
)

// useHNSW is the search's hook (memory/search.go): it points q at the owner's index
// when it has a ready one and sets the scan up for the next statement; done restores
// the transaction's planner settings, so later statements plan as before.
func (t *Tx) useHNSW(ctx context.Context, q *MemorySearch) (done func(), err error) {
	ix, err := t.hnswIndexFor(ctx, *q)
	if err != nil || ix == nil {
		return func() {}, err
	}
	if _, err := t.tx.Exec(ctx, hnswScanSQL, fmt.Sprint(ix.EfSearch)); err != nil {
		return func() {}, fmt.Errorf("setting up the owner's vector index scan: %w", err)
	}
	q.hnsw = ix
	return func() {
		// Best effort: after a failed statement the transaction is aborted anyway.
		_, _ = t.tx.Exec(ctx, hnswScanDoneSQL)
	}, nil
}

// hnswDistsCTEs replaces the exact scan's edist and dists CTEs for an indexed owner:
// the owner's nearest vectors through its partial index, the search's filters (where,
// on memories m) applied inside the index scan so an iterative scan reads on until
// enough pass, with exact distances that vtop re-ranks. The owner and dimension
// conditions repeat the index's predicate, which the planner must see implied.
func (ix *HNSWOwnerIndex) hnswDistsCTEs(modelArg, vecArg, ownerArg string, where []string, limit int) []string {
	return []string{`edist AS MATERIALIZED (` + ix.hnswDistancesSQL(modelArg, vecArg, ownerArg, strings.Join(where, " AND "), limit) + `)`,
		`dists AS (SELECT id, dist FROM edist)`}
}

// hnswDistancesSQL is hnswDistsCTEs's select alone, for main's vectorDistancesSQL
// (the search's one place that picks how the owner's nearest vectors are found):
// filter is its condition on memories m, limit the candidates wanted. The index
// still searches ef_search candidates (its recall), and pgvector returns that first
// set nearest first, so taking only limit of them keeps the same nearest while the
// filter's lookups and exact distances are paid for limit rows, not ef_search (400
// lookups were 3.5 of a 100,000-memory owner's 16 ms).
func (ix *HNSWOwnerIndex) hnswDistancesSQL(modelArg, vecArg, ownerArg, filter string, limit int) string {
	return ix.hnswNearestSQL(modelArg, vecArg, ownerArg, filter, fmt.Sprint(limit))
}

// hnswNearestSQL selects id and exact dist of the owner's limit (an SQL expression)
// nearest vectors through its partial index, filter (a condition on memories m)
// applied inside the index scan. The owner and dimension conditions repeat the
// index's predicate, which the planner must see implied.
func (ix *HNSWOwnerIndex) hnswNearestSQL(modelArg, vecArg, ownerArg, filter, limit string) string {
	expr := fmt.Sprintf("(e.embedding::vector(%d) <=> %s)", ix.Dims, vecArg)
	return `SELECT e.memory_id AS id, ` + expr + ` AS dist
	FROM memory_embeddings e JOIN memories m ON m.tenant = $1 AND m.id = e.memory_id
	WHERE e.tenant = $1 AND e.model = ` + modelArg + ` AND e.user_id = ` + ownerArg + fmt.Sprintf(` AND e.dims = %d`, ix.Dims) + `
	  AND ` + filter + `
	ORDER BY ` + expr + ` LIMIT ` + limit
}

// OwnerIndexed reports whether the vector side of q reads the owner's own HNSW index
// (a very large owner; useHNSW), so a caller can run that side on its own.
func (t *Tx) OwnerIndexed(ctx context.Context, q MemorySearch) (bool, error) {
	ix, err := t.hnswIndexFor(ctx, q)
	return ix != nil, err
}
