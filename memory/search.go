package memory

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"
)

// MemorySearch is the candidate query of a memory search: who, which memories, and
// the sides (keyword, recency, vector) that rank them. The retriever fuses the ranks.
type MemorySearch struct {
	Query string // the search text, prepared with SearchText here
	// Scope is whose memories: ScopeGlobal, ScopeAgent (AgentID's), anything else the
	// user's (narrowed to AgentID's and unscoped ones, and to SessionID's session
	// memories, when given).
	Scope     Scope
	UserID    string
	AgentID   string
	SessionID string
	Types     []string // empty: every type
	// Categories and Statuses filter the memory (or, with AsOf, the version valid then).
	Categories []string
	Statuses   []string
	// Metadata keeps memories whose metadata contains these keys with equal values.
	Metadata map[string]any
	Now      time.Time // expiry, and with AsOf the moment read from history
	// From and To bound valid_from, or updated_at (recorded_at of versions) when
	// ByUpdatedAt.
	From, To    *time.Time
	ByUpdatedAt bool
	// AsOf reads each memory's version valid at Now instead of its current state.
	AsOf *time.Time
	// KeywordOnly drops the recency side (a keyword-mode search also passes no
	// Vector); VectorOnly takes the candidates of the vector side only (each still
	// with its keyword and recency ranks).
	KeywordOnly, VectorOnly bool
	// VectorAlone is the vector side's statement alone: its candidates without
	// keyword or recency ranks, for a caller that runs those sides apart
	// (MemoryCandidates of both then merged by memory).
	VectorAlone bool
	Limit       int // candidates per ranked side (keyword, vector)
	RecentLimit int // candidates of the recency side
	// Vector is the query's embedding under Model; nil leaves the vector side out.
	// MaxDistance is the largest cosine distance the vector side keeps.
	Vector      []float32
	Model       string
	MaxDistance float64
	// Stats are the owner's BM25 collection statistics (OwnerTextStats), typically
	// cached by the caller; nil counts them in the query, over every row of the owner
	// that passes the filters, which costs a pass over the owner's rows.
	Stats *TextStats

	hnsw *HNSWOwnerIndex // the owner's approximate index, set by useHNSW (memory/hnsw_index.go)
}

// TextStats are the BM25 collection statistics of one owner: how many documents
// (rows with at least one lexeme) and their mean length in lexemes.
type TextStats struct {
	N      float64
	AvgLen float64
	// Frequent are terms the owner's earlier searches found frequent, with their
	// document frequencies (bm25Spec: the keyword side prunes rows holding only them).
	Frequent []TermDF
}

// frequentArgs binds the frequent terms of stats on spec, if it has any.
func (s *TextStats) frequentArgs(spec *bm25Spec, arg func(any) string) {
	if s == nil || len(s.Frequent) == 0 {
		return
	}
	terms, dfs := make([]string, len(s.Frequent)), make([]float64, len(s.Frequent))
	for i, f := range s.Frequent {
		terms[i], dfs[i] = f.Term, f.DF
	}
	spec.frequent, spec.frequentDF = arg(terms), arg(dfs)
	spec.pairs = s.N >= LargeOwnerDocs
}

// MemoryHit is one memory candidate with its rank on each side (0 when that side did
// not rank it).
type MemoryHit struct {
	Memory      Memory
	VectorRank  int64
	Distance    *float64 // cosine distance to the query vector, nil when not ranked by it
	KeywordRank int64
	Keyword     float64 // Okapi BM25 score of the search text (bm25Spec), 0 when no term matched
	RecentRank  int64
	// Vector is the memory's vector in the search's Model (nil without one, or when
	// reading history).
	Vector []float32
}

