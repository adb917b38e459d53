package memory

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// Vector coverage of a search: while a newly configured embedding model is being
// rolled in, some memories have no vector in it. The retriever ranks those by their
// keyword and recency sides alone and says how much of the owner is covered.

// OwnerVectorCoverage counts the memories of a search's owner (scope global: the
// tenant's global memories; agent: agentID's agent memories; otherwise userID's)
// with one of statuses, and how many of them have a vector in model.
func (t *Tx) OwnerVectorCoverage(ctx context.Context, scope Scope, userID, agentID string, statuses []string, model string) (total, withVector int64, err error) {
	// Each memory probes its own vector by primary key: linear in the owner whatever the
	// planner estimates. A join to the owner's vectors, planned for a small owner,
	// became a nested loop that re-read them per memory (a 100,000-memory scope: minutes).
	owner := "m.user_id = $2"
	switch scope {
	case ScopeAgent:
		owner, userID = "m.scope = 'agent' AND m.agent_id = $2", agentID
	case ScopeGlobal:
		owner, userID = "m.user_id = $2 AND m.scope = 'global'", ""
	}
	sql := `SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM memory_embeddings e
			WHERE e.tenant = m.tenant AND e.memory_id = m.id AND e.model = $3))
		FROM memories m WHERE m.tenant = $1 AND ` + owner + ` AND m.status = ANY($4::text[])`
	if err := t.tx.QueryRow(ctx, sql, t.tenant, userID, model, statuses).Scan(&total, &withVector); err != nil {
		return 0, 0, fmt.Errorf("counting the owner's memories with a %s vector: %w", model, err)
	}
	return total, withVector, nil
}

// WithVectors returns which of ids have a vector in model.
func (t *Tx) WithVectors(ctx context.Context, model string, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	out := make(map[uuid.UUID]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT memory_id FROM memory_embeddings
		WHERE tenant = $1 AND model = $2 AND memory_id = ANY($3)`, t.tenant, model, ids)
	if err != nil {
		return nil, fmt.Errorf("checking which memories have a %s vector: %w", model, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("checking which memories have a %s vector: %w", model, err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checking which memories have a %s vector: %w", model, err)
	}
	return out, nil
}
