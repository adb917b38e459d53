package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
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
	// LightBelow is the owner size under which its HNSW graph is built lighter (m
	// LightHNSWM, ef_construction LightHNSWEfConstruction, or M and EfConstruction if
	// smaller); an owner that grows past it gets an index with M and EfConstruction.
	// 0: DefaultHNSWLightBelow, < 0: every graph with M and EfConstruction.
	LightBelow int
	// IVFThreshold is the owner size from which its index is IVFFlat instead of HNSW
	// (migration 0018); an IVFFlat owner goes back to HNSW below half of it. <= 0:
	// DefaultIVFThreshold.
	IVFThreshold int
	// IVFListRows is the owner's vectors per IVFFlat list at build (lists = vectors /
	// IVFListRows); an owner that doubles is rebuilt with lists for its new size. <= 0:
	// DefaultIVFListRows.
	IVFListRows int
	// IVFProbes is the lists a search of a new IVFFlat index reads, raised if its
	// sample falls short of RecallTarget; <= 0: one in DefaultIVFProbeDivisor of its
	// lists, at least DefaultIVFMinProbes, then the fewest (down to minIVFProbes)
	// whose sample still reaches RecallTarget.
	IVFProbes int
	// TextThreshold is the owner size (memories) from which it gets a full-text index
	// of its own (text_index.go), kept until it shrinks below half of it. 0:
	// TextIndexMinDocs, < 0: none built (those there are kept).
	TextThreshold int
	// Tenants, when set, limits a pass to these tenants' owners (a benchmark's
	// tenant, leaving the rest of the database's indexes alone); empty: every tenant.
	Tenants []string
	// RecallTarget is the recall@10 an index must reach on the pass's sample queries
	// (index_recall.go): a new HNSW build below it is built once more, and an index
	// still below it is read further (ef_search, probes up to twice their setting);
	// an IVFFlat index at its default probes that reaches it is read less
	// (fewestIVFProbes). 0: DefaultIndexRecallTarget, < 0: indexes are not measured.
	RecallTarget float64
	// SwapGrace is how long a replaced index outlives its replacement, so reads
	// planned from a registry entry cached before the swap still find it; 0: a little
	// more than the cache's lifetime, < 0: none.
	SwapGrace time.Duration
}

func (c HNSWConfig) swapGrace() time.Duration {
	if c.SwapGrace == 0 {
		return ownerIndexesTTL + 5*time.Second
	}
	return c.SwapGrace
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
	// The lighter graph of owners below DefaultHNSWLightBelow: pgvector's defaults.
	// `engram bench resolve`'s owner of 10,000 (six runs each, alternated; session
	// 32): 301–344 candidates/s through an m 16 / ef_construction 64 graph against
	// 172–287 through m 24 / 128 (its HNSW inserts and reads are cheaper), the
	// resolver's neighbours at recall@10 0.960–0.998 against 0.998–1.000. The search's
	// vector side through the lighter graph (`engram bench large`, session 6, README):
	// 1.000 at 10,000, 0.983 at 50,000, 0.930 at 100,000; the pass measures every
	// build's recall besides (index_recall.go).
	LightHNSWM              = 16
	LightHNSWEfConstruction = 64
	DefaultHNSWLightBelow   = 50_000
	// IVFFlat for the largest owners. `engram bench large`'s owner of 1,000,000 (the
	// hashing embedder's vectors, 3–5-word queries; session 26): its HNSW index at
	// ef_search 400 reached recall@10 0.90 at 21 ms p95 of the bare index read, an
	// IVFFlat index of 2,000 lists reading 40 of them 0.98 at 16–19 ms (1,000 lists:
	// 0.98 at 30 probes); at 500,000 IVFFlat was ahead too (1,000 lists, half
	// precision, 20 probes: 0.956 at 7.6 ms p95; HNSW at ef_search 400: 0.939 at 19.2
	// ms); at 100,000 HNSW was ahead (0.996 at 14 ms against IVFFlat's 0.986 at 15 ms),
	// and at 10,000 far ahead (IVFFlat 0.87 reading a fifth of its lists). Where
	// between 100,000 and 500,000 they cross was not measured. Inserts into an IVFFlat
	// index cost one distance a list, not an HNSW graph update.
	DefaultIVFThreshold    = 500_000
	DefaultIVFListRows     = 500
	DefaultIVFProbeDivisor = 50
	// DefaultIVFMinProbes: recall follows the lists read, not only their share. The
	// owner of 500,000 (1,000 lists) reached recall@10 0.918 reading 20 of them and
	// 0.978 reading 40, at 12 and 21 ms p95 of the bench's vector side.
	DefaultIVFMinProbes = 40
	// minIVFProbes is the fewest lists the pass lowers a default read to
	// (fewestIVFProbes): the million-memory owner's sample found 0.900 of the exact
	// top 10 reading 16 of its 2,000 lists, so a count below this reaches the target
	// only where an owner's lists are few and long.
	minIVFProbes = 10
	// maxIVFLists bounds an owner's lists: pgvector's k-means keeps a bound for
	// every sample and list (4 bytes × 50 samples a list × lists), about 0.8 GB of
	// maintenance_work_mem at 2,000 lists and four times that at 4,000. Past
	// 1,000,000 vectors the lists grow longer instead, and a search reads more vectors.
	maxIVFLists = 2000
	// minIVFSamplesPerList: pgvector samples the index's k-means from 50 blocks a list
	// of the whole table, keeping the owner's rows among them; an owner with fewer rows
	// than a fifth of the table's blocks would get under 10 a list, too few for its
	// lists to be worth more than HNSW's graph, and keeps HNSW.
	minIVFSamplesPerList = 10
)