// memoryCandidatesSQL builds the candidate query: three ranked sides (keyword, recency,
// vector), each bounded to its top candidates, fused by the caller. Every filter
// (owner, status, expiry, time, types, categories) is applied inside each side before
// it ranks, so ranking never sees another tenant's or owner's rows, and no side reads
// more of the owner than it needs: the keyword side only the owner's rows holding a
// query term (memories_owner_tsv), the recency side the newest rows (memories_owner),
// the vector side the owner's vectors (the exact scan, vectorDistancesSQL). Reading
// history (AsOf) materialises the owner's versions first (historyCandidatesSQL).
func memoryCandidatesSQL(tenant string, q MemorySearch) (string, []any) {
	if q.AsOf != nil {
		return historyCandidatesSQL(tenant, q)
	}
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	text := "NULL::text" // VectorAlone has no keyword side
	if !q.VectorAlone {
		text = arg(SearchText(q.Query))
	}
	// An owner of half TextIndexMinDocs memories and more (an owner keeps its index
	// down to half) is named by literals: its plan,
	// made once a connection for that owner, can read its own full-text index
	// (text_index.go), and is made for its size (as a parameter, the owner looks like
	// one of average size, and a bitmap of its rows in memories_owner, a million
	// entries, looked selective enough to AND with the text index: 60–70 ms).
	large := q.Stats != nil && q.Stats.N >= TextIndexMinDocs/2 && q.Scope != ScopeAgent
	tenantSQL, user := "$1", func(id string) string { return arg(id) }
	if large {
		tenantSQL, user = sqlLiteral(tenant), sqlLiteral
	}
	where := memoryFilters(q, arg, user)
	where = append(where, "m.status = ANY("+arg(q.Statuses)+"::text[])")
	if len(q.Categories) > 0 {
		where = append(where, "m.category = ANY("+arg(q.Categories)+"::text[])")
	}
	col := "m.valid_from"
	if q.ByUpdatedAt {
		col = "m.updated_at"
	}
	if q.From != nil {
		where = append(where, col+" >= "+arg(*q.From))
	}
	if q.To != nil {
		where = append(where, col+" <= "+arg(*q.To))
	}
	filter := "m.tenant = $1 AND " + strings.Join(where, " AND ")
	// The keyword side's match reads the owner's full-text entries, not every
	// tenant's of the same user id (an agent's memories have no one owner).
	kfilter := filter
	switch {
	case q.VectorAlone || q.Scope == ScopeAgent: // no keyword side; no one owner
	case q.Scope == ScopeGlobal:
		kfilter += " AND " + ownerKeySQL("m", tenantSQL, "''")
	default:
		kfilter += " AND " + ownerKeySQL("m", tenantSQL, user(q.UserID))
	}

	limit := arg(q.Limit)
	// BM25 with the owner's statistics (bm25Spec): N and the mean length from
	// q.Stats when the caller has them, document frequencies from the matches.
	stats := `SELECT count(*) FILTER (WHERE m.tsv_len > 0)::float8 AS n,
		coalesce(avg(m.tsv_len) FILTER (WHERE m.tsv_len > 0), 0)::float8 AS avgdl FROM memories m WHERE ` + filter
	if q.Stats != nil {
		stats = `SELECT ` + arg(q.Stats.N) + `::float8 AS n, ` + arg(q.Stats.AvgLen) + `::float8 AS avgdl`
	}
	spec := bm25Spec{prefix: "k", text: text, limit: limit, order: "id",
		match: func(qc string) string {
			return `SELECT m.id, m.tsv, m.tsv_len, true AS keep FROM memories m, ` + qc + ` WHERE ` + kfilter + ` AND m.tsv @@ ` + qc + `.q`
		},
		// A large owner's last keyword pass reads its newest rows that pass the
		// filters only. Ordered as memories_list_user is (read backwards), they come
		// without a sort: with a tie order no index gives, the generic plan (made for
		// an owner of average size) read all of a large owner's rows by memories_owner
		// and sorted them, 1.8 s at 1,000,000 memories.
		window: func(qc string) string {
			return `SELECT w.id, w.tsv, w.tsv_len, true AS keep FROM (SELECT m.id, m.tsv, m.tsv_len FROM memories m WHERE ` + filter +
				fmt.Sprintf(` ORDER BY m.updated_at DESC, m.id DESC LIMIT %d) w, `, LargeOwnerWindow) + qc + ` WHERE w.tsv @@ ` + qc + `.q`
		},
		stats:   stats,
		rowByID: byID(q.Stats, "CROSS JOIN "+lookupSQL("tv.tsv", "memories", "tv", "tv.tenant = $1 AND tv.id = m.id")),
	}
	q.Stats.frequentArgs(&spec, arg)
	var ctes []string
	if !q.VectorAlone {
		// The vector side alone leaves the keyword and recency sides out altogether:
		// kfreq, joined to every row, would run the keyword side's passes anyway.
		ctes = spec.ctes()
		ctes = append(ctes,
			`rtop AS (
	SELECT m.id, row_number() OVER (ORDER BY m.updated_at DESC, m.id) AS rank
	FROM memories m WHERE `+filter+` ORDER BY m.updated_at DESC, m.id LIMIT `+arg(q.RecentLimit)+`)`)
	}
	union := "SELECT id FROM ktop UNION SELECT id FROM rtop"
	switch {
	case q.KeywordOnly:
		union = "SELECT id FROM ktop"
	case q.VectorAlone:
		union = "SELECT NULL::uuid AS id WHERE false"
	case q.VectorOnly:
		union = "SELECT id FROM ktop WHERE false"
	}
	vjoin := "LEFT JOIN (SELECT NULL::uuid AS id, NULL::bigint AS rank, NULL::float8 AS dist) vtop ON false"
	// Each candidate's vector in the model comes with it (MemoryHit.Vector), for the
	// caller's duplicate test and vector component, instead of a read of its own.
	vcol, ejoin := "NULL::vector", ""
	if q.Model != "" {
		vcol = "ev.embedding"
		ejoin = "\nLEFT JOIN " + lookupSQL("ev.embedding", "memory_embeddings", "ev",
			"ev.tenant = $1 AND ev.memory_id = c.id AND ev.model = "+arg(q.Model)) + " ON true"
	}
	if q.Vector != nil {
		ctes = append(ctes, `dists AS MATERIALIZED (`+vectorDistancesSQL(q, filter, arg)+`)`,
			`vtop AS (
	SELECT id, dist, row_number() OVER (ORDER BY dist, id) AS rank FROM (
		`+nearestKeptSQL("dists", "dist <= "+arg(q.MaxDistance)+"::float8", filter, limit)+`) x)`)
		if q.VectorOnly || q.VectorAlone {
			union = "SELECT id FROM vtop"
		} else {
			union = "SELECT id FROM vtop UNION " + union
		}
		vjoin = "LEFT JOIN vtop ON vtop.id = c.id"
	}
	ctes = append(ctes, "cand AS ("+union+")")
	kcols := "ktop.rank, ktop.kr::float8, rtop.rank, kfreq.terms, kfreq.dfs"
	kjoins := `
LEFT JOIN ktop ON ktop.id = c.id
LEFT JOIN rtop ON rtop.id = c.id
LEFT JOIN kfreq ON true`
	if q.VectorAlone {
		kcols, kjoins = "NULL::bigint, NULL::float8, NULL::bigint, NULL::text[], NULL::float8[]", ""
	}
	return "WITH " + strings.Join(ctes, ",\n") + `
SELECT ` + memoryColumnsAs("m") + `, vtop.rank, vtop.dist, ` + kcols + `, ` + vcol + `
FROM cand c
` + candidateRowsSQL + `
` + vjoin + kjoins + ejoin, args
}

