package memory

import (
	"context"
	"fmt"
	"time"
)

// BM25 collection statistics of one owner, read apart from the search so a caller can
// cache them: they move slowly (one row in N per write), while counting them costs a
// pass over the owner's rows, the one part of a keyword search that would otherwise
// grow with the owner.

// OwnerTextStats counts the memories of a search's owner (scope global: the tenant's
// global memories; agent: agentID's agent memories; otherwise userID's) with one of
// statuses, unexpired at now, that hold at least one lexeme, and their mean length:
// the collection an unfiltered search of the owner ranks.
func (t *Tx) OwnerTextStats(ctx context.Context, scope Scope, userID, agentID string, statuses []string, now time.Time) (TextStats, error) {
	owner := "m.user_id = $2"
	switch scope {
	case ScopeAgent:
		owner, userID = "m.scope = 'agent' AND m.agent_id = $2", agentID
	case ScopeGlobal:
		owner, userID = "m.user_id = $2 AND m.scope = 'global'", ""
	}
	var s TextStats
	err := t.tx.QueryRow(ctx, `SELECT count(*)::float8, coalesce(avg(m.tsv_len), 0)::float8 FROM memories m
		WHERE m.tenant = $1 AND `+owner+` AND m.status = ANY($3::text[]) AND m.tsv_len > 0
		  AND (m.expire_at IS NULL OR m.expire_at > $4)`,
		t.tenant, userID, statuses, now).Scan(&s.N, &s.AvgLen)
	if err != nil {
		return s, fmt.Errorf("counting the text statistics of the owner's memories: %w", err)
	}
	return s, nil
}

// TurnTextStats counts a user's stored turns that hold at least one lexeme, and their
// mean length: one index-only range of turns_user_time, which carries the length.
func (t *Tx) TurnTextStats(ctx context.Context, userID string) (TextStats, error) {
	var s TextStats
	err := t.tx.QueryRow(ctx, `SELECT count(*)::float8, coalesce(avg(t.tsv_len), 0)::float8
		FROM turns t WHERE t.tenant = $1 AND t.user_id = $2 AND t.tsv_len > 0`, t.tenant, userID).Scan(&s.N, &s.AvgLen)
	if err != nil {
		return s, fmt.Errorf("counting the text statistics of %s's turns: %w", userID, err)
	}
	return s, nil
}