// Index methods of the registry (hnsw_owner_indexes.method).
const (
	MethodHNSW    = "hnsw"
	MethodIVFFlat = "ivfflat"
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
	if c.IVFThreshold <= 0 {
		c.IVFThreshold = DefaultIVFThreshold
	}
	if c.IVFListRows <= 0 {
		c.IVFListRows = DefaultIVFListRows
	}
	if c.TextThreshold == 0 {
		c.TextThreshold = TextIndexMinDocs
	}
	if c.LightBelow == 0 {
		c.LightBelow = DefaultHNSWLightBelow
	}
	if c.RecallTarget == 0 {
		c.RecallTarget = DefaultIndexRecallTarget
	}
	return c
}

// method is the index kind an owner of rows vectors gets, given the one it has (""
// for none) and the blocks of memory_embeddings: IVFFlat from IVFThreshold on, kept
// down to half of it; a new one only where its k-means can sample the owner well.
func (c HNSWConfig) method(rows int64, have string, tableBlocks int64) string {
	if have == MethodIVFFlat && rows >= int64(c.IVFThreshold/2) {
		return MethodIVFFlat
	}
	if rows >= int64(c.IVFThreshold) && ivfSampleable(rows, tableBlocks) {
		return MethodIVFFlat
	}
	return MethodHNSW
}

// graph is the HNSW build parameters (m, ef_construction) of an owner of rows vectors.
func (c HNSWConfig) graph(rows int64) (m, efConstruction int) {
	if c.LightBelow > 0 && rows < int64(c.LightBelow) {
		return min(c.M, LightHNSWM), min(c.EfConstruction, LightHNSWEfConstruction)
	}
	return c.M, c.EfConstruction
}

// ivfSampleable reports whether pgvector's k-means would get at least
// minIVFSamplesPerList samples a list of an owner of rows vectors in a table of
// tableBlocks blocks: it samples 50 blocks a list and keeps the owner's rows among them,
// about 50 × rows / tableBlocks a list (at most 50).
func ivfSampleable(rows, tableBlocks int64) bool {
	return tableBlocks <= 0 || min(50, 50*rows/tableBlocks) >= minIVFSamplesPerList
}

// ivfWorkMem is the maintenance_work_mem in MB an IVFFlat build of lists lists over
// dims dimensions needs (pgvector's k-means: the samples, at least 10,000, and the
// centres as full vectors, a bound for each sample and list, the distances between
// centres), with a quarter over and 64 MB besides.
func ivfWorkMem(lists, dims int) int64 {
	l, d := int64(lists), int64(dims)
	samples := max(50*l, 10_000)
	bytes := (samples+2*l)*(8+4*d) + 4*samples*l + 4*l*l
	return 64 + (bytes*5/4)>>20
}

// ivfLists and ivfProbes are an IVFFlat index's lists for an owner of rows vectors,
// and the lists a search of it reads.
func (c HNSWConfig) ivfLists(rows int64) int {
	return int(max(1, min(rows/int64(c.IVFListRows), maxIVFLists)))
}

// fewestIVFProbes is how few lists the maintenance pass may lower an IVFFlat index's
// probes to while its sample still reaches the recall target (tuneIndexReads): none
// when the probes were configured (IVFProbes), which are kept or raised, never lowered.
func (c HNSWConfig) fewestIVFProbes() int {
	if c.IVFProbes > 0 {
		return 0
	}
	return minIVFProbes
}

func (c HNSWConfig) ivfProbes(lists int) int {
	if c.IVFProbes > 0 {
		return min(c.IVFProbes, lists)
	}
	return min(lists, max(DefaultIVFMinProbes, (lists+DefaultIVFProbeDivisor-1)/DefaultIVFProbeDivisor))
}