// lookupSQL is a LATERAL subquery selecting cols of table (as alias) where cond holds:
// the form of every join that reads rows by key for rows found before it (a search's
// candidates, the resolver's nearest vectors). A generic plan takes a LIMIT $n to keep
// a tenth of its input, so it may expect 100,000 candidates of a large owner where
// there are 50; a plain join then hashed every memory of the tenant (1.12 million
// rows, 1.8 s, seen after the statistics changed). OFFSET 0 keeps the subquery whole,
// so it is a lookup per outer row whatever the estimate.
func lookupSQL(cols, table, alias, cond string) string {
	return "LATERAL (SELECT " + cols + " FROM " + table + " " + alias + " WHERE " + cond + " OFFSET 0) " + alias
}

// candidateRowsSQL reads the memory m of each candidate id c.id by its primary key.
var candidateRowsSQL = "CROSS JOIN " + lookupSQL("*", "memories", "m", "m.tenant = $1 AND m.id = c.id")

// nearestKeptSQL selects id and dist of the rows of dists (a relation of id and dist)
// meeting cond, nearest first, that pass filter (a condition on memories m), at most
// limit: each is checked against the filters by primary key until limit pass, so a
// filter costs a few lookups, not a read of the owner's rows. OFFSET 0 keeps the
// sorted list a subquery of its own and the check a scalar subquery, so neither is
// flattened into a join that would check every vector before the limit.
func nearestKeptSQL(dists, cond, filter, limit string) string {
	return `SELECT d.id, d.dist FROM (SELECT id, dist FROM ` + dists + ` WHERE ` + cond + ` ORDER BY dist, id OFFSET 0) d
		WHERE (SELECT true FROM memories m WHERE ` + filter + ` AND m.id = d.id)
		ORDER BY d.dist, d.id LIMIT ` + limit
}

// vectorDistancesSQL selects id and dist (cosine distance to q.Vector under q.Model)
// of the vectors the vector side ranks: the owner's, in one range of the (tenant,
// model, user_id) index, scanned exactly (FACTS.md: the fast and exact default at
// owner sizes). The caller orders them and applies filter (a condition on memories m)
// before its limit. This is the one place that picks how the owner's nearest vectors
// are found, so an approximate index for very large owners hooks in here.
func vectorDistancesSQL(q MemorySearch, filter string, arg func(any) string) string {
	vec, model := arg(pgvector.NewVector(q.Vector)), arg(q.Model)
	switch q.Scope {
	case ScopeAgent:
		// Agent memories may belong to any user: look their vectors up one by one.
		return `SELECT e.memory_id AS id, e.embedding <=> ` + vec + ` AS dist
	FROM memories m JOIN memory_embeddings e ON e.tenant = $1 AND e.memory_id = m.id AND e.model = ` + model + `
	WHERE ` + filter
	case ScopeGlobal:
		if q.hnsw != nil { // a very large owner: its own HNSW index (memory/hnsw_index.go)
			return q.hnsw.hnswNearestSQL(model, vec, "''", filter, arg(q.Limit))
		}
		return `SELECT e.memory_id AS id, e.embedding <=> ` + vec + ` AS dist
	FROM memory_embeddings e WHERE e.tenant = $1 AND e.model = ` + model + ` AND e.user_id = ''`
	default:
		owner := arg(q.UserID)
		if q.hnsw != nil {
			return q.hnsw.hnswNearestSQL(model, vec, owner, filter, arg(q.Limit))
		}
		return `SELECT e.memory_id AS id, e.embedding <=> ` + vec + ` AS dist
	FROM memory_embeddings e WHERE e.tenant = $1 AND e.model = ` + model + ` AND e.user_id = ` + owner
	}
}

// ownerKeySQL lets a statement read one owner's full-text entries (memories_owner_tsv,
// turns_owner_tsv; migration 0019): the owner_key of alias's rows for tenant and user
// (SQL expressions), computed as the generated column computes it. Statements keep
// their tenant and user conditions beside it: two owners' hashes may collide.
func ownerKeySQL(alias, tenant, user string) string {
	return alias + ".owner_key = hashtextextended(" + tenant + "::text || '/' || " + user + "::text, 0)"
}

