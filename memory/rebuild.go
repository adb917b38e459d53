package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The SQL of a rebuild from the turn log (internal/rebuild): its run records, the
// owner's turns and memories as the rebuild classifies them, and what hard deletions
// left behind so that nothing deleted comes back.

// TryLock takes the session-level advisory lock name on a connection of its own and
// keeps it until release is called (or the process dies, which closes the
// connection). ok is false, without waiting, when another session holds it.
func (s *Store) TryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquiring a connection for lock %s: %w", name, err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, name).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("taking lock %s: %w", name, err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return func() {
		// A fresh context: the lock must go even when the caller's context has ended.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, name); err != nil {
			// The lock dies with the connection.
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}, true, nil
}

// Savepoint runs fn in a savepoint of t: its changes stay when fn returns keep=true and
// are rolled back otherwise (and on an error, which is returned).
func (t *Tx) Savepoint(ctx context.Context, fn func(*Tx) (keep bool, err error)) (bool, error) {
	sp, err := t.tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("opening a savepoint: %w", err)
	}
	keep, err := fn(&Tx{tx: sp, tenant: t.tenant, indexes: t.indexes})
	if err != nil || !keep {
		if rerr := sp.Rollback(ctx); rerr != nil && err == nil {
			err = fmt.Errorf("rolling back to the savepoint: %w", rerr)
		}
		return false, err
	}
	if err := sp.Commit(ctx); err != nil {
		return false, fmt.Errorf("releasing the savepoint: %w", err)
	}
	return true, nil
}

// RebuildRun is one rebuild's record (rebuild_runs).
type RebuildRun struct {
	ID          uuid.UUID           `json:"id"`
	Status      string              `json:"status"` // running, completed, failed, interrupted
	UserFilter  string              `json:"user_filter,omitempty"`
	Since       *time.Time          `json:"since,omitempty"`
	Extractor   string              `json:"extractor"` // name/version/model: a resumed run must extract alike
	StartedAt   time.Time           `json:"started_at"`
	FinishedAt  *time.Time          `json:"finished_at,omitempty"`
	Host        string              `json:"host,omitempty"`
	OwnersTotal int                 `json:"owners_total"`
	OwnersDone  int                 `json:"owners_done"`
	Counts      map[string]int      `json:"counts"`
	Errors      []map[string]string `json:"errors,omitempty"`
}

const rebuildRunColumns = `id, status, user_filter, since, extractor, started_at, finished_at, host, owners_total,
	owners_done, counts, errors`

func scanRebuildRun(row pgx.Row) (RebuildRun, error) {
	var r RebuildRun
	var counts, errs []byte
	if err := row.Scan(&r.ID, &r.Status, &r.UserFilter, &r.Since, &r.Extractor, &r.StartedAt, &r.FinishedAt, &r.Host,
		&r.OwnersTotal, &r.OwnersDone, &counts, &errs); err != nil {
		return RebuildRun{}, err
	}
	if err := json.Unmarshal(counts, &r.Counts); err != nil {
		return RebuildRun{}, fmt.Errorf("decoding the counts of rebuild %s: %w", r.ID, err)
	}
	if err := json.Unmarshal(errs, &r.Errors); err != nil {
		return RebuildRun{}, fmt.Errorf("decoding the errors of rebuild %s: %w", r.ID, err)
	}
	return r, nil
}