// HNSWOwnerIndex is one owner's index as the registry records it.
type HNSWOwnerIndex struct {
	Tenant   string `json:"tenant"`
	Model    string `json:"model"`
	UserID   string `json:"user_id"` // "" is the tenant's global scope
	Dims     int    `json:"dims"`
	Name     string `json:"index"`
	State    string `json:"state"`               // building, ready
	Rows     int64  `json:"rows_at_build"`       // the owner's vectors when the build started
	Method   string `json:"method"`              // MethodHNSW or MethodIVFFlat
	EfSearch int    `json:"ef_search,omitempty"` // HNSW
	Lists    int    `json:"lists,omitempty"`     // IVFFlat, fixed at build
	Probes   int    `json:"probes,omitempty"`    // IVFFlat: lists a search reads
	// Recall is the share of the exact top 10 the index found for the maintenance
	// pass's sample queries, read as a search reads it (index_recall.go); measured
	// is false until a pass has measured it.
	Recall   float64 `json:"recall,omitempty"`
	measured bool
	// BuildSeconds is how long MaintainHNSW took to build it, and M and EfConstruction
	// its HNSW graph's parameters (in its report only).
	BuildSeconds   float64 `json:"build_seconds,omitempty"`
	M              int     `json:"m,omitempty"`
	EfConstruction int     `json:"ef_construction,omitempty"`
}

// Reads says how a search reads the index: "ef_search 400", "40 of 2000 lists".
func (ix HNSWOwnerIndex) Reads() string {
	if ix.Method == MethodIVFFlat {
		return fmt.Sprintf("%d of %d lists", ix.Probes, ix.Lists)
	}
	return fmt.Sprintf("ef_search %d", ix.EfSearch)
}

// RecallText is the measured recall, or "-" when it was not measured.
func (ix HNSWOwnerIndex) RecallText() string {
	if !ix.measured {
		return "-"
	}
	return fmt.Sprintf("%.3f", ix.Recall)
}

// hnswIndexName names an owner's index by a hash, so catalog names carry no tenant
// or user id and fit PostgreSQL's 63 characters whatever the ids. An IVFFlat index's
// name also hashes its lists, so the index that replaces it when the owner has grown
// has a name of its own while both exist.
func hnswIndexName(tenant, model, userID string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + model + "\x00" + userID))
	return "engram_hnsw_" + hex.EncodeToString(h[:8])
}