// memoryFilters are the conditions on memories m of a search's owner, types, metadata
// and expiry, shared by the current and the history query; user writes the user id
// (a parameter, or a literal for a large owner).
func memoryFilters(q MemorySearch, arg func(any) string, user func(string) string) []string {
	var where []string
	switch q.Scope {
	case ScopeGlobal:
		where = append(where, "m.user_id = ''", "m.scope = 'global'")
	case ScopeAgent:
		where = append(where, "m.scope = 'agent'", "m.agent_id = "+arg(q.AgentID))
	default:
		where = append(where, "m.user_id = "+user(q.UserID))
		if q.AgentID != "" {
			where = append(where, "m.agent_id IN ('', "+arg(q.AgentID)+")")
		}
		if q.SessionID != "" {
			where = append(where, "(m.scope <> 'session' OR m.session_id = "+arg(q.SessionID)+")")
		}
	}
	if len(q.Types) > 0 {
		where = append(where, "m.type = ANY("+arg(q.Types)+"::text[])")
	}
	where = append(where, "(m.expire_at IS NULL OR m.expire_at > "+arg(q.Now)+")")
	if md, _ := MetadataContains("m.metadata", q.Metadata, arg); md != "" { // MemoryCandidates checked the encoding
		where = append(where, md)
	}
	return where
}

// historyCandidatesSQL is the candidate query of a search as of a past time: the
// owner's versions valid then are materialised (owned) and every side ranks those,
// with the statistics of that set. History reads are rare, and a version's text is
// not indexed, so this query does scale with the owner.
func historyCandidatesSQL(tenant string, q MemorySearch) (string, []any) {
	args := []any{tenant, SearchText(q.Query)}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := memoryFilters(q, arg, func(id string) string { return arg(id) })
	now := arg(q.Now)
	var vwhere []string
	vwhere = append(vwhere, "(CASE WHEN v.status = 'superseded' THEN 'active' ELSE v.status END) = ANY("+arg(q.Statuses)+"::text[])")
	if len(q.Categories) > 0 {
		vwhere = append(vwhere, "v.category = ANY("+arg(q.Categories)+"::text[])")
	}
	col := "v.valid_from"
	if q.ByUpdatedAt {
		col = "v.recorded_at"
	}
	if q.From != nil {
		vwhere = append(vwhere, col+" >= "+arg(*q.From))
	}
	if q.To != nil {
		vwhere = append(vwhere, col+" <= "+arg(*q.To))
	}
	owned := `owned AS MATERIALIZED (
	SELECT * FROM (
		SELECT DISTINCT ON (v.memory_id) v.memory_id AS id, v.version, v.content, v.status, v.category,
			coalesce(v.key, '') AS key, v.importance::float8 AS importance, v.confidence::float8 AS confidence,
			v.valid_from, v.valid_to, v.recorded_at AS updated_at,
			m.tsv || to_tsvector('english', v.content) AS tsv,
			length(m.tsv || to_tsvector('english', v.content)) AS tsv_len
		FROM memories m
		CROSS JOIN ` + lookupSQL("*", "memory_versions", "v", "v.tenant = m.tenant AND v.memory_id = m.id") + `
		WHERE m.tenant = $1 AND ` + strings.Join(where, " AND ") + `
		  AND v.valid_from <= ` + now + ` AND (v.valid_to IS NULL OR v.valid_to > ` + now + `)
		ORDER BY v.memory_id, v.version DESC) v
	WHERE ` + strings.Join(vwhere, " AND ") + `)`

	limit := arg(q.Limit)
	ctes := []string{owned}
	ctes = append(ctes, bm25Spec{prefix: "k", text: "$2", limit: limit, order: "id",
		match: func(qc string) string {
			return `SELECT o.id, o.tsv, o.tsv_len, true AS keep FROM owned o, ` + qc + ` WHERE o.tsv @@ ` + qc + `.q`
		},
		stats: `SELECT count(*) FILTER (WHERE tsv_len > 0)::float8 AS n,
		coalesce(avg(tsv_len) FILTER (WHERE tsv_len > 0), 0)::float8 AS avgdl FROM owned`,
	}.ctes()...)
	ctes = append(ctes,
		`rtop AS (
	SELECT o.id, row_number() OVER (ORDER BY o.updated_at DESC, o.id) AS rank
	FROM owned o ORDER BY o.updated_at DESC, o.id LIMIT `+arg(q.RecentLimit)+`)`)
	union := "SELECT id FROM ktop UNION SELECT id FROM rtop"
	switch {
	case q.KeywordOnly:
		union = "SELECT id FROM ktop"
	case q.VectorOnly:
		union = "SELECT id FROM ktop WHERE false"
	}
	vjoin := "LEFT JOIN (SELECT NULL::uuid AS id, NULL::bigint AS rank, NULL::float8 AS dist) vtop ON false"
	if q.Vector != nil {
		modelArg := arg(q.Model)
		vecArg := arg(pgvector.NewVector(q.Vector))
		ctes = append(ctes, `dists AS MATERIALIZED (
	SELECT e.memory_id AS id, e.embedding <=> `+vecArg+` AS dist
	FROM owned o CROSS JOIN `+lookupSQL("e.memory_id, e.embedding", "memory_embeddings", "e",
			"e.tenant = $1 AND e.memory_id = o.id AND e.model = "+modelArg)+`)`,
			`vtop AS (
	SELECT id, dist, row_number() OVER (ORDER BY dist, id) AS rank FROM dists
	WHERE dist <= `+arg(q.MaxDistance)+`::float8 ORDER BY dist, id LIMIT `+limit+`)`)
		if q.VectorOnly {
			union = "SELECT id FROM vtop"
		} else {
			union = "SELECT id FROM vtop UNION " + union
		}
		vjoin = "LEFT JOIN vtop ON vtop.id = c.id"
	}
	ctes = append(ctes, "cand AS ("+union+")")
	return "WITH " + strings.Join(ctes, ",\n") + `
SELECT ` + memoryColumnsAs("m") + `, vtop.rank, vtop.dist, ktop.rank, ktop.kr::float8, rtop.rank, NULL::text[], NULL::float8[],
	o.version, o.content, o.status, o.category, o.key, o.importance, o.confidence, o.valid_from, o.valid_to
FROM cand c
` + candidateRowsSQL + `
` + vjoin + `
LEFT JOIN ktop ON ktop.id = c.id
LEFT JOIN rtop ON rtop.id = c.id
JOIN owned o ON o.id = c.id`, args
}

