package memory

import (
	"context"
	"fmt"
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
	// Vector); VectorOnly keeps the vector side only.
	KeywordOnly, VectorOnly bool
	Limit                   int // candidates per ranked side (keyword, vector)
	RecentLimit             int // candidates of the recency side
	// Vector is the query's embedding under Model; nil leaves the vector side out.
	// MaxDistance is the largest cosine distance the vector side keeps.
	Vector      []float32
	Model       string
	MaxDistance float64

	hnsw *HNSWOwnerIndex // the owner's approximate index, set by useHNSW (memory/hnsw_index.go)
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
}

// memoryCandidatesSQL builds the candidate query. Every filter (owner, status, expiry,
// time, types, categories) is applied in the owned CTE first, so ranking never sees
// another tenant's or owner's rows. The CTE is materialised, and the vector side orders
// a materialised list of the owner's distances, so the planner cannot swap in an
// approximate index scan with a filter after it (FACTS.md: exact per-owner scans are
// faster and exact at owner sizes).
func memoryCandidatesSQL(tenant string, q MemorySearch) (string, []any) {
	args := []any{tenant, SearchText(q.Query)}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var where []string
	// Owner.
	switch q.Scope {
	case ScopeGlobal:
		where = append(where, "m.user_id = ''", "m.scope = 'global'")
	case ScopeAgent:
		where = append(where, "m.scope = 'agent'", "m.agent_id = "+arg(q.AgentID))
	default:
		where = append(where, "m.user_id = "+arg(q.UserID))
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
	now := arg(q.Now)
	where = append(where, "(m.expire_at IS NULL OR m.expire_at > "+now+")")
	if md, _ := MetadataContains("m.metadata", q.Metadata, arg); md != "" { // MemoryCandidates checked the encoding
		where = append(where, md)
	}

	var owned string
	if q.AsOf == nil {
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
		owned = `owned AS MATERIALIZED (
	SELECT m.id, m.tsv, m.tsv_len, m.updated_at FROM memories m
	WHERE m.tenant = $1 AND ` + strings.Join(where, " AND ") + `)`
	} else {
		// History: the latest version of each of the owner's memories whose validity
		// interval contains as_of; filters apply to that version.
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
		owned = `owned AS MATERIALIZED (
	SELECT * FROM (
		SELECT DISTINCT ON (v.memory_id) v.memory_id AS id, v.version, v.content, v.status, v.category,
			coalesce(v.key, '') AS key, v.importance::float8 AS importance, v.confidence::float8 AS confidence,
			v.valid_from, v.valid_to, v.recorded_at AS updated_at,
			m.tsv || to_tsvector('english', v.content) AS tsv,
			length(m.tsv || to_tsvector('english', v.content)) AS tsv_len
		FROM memories m JOIN memory_versions v ON v.tenant = m.tenant AND v.memory_id = m.id
		WHERE m.tenant = $1 AND ` + strings.Join(where, " AND ") + `
		  AND v.valid_from <= ` + now + ` AND (v.valid_to IS NULL OR v.valid_to > ` + now + `)
		ORDER BY v.memory_id, v.version DESC) v
	WHERE ` + strings.Join(vwhere, " AND ") + `)`
	}

	limit := arg(q.Limit)
	// The keyword side ranks the owned rows by BM25 with the statistics of the owned
	// set itself: the owner's memories that pass the search's filters, the collection
	// being searched (materialised already, so N and the lengths cost one pass).
	ctes := []string{owned}
	ctes = append(ctes, bm25Spec{prefix: "k", text: "$2", limit: limit, order: "id",
		match: `SELECT o.id, o.tsv, o.tsv_len, true AS keep FROM owned o, kq WHERE o.tsv @@ kq.q`,
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
		minSim := arg(q.MaxDistance)
		if q.Scope == ScopeAgent {
			// Agent memories may belong to any user: look their vectors up one by one.
			ctes = append(ctes, `dists AS MATERIALIZED (
	SELECT e.memory_id AS id, e.embedding <=> `+vecArg+` AS dist
	FROM owned o JOIN memory_embeddings e ON e.tenant = $1 AND e.memory_id = o.id AND e.model = `+modelArg+`)`)
		} else {
			// The owner's vectors, one range of the (tenant, model, user_id) index: the
			// exact scan FACTS.md measured. Joining the owned set before the ORDER BY
			// keeps filter-then-rank: a vector of a filtered-out memory is never ranked.
			owner := "''"
			if q.Scope != ScopeGlobal {
				owner = arg(q.UserID)
			}
			ctes = append(ctes, `edist AS MATERIALIZED (
	SELECT e.memory_id AS id, e.embedding <=> `+vecArg+` AS dist
	FROM memory_embeddings e WHERE e.tenant = $1 AND e.model = `+modelArg+` AND e.user_id = `+owner+`)`,
				`dists AS (SELECT d.id, d.dist FROM edist d JOIN owned o ON o.id = d.id)`)
			if q.hnsw != nil { // a very large owner: its own HNSW index instead (memory/hnsw_index.go)
				ctes = append(ctes[:len(ctes)-2], q.hnsw.hnswDistsCTEs(modelArg, vecArg, owner, where, q.Limit)...)
			}
		}
		ctes = append(ctes, `vtop AS (
	SELECT id, dist, row_number() OVER (ORDER BY dist, id) AS rank FROM dists
	WHERE dist <= `+minSim+`::float8 ORDER BY dist, id LIMIT `+limit+`)`)
		if q.VectorOnly {
			union = "SELECT id FROM vtop"
		} else {
			union = "SELECT id FROM vtop UNION " + union
		}
		vjoin = "LEFT JOIN vtop ON vtop.id = c.id"
	}
	ctes = append(ctes, "cand AS ("+union+")")
	sel := `SELECT ` + memoryColumnsAs("m") + `, vtop.rank, vtop.dist, ktop.rank, ktop.kr::float8, rtop.rank`
	from := `
FROM cand c
JOIN memories m ON m.tenant = $1 AND m.id = c.id
` + vjoin + `
LEFT JOIN ktop ON ktop.id = c.id
LEFT JOIN rtop ON rtop.id = c.id`
	if q.AsOf != nil {
		sel += `, o.version, o.content, o.status, o.category, o.key, o.importance, o.confidence, o.valid_from, o.valid_to`
		from += `
JOIN owned o ON o.id = c.id`
	}
	return "WITH " + strings.Join(ctes, ",\n") + "\n" + sel + from, args
}

// MemoryCandidates runs the candidate query of a memory search. With AsOf each
// memory carries the version valid then (a superseded one reads as active: it was the
// truth at that time).
func (t *Tx) MemoryCandidates(ctx context.Context, q MemorySearch) ([]MemoryHit, error) {
	if _, err := MetadataContains("", q.Metadata, func(any) string { return "" }); err != nil {
		return nil, err
	}
	done, err := t.useHNSW(ctx, &q)
	if err != nil {
		return nil, err
	}
	defer done()
	sql, args := memoryCandidatesSQL(t.tenant, q)
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("querying memory candidates: %w", err)
	}
	defer rows.Close()
	var out []MemoryHit
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
		extra := []any{&vRank, &dist, &kRank, &kr, &rRank}
		if q.AsOf != nil {
			extra = append(extra, &ver.version, &ver.content, &ver.status, &ver.cat, &ver.key,
				&ver.importance, &ver.confidenc, &ver.validFrom, &ver.validTo)
		}
		m, err := scanMemory(rows, t.tenant, extra...)
		if err != nil {
			return nil, fmt.Errorf("reading memory candidates: %w", err)
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
		return nil, fmt.Errorf("reading memory candidates: %w", err)
	}
	return out, nil
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
	rows, err := t.tx.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		return nil, fmt.Errorf("explaining the memory candidate query: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("reading the plan of the memory candidate query: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the plan of the memory candidate query: %w", err)
	}
	return out, nil
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
func (t *Tx) TurnCandidates(ctx context.Context, q TurnSearch) ([]TurnHit, error) {
	if !q.Keyword && q.Vector == nil {
		return nil, nil
	}
	if _, err := MetadataContains("", q.Metadata, func(any) string { return "" }); err != nil {
		return nil, err
	}
	sql, args := turnCandidatesSQL(t.tenant, q)
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("searching turns: %w", err)
	}
	defer rows.Close()
	var out []TurnHit
	for rows.Next() {
		var h TurnHit
		var role string
		var kRank, vRank *int64
		var kr *float64
		if err := rows.Scan(&h.TurnID, &h.SessionID, &role, &h.Content, &h.OccurredAt, &kRank, &kr, &vRank, &h.Distance, &h.Metadata); err != nil {
			return nil, fmt.Errorf("reading turns: %w", err)
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
		return nil, fmt.Errorf("reading turns: %w", err)
	}
	return out, nil
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
	filter := strings.Join(where, " AND ")
	limit := arg(q.Limit)
	var ctes, sides []string
	kcols, vcols := "NULL::bigint, NULL::float8", "NULL::bigint, NULL::float8"
	var joins string
	if keyword {
		// BM25 over the user's turns with the user's statistics: N and the mean length
		// from an index-only scan of turns_user_time (which carries tsv_len), document
		// frequencies from the user's matching turns (turns_user_tsv). Those are the
		// user's whole log, whatever the session, agent and time filters, which only
		// decide which matches are ranked (keep). The search text is bound only when
		// the keyword side runs: PostgreSQL rejects a parameter no part of the query uses.
		ctes = append(ctes, bm25Spec{prefix: "k", text: arg(SearchText(q.Query)), limit: limit,
			order: "occurred_at DESC, id",
			match: `SELECT t.turn_id AS id, t.tsv, t.tsv_len, t.occurred_at, (` + filter + `) AS keep
	FROM turns t, kq WHERE t.tenant = $1 AND t.user_id = $2 AND t.tsv @@ kq.q`,
			stats: `SELECT count(*)::float8 AS n, coalesce(avg(t.tsv_len), 0)::float8 AS avgdl
	FROM turns t WHERE t.tenant = $1 AND t.user_id = $2 AND t.tsv_len > 0`,
		}.ctes()...)
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
	JOIN turns t0 ON t0.tenant = $1 AND t0.turn_id = s.id
	CROSS JOIN LATERAL (
		(SELECT t.turn_id FROM turns t WHERE `+filter+` AND t.session_id = t0.session_id
			AND (t.occurred_at, t.seq) < (t0.occurred_at, t0.seq) ORDER BY t.occurred_at DESC, t.seq DESC LIMIT 1)
		UNION ALL
		(SELECT t.turn_id FROM turns t WHERE `+filter+` AND t.session_id = t0.session_id
			AND (t.occurred_at, t.seq) > (t0.occurred_at, t0.seq) ORDER BY t.occurred_at, t.seq LIMIT 1)) nb)`,
				`kexp AS (
	SELECT x.id, sum(x.kr) AS kr, max(t.occurred_at) AS occurred_at
	FROM (SELECT id, kr FROM kseed UNION ALL SELECT id, kr FROM knb) x
	JOIN turns t ON t.tenant = $1 AND t.turn_id = x.id GROUP BY x.id)`,
				`ktopt AS (
	SELECT id AS turn_id, kr, row_number() OVER (ORDER BY kr DESC, occurred_at DESC, id) AS rank
	FROM kexp ORDER BY kr DESC, occurred_at DESC, id LIMIT `+limit+`)`)
		} else {
			ctes = append(ctes, `ktopt AS (SELECT id AS turn_id, kr, rank FROM ktop)`)
		}
		sides = append(sides, "SELECT turn_id FROM ktopt")
		kcols = "ktopt.rank, ktopt.kr"
		joins += "\nLEFT JOIN ktopt ON ktopt.turn_id = c.turn_id"
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
SELECT t.turn_id, t.session_id, t.role, t.content, t.occurred_at, ` + kcols + `, ` + vcols + `, t.metadata
FROM cand c
JOIN turns t ON t.tenant = $1 AND t.turn_id = c.turn_id` + joins
	return sql, args
}

// MemoryVectors reads the vectors of memories ids under model; a memory without one
// is absent from the map.
func (t *Tx) MemoryVectors(ctx context.Context, model string, ids []uuid.UUID) (map[uuid.UUID][]float32, error) {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, embedding FROM memory_embeddings
		WHERE tenant = $1 AND model = $2 AND memory_id = ANY($3)`, t.tenant, model, ids)
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
		WHERE tenant = $1 AND memory_id = ANY($2) ORDER BY added_at, source_id`, t.tenant, ids)
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