// hnswGraphIndexName is hnswIndexName for a graph of other build parameters than the
// defaults (a lighter one), so the index that replaces it when the owner grows past
// HNSWConfig.LightBelow has a name of its own while both exist; the defaults keep the
// name indexes had before graphs differed.
func hnswGraphIndexName(tenant, model, userID string, m, efConstruction int) string {
	if m == DefaultHNSWM && efConstruction == DefaultHNSWEfConstruction {
		return hnswIndexName(tenant, model, userID)
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00hnsw\x00%d\x00%d", tenant, model, userID, m, efConstruction)))
	return "engram_hnsw_" + hex.EncodeToString(h[:8])
}

func ivfIndexName(tenant, model, userID string, lists int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00ivfflat-halfvec\x00%d", tenant, model, userID, lists)))
	return "engram_ivf_" + hex.EncodeToString(h[:8])
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

// hnswScanSQL sets the transaction up for a statement that reads an owner's HNSW
// index ($1: hnsw.ef_search), ivfScanSQL for one that reads its IVFFlat index ($1:
// ivfflat.probes), and hnswScanDoneSQL restores the planner for the statements
// after it (plannerRestoreSQL). Iterative scans keep reading the index (more of the
// graph, more lists) until enough rows pass the statement's filters; relaxed order is
// re-sorted by the exact distance. The statement names the owner by literals
// (ownerIndexPredicate), so its generic plan reads the index: it is prepared once a
// connection, owner and shape of filters (the limit is a parameter), not planned
// afresh for each search (2.3 ms of a 100,000-memory owner's vector side when the
// owner was a parameter and only a custom plan could use the index). No sort: the
// planner would otherwise sort a mid-sized owner's exact distances (cheap by its
// estimate, not by the measurement) and ignore the index.
const (
	ownerScanPlannerSQL = plannerSaveSQL + `, set_config('enable_sort', 'off', true)`
	hnswScanSQL         = `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true), ` +
		ownerScanPlannerSQL
	ivfScanSQL = `SELECT set_config('ivfflat.iterative_scan', 'relaxed_order', true), set_config('ivfflat.probes', $1, true), ` +
		ownerScanPlannerSQL
	hnswScanDoneSQL = plannerRestoreSQL
)

// scanSQL is the statement and argument that set a read of the index up: a search's
// (resolve false) or the resolver's.
func (ix *HNSWOwnerIndex) scanSQL(resolve bool) (string, string) {
	if ix.Method == MethodIVFFlat {
		return ivfScanSQL, fmt.Sprint(ix.Probes)
	}
	if resolve {
		return hnswScanSQL, fmt.Sprint(ix.ResolveEfSearch())
	}
	return hnswScanSQL, fmt.Sprint(ix.EfSearch)
}

// useHNSW is the search's hook (memory/search.go): it points q at the owner's index
// when it has a ready one and sets the scan up for the next statement; done restores
// the transaction's planner settings, so later statements plan as before.
func (t *Tx) useHNSW(ctx context.Context, q *MemorySearch) (done func(), err error) {
	ix, err := t.hnswIndexFor(ctx, *q)
	if err != nil || ix == nil {
		return func() {}, err
	}
	sql, arg := ix.scanSQL(false)
	if _, err := t.tx.Exec(ctx, sql, arg); err != nil {
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
func (ix *HNSWOwnerIndex) hnswDistsCTEs(modelArg, vecArg, ownerArg string, where []string, limit string) []string {
	return []string{`edist AS MATERIALIZED (` + ix.hnswNearestSQL(modelArg, vecArg, ownerArg, strings.Join(where, " AND "), limit) + `)`,
		`dists AS (SELECT id, dist FROM edist)`}
}

// hnswNearestSQL selects id and exact dist of the owner's limit (an SQL expression)
// nearest vectors through its partial index, filter (a condition on memories m)
// applied inside the index scan: the search's one place (vectorDistancesSQL) that
// picks how an indexed owner's nearest vectors are found, and the resolver's. The
// owner and dimension conditions repeat the index's predicate, which the planner must
// see implied. The index still searches ef_search candidates (its recall) and returns
// them nearest first, so taking only limit of them keeps the same nearest while the
// filter's lookups and exact distances are paid for limit rows, not ef_search (400
// lookups were 3.5 of a 100,000-memory owner's 16 ms). An IVFFlat index holds the
// vectors in half precision (half the pages a probe reads): it orders twice limit by
// that distance, and the exact distance picks limit of them.
func (ix *HNSWOwnerIndex) hnswNearestSQL(modelArg, vecArg, ownerArg, filter, limit string) string {
	// Each vector's memory is checked by primary key as the index yields it
	// (lookupSQL).
	from := `
	FROM memory_embeddings e CROSS JOIN ` + lookupSQL("1", "memories", "m", "m.tenant = $1 AND m.id = e.memory_id AND "+filter) + `
	WHERE e.tenant = $1 AND e.model = ` + modelArg + ` AND e.user_id = ` + ownerArg + `
	  AND ` + ownerIndexPredicate("e.", ix.Tenant, ix.Model, ix.UserID, ix.Dims)
	if ix.Method == MethodIVFFlat {
		return `SELECT id, dist FROM (SELECT e.memory_id AS id, (e.embedding <=> ` + vecArg + `) AS dist` + from + `
	ORDER BY ` + ivfOrderExpr(ix.Dims, vecArg) + ` LIMIT 2 * (` + limit + `)) ivf ORDER BY dist LIMIT ` + limit
	}
	expr := fmt.Sprintf("(e.embedding::vector(%d) <=> %s)", ix.Dims, vecArg)
	return `SELECT e.memory_id AS id, ` + expr + ` AS dist` + from + `
	ORDER BY ` + expr + ` LIMIT ` + limit
}

// ivfOrderExpr is the IVFFlat index's expression (buildHNSW) as a distance to vecArg.
func ivfOrderExpr(dims int, vecArg string) string {
	return fmt.Sprintf("(e.embedding::halfvec(%d) <=> %s::halfvec(%d))", dims, vecArg, dims)
}

// OwnerIndexed reports whether the vector side of q reads the owner's own HNSW index
// (a very large owner; useHNSW), so a caller can run that side on its own.
func (t *Tx) OwnerIndexed(ctx context.Context, q MemorySearch) (bool, error) {
	ix, err := t.hnswIndexFor(ctx, q)
	return ix != nil, err
}

// ownerIndexPredicate is the predicate of an owner's partial index (buildHNSW), on
// columns of memory_embeddings prefixed by alias ("" or "e."), the owner's values as
// literals: the index is built with it, and a statement that reads the index repeats
// it, because a plan can use a partial index only where it sees the predicate implied
// and a generic plan sees parameters as unknown. Such a statement keeps its
// parameters beside it, so a stale registry entry finds no rows rather than another
// owner's. The dimension keeps the index's cast from failing.
func ownerIndexPredicate(alias, tenant, model, user string, dims int) string {
	return fmt.Sprintf("%[1]stenant = %[2]s AND %[1]smodel = %[3]s AND %[1]suser_id = %[4]s AND %[1]sdims = %[5]d",
		alias, sqlLiteral(tenant), sqlLiteral(model), sqlLiteral(user), dims)
}

// sqlLiteral quotes s as an escape string literal, which reads the same whatever
// standard_conforming_strings says.
func sqlLiteral(s string) string {
	return "E'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
}
