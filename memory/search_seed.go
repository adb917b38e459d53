package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bulk turns for the search benchmark (engram bench search seeds a turn log beside the
// memories): COPY into a staging table, then one INSERT … SELECT into turns, because
// COPY FROM cannot write a table under row-level security.

// BulkTurn is one turn of a bulk load.
type BulkTurn struct {
	TurnID     string
	UserID     string
	SessionID  string
	Role       Role
	Content    string
	OccurredAt time.Time
}

// CopyTurns stores turns in the transaction's tenant; a turn id already stored is
// left as it is.
func (t *Tx) CopyTurns(ctx context.Context, turns []BulkTurn) error {
	rows := make([][]any, len(turns))
	for i, x := range turns {
		if !x.Role.Valid() {
			return fmt.Errorf("%w: turn %s: role %q", ErrInvalid, x.TurnID, x.Role)
		}
		rows[i] = []any{x.TurnID, x.UserID, x.SessionID, string(x.Role), x.Content, ContentHash(x.Content),
			SearchText(x.Content), x.OccurredAt}
	}
	if _, err := t.tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS engram_bulk_turns (turn_id text, user_id text,
		session_id text, role text, content text, content_hash bytea, search_text text, occurred_at timestamptz)
		ON COMMIT DELETE ROWS`); err != nil {
		return fmt.Errorf("creating the turn staging table: %w", err)
	}
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"engram_bulk_turns"},
		[]string{"turn_id", "user_id", "session_id", "role", "content", "content_hash", "search_text", "occurred_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copying %d turns: %w", len(rows), err)
	}
	if _, err := t.tx.Exec(ctx, `INSERT INTO turns (tenant, turn_id, user_id, session_id, role, content, content_hash,
			search_text, occurred_at)
		SELECT $1, turn_id, user_id, session_id, role, content, content_hash, search_text, occurred_at
		FROM engram_bulk_turns ON CONFLICT (tenant, turn_id) DO NOTHING`, t.tenant); err != nil {
		return fmt.Errorf("moving staged turns: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `TRUNCATE engram_bulk_turns`); err != nil {
		return fmt.Errorf("emptying the turn staging table: %w", err)
	}
	return nil
}

// CountTurns counts the tenant's stored turns.
func (t *Tx) CountTurns(ctx context.Context) (int, error) {
	var n int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM turns WHERE tenant = $1`, t.tenant).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting turns: %w", err)
	}
	return n, nil
}

// DeleteTenantTurns deletes every turn of the tenant (their vectors go with them) and
// its session summaries: it empties a benchmark tenant's turn log.
func (t *Tx) DeleteTenantTurns(ctx context.Context) error {
	for _, tbl := range []string{"session_summaries", "turns"} {
		if _, err := t.tx.Exec(ctx, "DELETE FROM "+tbl+" WHERE tenant = $1", t.tenant); err != nil {
			return fmt.Errorf("deleting the tenant's %s: %w", tbl, err)
		}
	}
	return nil
}

// AnalyzeTurns refreshes the planner's statistics of the turn table after a bulk load.
func (s *Store) AnalyzeTurns(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `ANALYZE turns`); err != nil {
		return fmt.Errorf("analysing turns: %w", err)
	}
	return nil
}