// MemoryCandidates runs the candidate query of a memory search. With AsOf each
// memory carries the version valid then (a superseded one reads as active: it was the
// truth at that time).
//
// It also returns the frequent terms its keyword side counted over the owner's current
// memories (bm25Spec), for the caller to pass back in later searches' Stats; nil when
// the side did not count any (none frequent, pruned, or reading history, whose query
// reports none).
func (t *Tx) MemoryCandidates(ctx context.Context, q MemorySearch) ([]MemoryHit, []TermDF, error) {
	if _, err := MetadataContains("", q.Metadata, func(any) string { return "" }); err != nil {
		return nil, nil, err
	}
	done, err := t.useHNSW(ctx, &q)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	sql, args := memoryCandidatesSQL(t.tenant, q)
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("querying memory candidates: %w", err)
	}
	defer rows.Close()
	var out []MemoryHit
	var freq frequentColumns
	for rows.Next() {
		var vRank, kRank, rRank *int64
		var dist, kr *float64
		var ver struct {
			version               *int
			content, status, cat  *string
			key                   *string
			importance, confidenc *float64
			validFrom, validTo    *time.Time
		}
		extra := []any{&vRank, &dist, &kRank, &kr, &rRank, &freq.terms, &freq.dfs}
		var vec *pgvector.Vector
		if q.AsOf == nil {
			extra = append(extra, &vec)
		}
		if q.AsOf != nil {
			extra = append(extra, &ver.version, &ver.content, &ver.status, &ver.cat, &ver.key,
				&ver.importance, &ver.confidenc, &ver.validFrom, &ver.validTo)
		}
		m, err := scanMemory(rows, t.tenant, extra...)
		if err != nil {
			return nil, nil, fmt.Errorf("reading memory candidates: %w", err)
		}
		if q.AsOf != nil {
			m.Version, m.Content, m.Status, m.Category = *ver.version, *ver.content, Status(*ver.status), Category(*ver.cat)
			m.Key, m.Importance, m.Confidence = *ver.key, *ver.importance, *ver.confidenc
			m.ValidFrom, m.ValidTo = *ver.validFrom, ver.validTo
			if m.Status == StatusSuperseded {
				m.Status = StatusActive // it was the truth at as_of
			}
		}
		h := MemoryHit{Memory: m, Distance: dist}
		if vec != nil {
			h.Vector = vec.Slice()
		}
		if vRank != nil {
			h.VectorRank = *vRank
		}
		if kRank != nil {
			h.KeywordRank = *kRank
		}
		if kr != nil {
			h.Keyword = *kr
		}
		if rRank != nil {
			h.RecentRank = *rRank
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading memory candidates: %w", err)
	}
	return out, freq.list(), nil
}

// frequentColumns scans the kfreq columns a candidate query repeats on every row.
type frequentColumns struct {
	terms []string
	dfs   []float64
}

func (f frequentColumns) list() []TermDF {
	if len(f.terms) == 0 || len(f.terms) != len(f.dfs) {
		return nil
	}
	out := make([]TermDF, len(f.terms))
	for i := range f.terms {
		out[i] = TermDF{Term: f.terms[i], DF: f.dfs[i]}
	}
	return out
}

// ExplainMemoryCandidates returns the plan of the candidate query, one line a row,
// so a benchmark can check which indexes it uses.
func (t *Tx) ExplainMemoryCandidates(ctx context.Context, q MemorySearch) ([]string, error) {
	done, err := t.useHNSW(ctx, &q)
	if err != nil {
		return nil, err
	}
	defer done()
	sql, args := memoryCandidatesSQL(t.tenant, q)
	return t.explain(ctx, "EXPLAIN ", sql, args, "the memory candidate query")
}

// TurnSearch is the candidate query of the turns layer: a user's stored turns, ranked
// by keyword and, when Vector is set, by distance to it under Model.
type TurnSearch struct {
	Query     string // the search text, prepared with SearchText here
	UserID    string
	SessionID string // empty: every session
	AgentID   string // non-empty: that agent's turns and unscoped ones
	// Metadata keeps turns whose metadata contains these keys with equal values.
	Metadata map[string]any
	// From and To bound occurred_at; AsOf leaves out turns that occurred after it.
	From, To, AsOf *time.Time
	Keyword        bool // run the keyword side
	Vector         []float32
	Model          string
	MaxDistance    float64 // the largest cosine distance the vector side keeps
	Limit          int     // candidates per side
	// Neighbours is the share of a turn's keyword score that each adjacent turn of
	// its session (the one before and the one after) receives; 0 ranks turns on their
	// own text only. See turnCandidatesSQL.
	Neighbours float64
	// Stats are the user's BM25 statistics over turns (TurnTextStats), typically
	// cached by the caller; nil counts them in the query.
	Stats *TextStats
	// UserOnly keeps the user's own turns; OtherThanSession leaves one session out;
	// Unextracted keeps turns no memory came from: no lineage link names them, and no
	// memory that did was deleted on request (turns.forgotten).
	UserOnly         bool
	OtherThanSession string
	Unextracted      bool
}

