package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"
)

// The vector side of a search on its own, and the shared-collection alternative, for
// `engram bench large` (internal/bench/large.go).

// OwnerVectorSide runs the vector side of an owner's search (scope ScopeUser with
// userID, or ScopeGlobal) the way MemoryCandidates does: through the owner's HNSW
// index when it has a ready one, else by the exact scan; active memories only, k
// nearest by exact distance. It reports whether the index was used.
func (t *Tx) OwnerVectorSide(ctx context.Context, model string, scope Scope, userID string, vec []float32, k int) ([]uuid.UUID, bool, error) {
	q := MemorySearch{Scope: scope, UserID: userID, Vector: vec, Model: model, Limit: k, Now: time.Now()}
	done, err := t.useHNSW(ctx, &q)
	if err != nil {
		return nil, false, err
	}
	defer done()
	args := []any{t.tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	owner := "''"
	where := []string{"m.user_id = ''", "m.scope = 'global'"}
	if scope != ScopeGlobal {
		owner = arg(userID)
		where = []string{"m.user_id = " + owner}
	}
	where = append(where, "m.status = 'active'", "(m.expire_at IS NULL OR m.expire_at > "+arg(q.Now)+")")
	modelArg, vecArg := arg(model), arg(pgvector.NewVector(vec))
	var ctes []string
	if q.hnsw != nil {
		ctes = q.hnsw.hnswDistsCTEs(modelArg, vecArg, owner, where, arg(k))
	} else {
		// As the search's exact path (vectorDistancesSQL, nearestKeptSQL). A join of
		// vectors and memories up front was planned from the user id's share of the
		// whole table: a 2,000-memory global scope beside other tenants' global
		// scopes of 100,000 took 45 ms where the search took 6.
		ctes = []string{`edist AS MATERIALIZED (
	SELECT e.memory_id AS id, e.embedding <=> ` + vecArg + ` AS dist
	FROM memory_embeddings e WHERE e.tenant = $1 AND e.model = ` + modelArg + ` AND e.user_id = ` + owner + `)`,
			`dists AS (` + nearestKeptSQL("edist", "true", "m.tenant = $1 AND "+strings.Join(where, " AND "), fmt.Sprint(k)) + `)`}
	}
	ids, err := t.nearestIDsArgs(ctx, "WITH "+strings.Join(ctes, ",\n")+fmt.Sprintf("\nSELECT id FROM dists ORDER BY dist, id LIMIT %d", k), args)
	return ids, q.hnsw != nil, err
}

// SharedHNSWNearest is what one shared vector collection gives: the k nearest of one
// HNSW index over every tenant's vectors of model (CreateVectorIndex with that name),
// with the tenant and owner filter applied after the index scan. iterative turns on
// pgvector's iterative scans (relaxed order), which read on until k rows pass the
// filter; without it the filter sees only the ef_search candidates the index
// returns. The plan is generic, so no owner's partial index can stand in.
func (t *Tx) SharedHNSWNearest(ctx context.Context, model string, scope Scope, userID string, vec []float32, dims, k, efSearch int, iterative bool) ([]uuid.UUID, error) {
	mode := "off"
	if iterative {
		mode = "relaxed_order"
	}
	if _, err := t.tx.Exec(ctx, `SELECT set_config('hnsw.iterative_scan', $1, true), set_config('hnsw.ef_search', $2, true),
		set_config('enable_sort', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`,
		mode, fmt.Sprint(efSearch)); err != nil {
		return nil, fmt.Errorf("setting up the shared HNSW scan: %w", err)
	}
	if scope == ScopeGlobal {
		userID = ""
	}
	// The model is a literal, so the generic plan can use the index of that model.
	sql := fmt.Sprintf(`SELECT memory_id FROM memory_embeddings e
		WHERE e.model = %s AND e.tenant = $1 AND e.user_id = $2
		ORDER BY e.embedding::vector(%d) <=> $3::vector(%d) LIMIT %d`,
		sqlLiteral(model), dims, dims, k)
	return t.nearestIDsArgs(ctx, sql, []any{t.tenant, userID, pgvector.NewVector(vec)})
}

// ExplainSharedHNSW is the plan of SharedHNSWNearest, one line a row.
func (t *Tx) ExplainSharedHNSW(ctx context.Context, model, userID string, vec []float32, dims int) ([]string, error) {
	if _, err := t.tx.Exec(ctx, `SELECT set_config('enable_sort', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`); err != nil {
		return nil, fmt.Errorf("setting up the shared HNSW scan: %w", err)
	}
	sql := fmt.Sprintf(`EXPLAIN SELECT memory_id FROM memory_embeddings e WHERE e.model = %s AND e.tenant = $1 AND e.user_id = $2
		ORDER BY e.embedding::vector(%d) <=> $3::vector(%d) LIMIT 10`, sqlLiteral(model), dims, dims)
	rows, err := t.tx.Query(ctx, sql, t.tenant, userID, pgvector.NewVector(vec))
	if err != nil {
		return nil, fmt.Errorf("explaining the shared HNSW scan: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("explaining the shared HNSW scan: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (t *Tx) nearestIDsArgs(ctx context.Context, sql string, args []any) ([]uuid.UUID, error) {
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("querying nearest vectors: %w", err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("reading nearest vectors: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading nearest vectors: %w", err)
	}
	return out, nil
}