// CreateRebuildRun records a new run with status running.
func (t *Tx) CreateRebuildRun(ctx context.Context, r RebuildRun) error {
	if r.Counts == nil {
		r.Counts = map[string]int{}
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO rebuild_runs (tenant, id, status, user_filter, since, extractor, host, owners_total, counts)
		VALUES ($1, $2, 'running', $3, $4, $5, $6, $7, $8)`,
		t.tenant, r.ID, r.UserFilter, r.Since, r.Extractor, r.Host, r.OwnersTotal, r.Counts)
	if err != nil {
		return fmt.Errorf("recording rebuild %s: %w", r.ID, err)
	}
	return nil
}

// UpdateRebuildRun writes a run's status, owner counts, counts and errors; a status
// other than running also sets finished_at.
func (t *Tx) UpdateRebuildRun(ctx context.Context, r RebuildRun) error {
	if r.Counts == nil {
		r.Counts = map[string]int{}
	}
	if r.Errors == nil {
		r.Errors = []map[string]string{}
	}
	_, err := t.tx.Exec(ctx, `UPDATE rebuild_runs SET status = $3, owners_total = $4, owners_done = $5, counts = $6,
		errors = $7, host = $8, finished_at = CASE WHEN $3 = 'running' THEN NULL ELSE now() END
		WHERE tenant = $1 AND id = $2`,
		t.tenant, r.ID, r.Status, r.OwnersTotal, r.OwnersDone, r.Counts, r.Errors, r.Host)
	if err != nil {
		return fmt.Errorf("updating rebuild %s: %w", r.ID, err)
	}
	return nil
}

// LatestRebuildRuns lists the tenant's runs, newest first.
func (t *Tx) LatestRebuildRuns(ctx context.Context, limit int) ([]RebuildRun, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := t.tx.Query(ctx, `SELECT `+rebuildRunColumns+` FROM rebuild_runs WHERE tenant = $1
		ORDER BY started_at DESC, id DESC LIMIT $2`, t.tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("listing rebuilds: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RebuildRun, error) { return scanRebuildRun(r) })
	if err != nil {
		return nil, fmt.Errorf("listing rebuilds: %w", err)
	}
	return out, nil
}

// UnfinishedRebuildRun is the newest run with these filters and this extractor that
// did not complete, if any: the one a new rebuild resumes.
func (t *Tx) UnfinishedRebuildRun(ctx context.Context, userFilter string, since *time.Time, extractor string) (RebuildRun, bool, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+rebuildRunColumns+` FROM rebuild_runs WHERE tenant = $1 AND status <> 'completed'
		AND user_filter = $2 AND since IS NOT DISTINCT FROM $3 AND extractor = $4
		ORDER BY started_at DESC, id DESC LIMIT 1`, t.tenant, userFilter, since, extractor)
	r, err := scanRebuildRun(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return RebuildRun{}, false, nil
	}
	if err != nil {
		return RebuildRun{}, false, fmt.Errorf("looking for an unfinished rebuild: %w", err)
	}
	return r, true, nil
}

// RebuildOwnersDone lists the owners a run has finished.
func (t *Tx) RebuildOwnersDone(ctx context.Context, runID uuid.UUID) (map[string]bool, error) {
	rows, err := t.tx.Query(ctx, `SELECT user_id FROM rebuild_progress WHERE tenant = $1 AND run_id = $2`, t.tenant, runID)
	if err != nil {
		return nil, fmt.Errorf("reading the progress of rebuild %s: %w", runID, err)
	}
	users, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reading the progress of rebuild %s: %w", runID, err)
	}
	out := make(map[string]bool, len(users))
	for _, u := range users {
		out[u] = true
	}
	return out, nil
}

// MarkRebuildOwner records an owner done within a run (outcome replaced, unchanged or
// empty), in the transaction that did the owner's work.
func (t *Tx) MarkRebuildOwner(ctx context.Context, runID uuid.UUID, userID, outcome string, counts map[string]int) error {
	if counts == nil {
		counts = map[string]int{}
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO rebuild_progress (tenant, run_id, user_id, outcome, counts) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant, run_id, user_id) DO UPDATE SET outcome = EXCLUDED.outcome, counts = EXCLUDED.counts, done_at = now()`,
		t.tenant, runID, userID, outcome, counts)
	if err != nil {
		return fmt.Errorf("recording owner %s done in rebuild %s: %w", userID, runID, err)
	}
	return nil
}