// TurnHit is one turn candidate with its rank on each side (0 when that side did not
// rank it).
type TurnHit struct {
	TurnID      string
	SessionID   string
	Role        Role
	Content     string
	OccurredAt  time.Time
	KeywordRank int64
	Keyword     float64 // Okapi BM25 score of the search text (bm25Spec)
	VectorRank  int64
	Distance    *float64 // cosine distance to the query vector, when the turn has one
	Metadata    map[string]any
}

// TurnCandidates runs the candidate query of the turns layer; with neither side asked
// for it returns nothing.
//
// It also returns the frequent terms its keyword side counted over the user's turns
// (bm25Spec), for the caller to pass back in later searches' Stats.
func (t *Tx) TurnCandidates(ctx context.Context, q TurnSearch) ([]TurnHit, []TermDF, error) {
	if !q.Keyword && q.Vector == nil {
		return nil, nil, nil
	}
	if _, err := MetadataContains("", q.Metadata, func(any) string { return "" }); err != nil {
		return nil, nil, err
	}
	sql, args := turnCandidatesSQL(t.tenant, q)
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("searching turns: %w", err)
	}
	defer rows.Close()
	var out []TurnHit
	var freq frequentColumns
	for rows.Next() {
		var h TurnHit
		var role string
		var kRank, vRank *int64
		var kr *float64
		if err := rows.Scan(&h.TurnID, &h.SessionID, &role, &h.Content, &h.OccurredAt, &kRank, &kr, &vRank, &h.Distance, &h.Metadata,
			&freq.terms, &freq.dfs); err != nil {
			return nil, nil, fmt.Errorf("reading turns: %w", err)
		}
		h.Role = Role(role)
		if kRank != nil {
			h.KeywordRank = *kRank
			h.Keyword = *kr
		}
		if vRank != nil {
			h.VectorRank = *vRank
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading turns: %w", err)
	}
	return out, freq.list(), nil
}

