package memory

import (
	"context"
	"fmt"
	"time"
)

// ProfileMemories reads the owner's standing profile: up to limit of the most
// important active preferences, constraints and profile facts unexpired at now,
// whatever the query. A non-empty agentID narrows them to that agent's and unscoped
// ones; session memories are left out.
func (t *Tx) ProfileMemories(ctx context.Context, userID, agentID string, now time.Time, limit int) ([]Memory, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumnsAs("m")+` FROM memories m
		WHERE m.tenant = $1 AND m.user_id = $2 AND m.status = 'active'
		  AND ($3 = '' OR m.agent_id IN ('', $3)) AND m.scope <> 'session'
		  AND (m.expire_at IS NULL OR m.expire_at > $4)
		  AND m.category IN ('preference', 'constraint', 'profile')
		ORDER BY m.importance DESC, m.updated_at DESC, m.id LIMIT $5`,
		t.tenant, userID, agentID, now, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the profile of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows, t.tenant)
		if err != nil {
			return nil, fmt.Errorf("reading the profile of %s: %w", userID, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SessionSummaryState is what a context call needs to know of a session's rolling
// summary.
type SessionSummaryState struct {
	Turns        int    // turns stored in the session
	Summary      string // the rolling summary, empty when there is none
	SummaryTurns int    // turns the summary covered when written
}

// SessionSummary reads a session's rolling summary and its turn count.
func (t *Tx) SessionSummary(ctx context.Context, userID, sessionID string) (SessionSummaryState, error) {
	var st SessionSummaryState
	var summary *string
	var covered *int
	err := t.tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM turns WHERE tenant = $1 AND user_id = $2 AND session_id = $3),
			s.summary, s.turn_count
		FROM (SELECT 1) x LEFT JOIN session_summaries s ON s.tenant = $1 AND s.user_id = $2 AND s.session_id = $3`,
		t.tenant, userID, sessionID).Scan(&st.Turns, &summary, &covered)
	if err != nil {
		return st, fmt.Errorf("reading the summary of session %s: %w", sessionID, err)
	}
	if summary != nil {
		st.Summary = *summary
	}
	if covered != nil {
		st.SummaryTurns = *covered
	}
	return st, nil
}

// SessionTurnStats counts a session's turns and gives the time of the latest (nil
// when there are none).
func (t *Tx) SessionTurnStats(ctx context.Context, userID, sessionID string) (int, *time.Time, error) {
	var total int
	var last *time.Time
	if err := t.tx.QueryRow(ctx, `SELECT count(*), max(occurred_at) FROM turns
			WHERE tenant = $1 AND user_id = $2 AND session_id = $3`, t.tenant, userID, sessionID).Scan(&total, &last); err != nil {
		return 0, nil, fmt.Errorf("counting the turns of session %s: %w", sessionID, err)
	}
	return total, last, nil
}

// SessionUserTexts reads the content of a session's user turns, oldest first,
// leaving out the newest skip turns of any role (the window a context call shows
// verbatim) and turns whose content is deleted; at most 2000.
func (t *Tx) SessionUserTexts(ctx context.Context, userID, sessionID string, skip int) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT content FROM (
				SELECT content, role, occurred_at, seq,
					row_number() OVER (ORDER BY occurred_at DESC, seq DESC) AS back
				FROM turns WHERE tenant = $1 AND user_id = $2 AND session_id = $3) t
			WHERE back > $4 AND role = 'user' AND content IS NOT NULL
			ORDER BY occurred_at, seq LIMIT 2000`, t.tenant, userID, sessionID, skip)
	if err != nil {
		return nil, fmt.Errorf("reading the turns of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var texts []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("reading the turns of session %s: %w", sessionID, err)
		}
		texts = append(texts, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the turns of session %s: %w", sessionID, err)
	}
	return texts, nil
}

// SessionSummary is a rolling summary of a session's older turns.
type SessionSummary struct {
	UserID     string
	SessionID  string
	Summary    string
	TurnCount  int        // turns in the session when summarised
	LastTurnAt *time.Time // occurred_at of the session's latest turn then
}

// PutSessionSummary stores (or replaces) a session's extractive summary.
func (t *Tx) PutSessionSummary(ctx context.Context, s SessionSummary) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO session_summaries (tenant, user_id, session_id, summary, turn_count, last_turn_at, method, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'extractive', now())
			ON CONFLICT (tenant, user_id, session_id) DO UPDATE SET summary = EXCLUDED.summary,
				turn_count = EXCLUDED.turn_count, last_turn_at = EXCLUDED.last_turn_at, method = EXCLUDED.method,
				updated_at = now()`, t.tenant, s.UserID, s.SessionID, s.Summary, s.TurnCount, s.LastTurnAt)
	if err != nil {
		return fmt.Errorf("storing the summary of session %s: %w", s.SessionID, err)
	}
	return nil
}