// TurnOwners lists the users with turns (that occurred at or after since, when set),
// in id order.
func (t *Tx) TurnOwners(ctx context.Context, since *time.Time) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT DISTINCT user_id FROM turns WHERE tenant = $1
		AND ($2::timestamptz IS NULL OR occurred_at >= $2) ORDER BY user_id`, t.tenant, since)
	if err != nil {
		return nil, fmt.Errorf("listing the users with turns: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing the users with turns: %w", err)
	}
	return out, nil
}

// OwnerTurns reads a user's turns (that occurred at or after since, when set) in the
// order they were stored for the pipeline: occurred_at, then arrival. Turns whose
// content retention deleted come back with Deleted set.
func (t *Tx) OwnerTurns(ctx context.Context, userID string, since *time.Time) ([]Turn, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+turnColumns+` FROM turns WHERE tenant = $1 AND user_id = $2
		AND ($3::timestamptz IS NULL OR occurred_at >= $3) ORDER BY occurred_at, seq`, t.tenant, userID, since)
	if err != nil {
		return nil, fmt.Errorf("reading the turns of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		tr, err := scanTurn(rows, t.tenant)
		if err != nil {
			return nil, fmt.Errorf("reading the turns of %s: %w", userID, err)
		}
		out = append(out, tr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the turns of %s: %w", userID, err)
	}
	return out, nil
}

// LiveTurnIDs is the set of a user's turns that are stored with their content.
func (t *Tx) LiveTurnIDs(ctx context.Context, userID string) (map[string]bool, error) {
	rows, err := t.tx.Query(ctx, `SELECT turn_id FROM turns WHERE tenant = $1 AND user_id = $2 AND content IS NOT NULL`,
		t.tenant, userID)
	if err != nil {
		return nil, fmt.Errorf("reading the turn ids of %s: %w", userID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reading the turn ids of %s: %w", userID, err)
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// OwnerMemory is a memory of a user as a rebuild classifies it.
type OwnerMemory struct {
	Memory
	// TurnIDs are the turns in its lineage.
	TurnIDs []string
	// ByHand is set when a person shaped it: an explicit statement (POST /v1/memories)
	// created, confirmed or rewrote it, or its history has a correction, deprecation,
	// rollback or restore.
	ByHand bool
	// LastChange is the change of its latest version.
	LastChange Change
}

// OwnerMemories reads every memory of a user (any status and scope), oldest first.
func (t *Tx) OwnerMemories(ctx context.Context, userID string) ([]OwnerMemory, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumnsAs("m")+`,
			coalesce((SELECT array_agg(l.source_id ORDER BY l.source_id) FROM memory_lineage l
				WHERE l.tenant = m.tenant AND l.memory_id = m.id AND l.source_kind = 'turn'), '{}'),
			m.source = 'manual' OR EXISTS (SELECT 1 FROM memory_versions v WHERE v.tenant = m.tenant AND v.memory_id = m.id
				AND v.change IN ('correct', 'deprecate', 'rollback', 'restore'))
			-- an explicit statement that created, confirmed or rewrote it (confirmations
			-- write no version; the audit entry names the candidate)
			OR EXISTS (SELECT 1 FROM audit_log a WHERE a.tenant = m.tenant AND a.memory_id = m.id
				AND a.details->>'candidate_id' LIKE 'manual\_%'),
			coalesce((SELECT v.change FROM memory_versions v WHERE v.tenant = m.tenant AND v.memory_id = m.id
				ORDER BY v.version DESC LIMIT 1), '')
		FROM memories m WHERE m.tenant = $1 AND m.user_id = $2 ORDER BY m.recorded_at, m.id`, t.tenant, userID)
	if err != nil {
		return nil, fmt.Errorf("reading the memories of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []OwnerMemory
	for rows.Next() {
		var om OwnerMemory
		var last string
		m, err := scanMemory(rows, t.tenant, &om.TurnIDs, &om.ByHand, &last)
		if err != nil {
			return nil, fmt.Errorf("reading the memories of %s: %w", userID, err)
		}
		om.Memory, om.LastChange = m, Change(last)
		out = append(out, om)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the memories of %s: %w", userID, err)
	}
	return out, nil
}

// DeletedMemories is what the audit log keeps of a user's hard-deleted memories: the
// hashes of their content and the turns they came from (recorded since rebuilds
// exist; older entries have none).
type DeletedMemories struct {
	ContentHashes map[string]bool // hex
	TurnIDs       map[string]bool
}

// DeletedMemoriesByUser reads, for every user of the tenant, what its hard-deleted
// memories left in the audit log (one scan of the tenant's delete entries).
func (t *Tx) DeletedMemoriesByUser(ctx context.Context) (map[string]DeletedMemories, error) {
	rows, err := t.tx.Query(ctx, `SELECT subject, encode(content_hash, 'hex'),
			coalesce(details->'source_turn_ids', '[]'::jsonb)
		FROM audit_log WHERE tenant = $1 AND action = 'delete' AND content_hash IS NOT NULL`, t.tenant)
	if err != nil {
		return nil, fmt.Errorf("reading the deletions of the audit log: %w", err)
	}
	defer rows.Close()
	out := map[string]DeletedMemories{}
	for rows.Next() {
		var user, hash string
		var turns []string
		if err := rows.Scan(&user, &hash, &turns); err != nil {
			return nil, fmt.Errorf("reading the deletions of the audit log: %w", err)
		}
		d, ok := out[user]
		if !ok {
			d = DeletedMemories{ContentHashes: map[string]bool{}, TurnIDs: map[string]bool{}}
			out[user] = d
		}
		d.ContentHashes[hash] = true
		for _, id := range turns {
			d.TurnIDs[id] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the deletions of the audit log: %w", err)
	}
	return out, nil
}

// DroppedCandidates reports which of ids are in the resolver's ledger as dropped: their
// memory was hard-deleted (DeleteMemory).
func (t *Tx) DroppedCandidates(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT candidate_id FROM applied_candidates WHERE tenant = $1
		AND candidate_id = ANY($2) AND decision = 'drop'`, t.tenant, ids)
	if err != nil {
		return nil, fmt.Errorf("reading dropped candidates: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reading dropped candidates: %w", err)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