// turnCandidatesSQL builds the turns query: the keyword side and, when q.Vector is
// set, the vector side, fused by the caller. At least one side must be asked for.
func turnCandidatesSQL(tenant string, q TurnSearch) (string, []any) {
	keyword, vector := q.Keyword, q.Vector != nil
	args := []any{tenant, q.UserID}
	where := []string{"t.tenant = $1", "t.user_id = $2", "t.content IS NOT NULL"}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.SessionID != "" {
		where = append(where, "t.session_id = "+arg(q.SessionID))
	}
	if q.AgentID != "" {
		where = append(where, "t.agent_id IN ('', "+arg(q.AgentID)+")")
	}
	if q.From != nil {
		where = append(where, "t.occurred_at >= "+arg(*q.From))
	}
	if q.To != nil {
		where = append(where, "t.occurred_at <= "+arg(*q.To))
	}
	if q.AsOf != nil {
		where = append(where, "t.occurred_at <= "+arg(*q.AsOf))
	}
	if md, _ := MetadataContains("t.metadata", q.Metadata, arg); md != "" { // TurnCandidates checked the encoding
		where = append(where, md)
	}
	if q.UserOnly {
		where = append(where, "t.role = 'user'")
	}
	if q.OtherThanSession != "" {
		where = append(where, "t.session_id <> "+arg(q.OtherThanSession))
	}
	if q.Unextracted {
		where = append(where, "NOT t.forgotten", `NOT EXISTS (SELECT 1 FROM memory_lineage l
		WHERE l.tenant = $1 AND l.source_kind = 'turn' AND l.source_id = t.turn_id)`)
	}
	filter := strings.Join(where, " AND ")
	limit := arg(q.Limit)
	var ctes, sides []string
	kcols, vcols, fcols := "NULL::bigint, NULL::float8", "NULL::bigint, NULL::float8", "NULL::text[], NULL::float8[]"
	var joins string
	if keyword {
		// BM25 over the user's turns with the user's statistics: N and the mean length
		// from an index-only scan of turns_user_time (which carries tsv_len), document
		// frequencies from the user's matching turns (turns_owner_tsv). Those are the
		// user's whole log, whatever the session, agent and time filters, which only
		// decide which matches are ranked (keep). The search text is bound only when
		// the keyword side runs: PostgreSQL rejects a parameter no part of the query uses.
		turnStats := `SELECT count(*)::float8 AS n, coalesce(avg(t.tsv_len), 0)::float8 AS avgdl
	FROM turns t WHERE t.tenant = $1 AND t.user_id = $2 AND t.tsv_len > 0`
		if q.Stats != nil {
			turnStats = `SELECT ` + arg(q.Stats.N) + `::float8 AS n, ` + arg(q.Stats.AvgLen) + `::float8 AS avgdl`
		}
		spec := bm25Spec{prefix: "k", text: arg(SearchText(q.Query)), limit: limit,
			order: "occurred_at DESC, id",
			match: func(qc string) string {
				return `SELECT t.turn_id AS id, t.tsv, t.tsv_len, t.occurred_at, (` + filter + `) AS keep
	FROM turns t, ` + qc + ` WHERE t.tenant = $1 AND t.user_id = $2 AND ` + ownerKeySQL("t", "$1", "$2") + ` AND t.tsv @@ ` + qc + `.q`
			},
			window: func(qc string) string {
				return `SELECT w.* FROM (SELECT t.turn_id AS id, t.tsv, t.tsv_len, t.occurred_at, (` + filter + `) AS keep
	FROM turns t WHERE t.tenant = $1 AND t.user_id = $2` + fmt.Sprintf(` ORDER BY t.occurred_at DESC LIMIT %d) w, `, LargeOwnerWindow) +
					qc + ` WHERE w.tsv @@ ` + qc + `.q`
			},
			stats:   turnStats,
			rowByID: byID(q.Stats, "CROSS JOIN "+lookupSQL("tv.tsv", "turns", "tv", "tv.tenant = $1 AND tv.turn_id = m.id")),
		}
		q.Stats.frequentArgs(&spec, arg)
		ctes = append(ctes, spec.ctes()...)
		if q.Neighbours > 0 {
			// A reply often answers in words of its own ("yes, last Tuesday") what the
			// turn before asked in the query's words: each of the best-scoring turns
			// passes a share of its score to the turns just before and after it in its
			// session (found through turns_session), which may then rank without
			// matching a term themselves. Neighbours pass the same filters.
			nb := fmt.Sprintf("%g", q.Neighbours)
			ctes = append(ctes, `kseed AS MATERIALIZED (
	SELECT id, kr FROM kscored ORDER BY kr DESC, occurred_at DESC, id LIMIT `+limit+`)`,
				`knb AS (
	SELECT nb.turn_id AS id, s.kr * `+nb+` AS kr FROM kseed s
	CROSS JOIN `+lookupSQL("t0.session_id, t0.occurred_at, t0.seq", "turns", "t0", "t0.tenant = $1 AND t0.turn_id = s.id")+`
	CROSS JOIN LATERAL (
		(SELECT t.turn_id FROM turns t WHERE `+filter+` AND t.session_id = t0.session_id
			AND (t.occurred_at, t.seq) < (t0.occurred_at, t0.seq) ORDER BY t.occurred_at DESC, t.seq DESC LIMIT 1)
		UNION ALL
		(SELECT t.turn_id FROM turns t WHERE `+filter+` AND t.session_id = t0.session_id
			AND (t.occurred_at, t.seq) > (t0.occurred_at, t0.seq) ORDER BY t.occurred_at, t.seq LIMIT 1)) nb)`,
				`kexp AS (
	SELECT x.id, sum(x.kr) AS kr, max(t.occurred_at) AS occurred_at
	FROM (SELECT id, kr FROM kseed UNION ALL SELECT id, kr FROM knb) x
	CROSS JOIN `+lookupSQL("t.occurred_at", "turns", "t", "t.tenant = $1 AND t.turn_id = x.id")+`
	GROUP BY x.id)`,
				`ktopt AS (
	SELECT id AS turn_id, kr, row_number() OVER (ORDER BY kr DESC, occurred_at DESC, id) AS rank
	FROM kexp ORDER BY kr DESC, occurred_at DESC, id LIMIT `+limit+`)`)
		} else {
			ctes = append(ctes, `ktopt AS (SELECT id AS turn_id, kr, rank FROM ktop)`)
		}
		sides = append(sides, "SELECT turn_id FROM ktopt")
		kcols, fcols = "ktopt.rank, ktopt.kr", "kfreq.terms, kfreq.dfs"
		joins += "\nLEFT JOIN ktopt ON ktopt.turn_id = c.turn_id\nLEFT JOIN kfreq ON true"
	}
	if vector {
		// The owner's turn vectors, one range of the (tenant, model, user_id) index,
		// materialised so the planner ranks exact distances; the filters are applied
		// before ranking, as on the memory side.
		ctes = append(ctes, `edist AS MATERIALIZED (
	SELECT e.turn_id, e.embedding <=> `+arg(pgvector.NewVector(q.Vector))+` AS dist
	FROM turn_embeddings e WHERE e.tenant = $1 AND e.model = `+arg(q.Model)+` AND e.user_id = $2)`,
			`vtop AS (
	SELECT d.turn_id, d.dist, row_number() OVER (ORDER BY d.dist, d.turn_id) AS rank
	FROM edist d JOIN turns t ON t.tenant = $1 AND t.turn_id = d.turn_id
	WHERE `+filter+` AND d.dist <= `+arg(q.MaxDistance)+`::float8
	ORDER BY d.dist, d.turn_id LIMIT `+limit+`)`)
		sides = append(sides, "SELECT turn_id FROM vtop")
		// edist, not vtop: a keyword-only hit still reports its similarity.
		vcols = "vtop.rank, edist.dist"
		joins += "\nLEFT JOIN vtop ON vtop.turn_id = c.turn_id\nLEFT JOIN edist ON edist.turn_id = c.turn_id"
	}
	ctes = append(ctes, "cand AS ("+strings.Join(sides, " UNION ")+")")
	sql := "WITH " + strings.Join(ctes, ",\n") + `
SELECT t.turn_id, t.session_id, t.role, t.content, t.occurred_at, ` + kcols + `, ` + vcols + `, t.metadata, ` + fcols + `
FROM cand c
CROSS JOIN ` + lookupSQL("*", "turns", "t", "t.tenant = $1 AND t.turn_id = c.turn_id") + joins
	return sql, args
}

// MemoryVectors reads the vectors of memories ids under model; a memory without one
// is absent from the map.
func (t *Tx) MemoryVectors(ctx context.Context, model string, ids []uuid.UUID) (map[uuid.UUID][]float32, error) {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, embedding FROM memory_embeddings
		WHERE tenant = $1 AND model = $2 AND memory_id = ANY($3)`, t.tenant, model, uuidArgs(ids))
	if err != nil {
		return nil, fmt.Errorf("reading result vectors: %w", err)
	}
	defer rows.Close()
	out := map[uuid.UUID][]float32{}
	for rows.Next() {
		var id uuid.UUID
		var v pgvector.Vector
		if err := rows.Scan(&id, &v); err != nil {
			return nil, fmt.Errorf("reading result vectors: %w", err)
		}
		out[id] = v.Slice()
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading result vectors: %w", err)
	}
	return out, nil
}

// LineageSources reads the sources of memories ids, oldest link first (MemoryID, Kind
// and SourceID are set).
func (t *Tx) LineageSources(ctx context.Context, ids []uuid.UUID) ([]Lineage, error) {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, source_kind, source_id FROM memory_lineage
		WHERE tenant = $1 AND memory_id = ANY($2) ORDER BY added_at, source_id`, t.tenant, uuidArgs(ids))
	if err != nil {
		return nil, fmt.Errorf("reading lineage: %w", err)
	}
	defer rows.Close()
	var out []Lineage
	for rows.Next() {
		var l Lineage
		var kind string
		if err := rows.Scan(&l.MemoryID, &kind, &l.SourceID); err != nil {
			return nil, fmt.Errorf("reading lineage: %w", err)
		}
		l.Kind = LineageKind(kind)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading lineage: %w", err)
	}
	return out, nil
}

// uuidArgs passes ids as a uuid[] parameter in their 16 bytes: uuid.UUID is a
// driver.Valuer, which pgx encodes through its text form, a tenth of a search's Go
// time when each search sends a few such arrays.
func uuidArgs(ids []uuid.UUID) [][16]byte {
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// maxSpokenOverTerms bounds the words of one turn TurnChecks looks for in later words.
const maxSpokenOverTerms = 64

// TurnCheck is what TurnChecks found about one turn.
type TurnCheck struct {
	// SpokenOver: something later speaks about the turn's subject (a memory of the
	// user whose fact became true at or after the turn, in any status, or a later turn
	// of the user's outside the current session) sharing a search term with it.
	SpokenOver bool
	// QueryTerms are the distinct search terms (lexemes) of the query the turn holds.
	QueryTerms []string
}

// TurnChecks checks the user's turns ids against what came after them and against the
// query text, for the context's fallback to earlier words (see TurnCheck). session is
// the current session, whose turns do not count as later words.
//
// The turn's words are tested without the owner's frequent terms (stats.Frequent, as the
// keyword side knows them) and at most maxSpokenOverTerms of them, so a long turn costs a
// bounded query and a common word ("open", "today") does not make every later turn speak
// about it.
func (t *Tx) TurnChecks(ctx context.Context, userID, session, query string, ids []string, stats *TextStats) (map[string]TurnCheck, error) {
	out := map[string]TurnCheck{}
	if len(ids) == 0 {
		return out, nil
	}
	frequent := []string{} // never nil: NOT (lexeme = ANY(NULL)) would keep no word
	if stats != nil {
		for _, f := range stats.Frequent {
			frequent = append(frequent, f.Term)
		}
	}
	rows, err := t.tx.Query(ctx, `SELECT t.turn_id,
		EXISTS (SELECT 1 FROM memories m WHERE m.tenant = $1 AND m.user_id = $2 AND `+ownerKeySQL("m", "$1", "$2")+`
			AND m.valid_from >= t.occurred_at AND m.tsv @@ tq.q)
		OR EXISTS (SELECT 1 FROM turns l WHERE l.tenant = $1 AND l.user_id = $2 AND `+ownerKeySQL("l", "$1", "$2")+`
			AND l.role = 'user' AND l.session_id <> $4
			AND (l.occurred_at, l.seq) > (t.occurred_at, t.seq) AND l.tsv @@ tq.q),
		(SELECT coalesce(array_agg(DISTINCT u.lexeme), '{}') FROM unnest(to_tsvector('english', $5)) u WHERE t.tsv @@ `+lexemeQuery+`)
	FROM turns t
	CROSS JOIN LATERAL (SELECT string_agg(`+lexemeQuery+`::text, ' | ')::tsquery AS q FROM (
		SELECT lexeme FROM unnest(t.tsv) WHERE NOT (lexeme = ANY($6)) LIMIT `+strconv.Itoa(maxSpokenOverTerms)+`) u) tq
	WHERE t.tenant = $1 AND t.user_id = $2 AND t.turn_id = ANY($3)`, t.tenant, userID, ids, session, SearchText(query), frequent)
	if err != nil {
		return nil, fmt.Errorf("checking turns against later words: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c TurnCheck
		if err := rows.Scan(&id, &c.SpokenOver, &c.QueryTerms); err != nil {
			return nil, fmt.Errorf("checking turns against later words: %w", err)
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checking turns against later words: %w", err)
	}
	return out, nil
}
