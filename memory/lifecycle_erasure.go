package memory

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// RestoreFromArchive writes a "restore" version that makes memory id active again
// (through Apply, with the given actor, module and reason) and sets its last use to
// now, so the next forgetting run does not archive it again at once. The caller
// checks that the memory is archived. The returned memory is Apply's.
func (t *Tx) RestoreFromArchive(ctx context.Context, id uuid.UUID, actor, module, reason string) (Memory, error) {
	active := StatusActive
	m, err := t.Apply(ctx, id, Update{Change: ChangeRestore, Status: &active, Actor: actor, Module: module, Reason: reason})
	if err != nil {
		return Memory{}, err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE memories SET last_access_at = now() WHERE tenant = $1 AND id = $2`, t.tenant, id); err != nil {
		return Memory{}, fmt.Errorf("marking restored memory %s as used: %w", id, err)
	}
	return m, nil
}

// MemoryRowCounts are the rows a hard deletion of one memory removed with it.
type MemoryRowCounts struct {
	Versions   int
	Lineage    int
	Embeddings int
}

// DeleteMemory hard-deletes memory id: its versions, lineage and embeddings go with it
// (the foreign keys cascade); its source turns are marked forgotten (forgetSourceTurns).
// Its ledger entries stay, unlinked and marked dropped: a redelivered or re-extracted
// candidate (ids are deterministic) is then replayed as a no-op instead of bringing the
// deleted memory back. Lineage of other memories that names it as a source is kept: it
// is their provenance, and it holds only the id. The caller holds the owner's lock and
// writes the audit entry.
func (t *Tx) DeleteMemory(ctx context.Context, id uuid.UUID) (MemoryRowCounts, error) {
	var n MemoryRowCounts
	if err := t.tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM memory_versions WHERE tenant = $1 AND memory_id = $2),
			(SELECT count(*) FROM memory_lineage WHERE tenant = $1 AND memory_id = $2),
			(SELECT count(*) FROM memory_embeddings WHERE tenant = $1 AND memory_id = $2)`, t.tenant, id).
		Scan(&n.Versions, &n.Lineage, &n.Embeddings); err != nil {
		return n, fmt.Errorf("counting the rows of memory %s: %w", id, err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE applied_candidates SET memory_id = NULL, decision = 'drop',
		reason = 'memory deleted' WHERE tenant = $1 AND memory_id = $2`, t.tenant, id); err != nil {
		return n, fmt.Errorf("unlinking the ledger entries of memory %s: %w", id, err)
	}
	if err := t.forgetSourceTurns(ctx, `SELECT $2::uuid`, id); err != nil {
		return n, fmt.Errorf("deleting memory %s: %w", id, err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM memories WHERE tenant = $1 AND id = $2`, t.tenant, id); err != nil {
		return n, fmt.Errorf("deleting memory %s: %w", id, err)
	}
	return n, nil
}

// forgetSourceTurns marks forgotten the turns that the memories about to be deleted came
// from: those whose ids the subquery ids returns ($1 is the tenant, $2 arg). Their lineage
// goes with them, and the mark is what keeps the context's fallback to earlier words
// (TurnSearch.Unextracted) from offering them in the deleted memories' place.
func (t *Tx) forgetSourceTurns(ctx context.Context, ids string, arg any) error {
	if _, err := t.tx.Exec(ctx, `UPDATE turns SET forgotten = true WHERE tenant = $1 AND turn_id IN (
		SELECT source_id FROM memory_lineage WHERE tenant = $1 AND source_kind = 'turn' AND memory_id IN (`+ids+`))`,
		t.tenant, arg); err != nil {
		return fmt.Errorf("marking the source turns as forgotten: %w", err)
	}
	return nil
}

// UserRowCounts are the rows DeleteUserRows removed.
type UserRowCounts struct {
	Memories         int
	Versions         int
	Lineage          int
	ForeignLineage   int // other memories' links to the user's turns and memories
	Embeddings       int
	Ledger           int // resolver ledger entries of the user's memories
	Turns            int
	Retrievals       int
	SessionSummaries int
	// TaskIDs are the tasks the user's turns named, whose working memory (outside
	// the database) the caller deletes.
	TaskIDs []string
	// MissingTables lists the tables that do not exist in this database yet, so had
	// nothing to delete.
	MissingTables []string
}

// DeleteUserRows deletes every row of one user of the transaction's tenant: memories
// with their versions, lineage, embeddings and ledger entries; other memories' links
// to the user's turns and memories; turns; retrieval records and session summaries;
// the user's rows in the consolidation registry and progress; and the user's traces
// in run records (filter and error entries). The audit log is left alone. The caller
// holds the owner's lock (LockOwner(userID)).
func (t *Tx) DeleteUserRows(ctx context.Context, userID string) (UserRowCounts, error) {
	var n UserRowCounts
	tenant := t.tenant
	rows, err := t.tx.Query(ctx, `SELECT DISTINCT task_id FROM turns WHERE tenant = $1 AND user_id = $2 AND task_id <> ''`, tenant, userID)
	if err != nil {
		return n, fmt.Errorf("reading the user's tasks: %w", err)
	}
	if n.TaskIDs, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return n, fmt.Errorf("reading the user's tasks: %w", err)
	}
	rows, err = t.tx.Query(ctx, `SELECT id FROM memories WHERE tenant = $1 AND user_id = $2`, tenant, userID)
	if err != nil {
		return n, fmt.Errorf("reading the user's memories: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return n, fmt.Errorf("reading the user's memories: %w", err)
	}
	idText := make([]string, len(ids))
	for i, id := range ids {
		idText[i] = id.String()
	}
	if err := t.tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM memory_versions WHERE tenant = $1 AND memory_id = ANY($2)),
			(SELECT count(*) FROM memory_lineage WHERE tenant = $1 AND memory_id = ANY($2)),
			(SELECT count(*) FROM memory_embeddings WHERE tenant = $1 AND memory_id = ANY($2))`, tenant, ids).
		Scan(&n.Versions, &n.Lineage, &n.Embeddings); err != nil {
		return n, fmt.Errorf("counting the user's rows: %w", err)
	}
	type step struct {
		what string
		n    *int
		sql  string
		args []any
	}
	steps := []step{
		{"ledger entries", &n.Ledger, `DELETE FROM applied_candidates WHERE tenant = $1 AND memory_id = ANY($2)`, []any{tenant, ids}},
		// Links from memories that stay (another user's, agent or global ones) to this
		// user's turns and memories: ids only, but ids of what no longer exists.
		{"foreign lineage", &n.ForeignLineage, `DELETE FROM memory_lineage WHERE tenant = $1 AND NOT (memory_id = ANY($2))
			AND ((source_kind = 'memory' AND source_id = ANY($3))
			  OR (source_kind = 'turn' AND source_id IN (SELECT turn_id FROM turns WHERE tenant = $1 AND user_id = $4)))`,
			[]any{tenant, ids, idText, userID}},
		{"memories", &n.Memories, `DELETE FROM memories WHERE tenant = $1 AND user_id = $2`, []any{tenant, userID}},
		{"turns", &n.Turns, `DELETE FROM turns WHERE tenant = $1 AND user_id = $2`, []any{tenant, userID}},
		{"registry", nil, `DELETE FROM owners WHERE tenant = $1 AND user_id = $2`, []any{tenant, userID}},
		{"run progress", nil, `DELETE FROM consolidation_progress WHERE tenant = $1 AND user_id = $2`, []any{tenant, userID}},
		// The frequent terms stored for the user's searches are words of the user's.
		{"text statistics", nil, `DELETE FROM owner_text_stats WHERE tenant = $1 AND scope = 'user' AND subject = $2`, []any{tenant, userID}},
		// Run records keep no trace of the user either: the filter and error entries go.
		// Run records span tenants, so this goes through the operator function that
		// scrubs the transaction's own tenant's user only (migration 0008).
		{"run records", nil, `SELECT engram_forget_user_runs($1)`, []any{userID}},
	}
	// The retriever's tables (migration 0003) may not exist in every database yet.
	for _, tb := range []struct {
		table string
		n     *int
	}{{"retrievals", &n.Retrievals}, {"session_summaries", &n.SessionSummaries}, {"rebuild_progress", nil}} {
		var exists bool
		if err := t.tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, tb.table).Scan(&exists); err != nil {
			return n, fmt.Errorf("looking up table %s: %w", tb.table, err)
		}
		if !exists {
			n.MissingTables = append(n.MissingTables, tb.table)
			continue
		}
		steps = append(steps, step{tb.table, tb.n, `DELETE FROM ` + tb.table + ` WHERE tenant = $1 AND user_id = $2`, []any{tenant, userID}})
		if tb.table == "rebuild_progress" { // a rebuild's filter names the user too (migration 0008)
			steps = append(steps, step{"rebuild filters", nil, `UPDATE rebuild_runs SET user_filter = '(deleted)'
				WHERE tenant = $1 AND user_filter = $2`, []any{tenant, userID}})
		}
	}
	for _, s := range steps {
		tag, err := t.tx.Exec(ctx, s.sql, s.args...)
		if err != nil {
			return n, fmt.Errorf("deleting the user's %s: %w", s.what, err)
		}
		if s.n != nil {
			*s.n = int(tag.RowsAffected())
		}
	}
	return n, nil
}

// ErrCannotCompact: the connected role may not VACUUM the erasure's tables (it is not
// their owner, and PostgreSQL is older than 17 or MAINTAIN was not granted).
var ErrCannotCompact = errors.New("memory: the database role may not vacuum the tables")

// erasureTables are the tables a user erasure deletes from, in that order.
var erasureTables = []string{"turns", "turn_embeddings", "memories", "memory_versions", "memory_lineage",
	"memory_embeddings", "applied_candidates", "retrievals", "session_summaries", "owners", "consolidation_progress",
	"owner_text_stats"}

// CompactReport is what CompactErased did.
type CompactReport struct {
	Tables  []string `json:"tables"`
	Seconds float64  `json:"seconds"`
	// Held counts, per table, the deleted rows VACUUM FULL had to copy because a
	// transaction that began before the erasure could still see them; those tables are
	// not in Tables: their rows' bytes are still in the files.
	Held map[string]int `json:"held,omitempty"`
}

// compactWait bounds how long CompactErased waits for older transactions to end.
const compactWait = 30 * time.Second

// recentlyDead reads VACUUM VERBOSE's detail "N dead row versions cannot be removed yet".
var recentlyDead = regexp.MustCompile(`(\d+) dead row versions cannot be removed yet`)

// CompactErased rewrites the tables a user erasure deletes from (VACUUM FULL: new heap,
// TOAST and index files; the old files are truncated at commit), so the deleted rows'
// bytes leave the table files. Plain VACUUM is not enough: it prunes and defragments
// pages but does not clear freed space, and a deleted tuple that sat at the edge of its
// page's free space stays readable in the file (measured: issue 12). The rewrite takes
// an ACCESS EXCLUSIVE lock on each table in turn, so other writers wait for it; the
// time is in the report. It must run outside a transaction, as the owner role or, on
// PostgreSQL 17 and later, a role granted MAINTAIN (migration 0008 grants engram_app).
// What stays behind on disk: the WAL segments that recorded the rows, until recycled
// after later checkpoints, and dead statistics rows in pg_statistic until autovacuum.
func (s *Store) CompactErased(ctx context.Context) (CompactReport, error) {
	start := time.Now()
	var rep CompactReport
	var can bool
	var missing []string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(bool_and(
			pg_has_role(current_user, c.relowner, 'MEMBER')
			OR (current_setting('server_version_num')::int >= 170000 AND has_table_privilege(c.oid, 'MAINTAIN'))), false),
		array(SELECT t FROM unnest($1::text[]) t WHERE to_regclass(t) IS NULL)
		FROM unnest($1::text[]) t JOIN pg_class c ON c.oid = to_regclass(t)`, erasureTables).Scan(&can, &missing)
	if err != nil {
		return rep, fmt.Errorf("checking the right to vacuum: %w", err)
	}
	if !can {
		return rep, ErrCannotCompact
	}
	// VACUUM FULL copies a deleted row that a transaction begun before the erasure can
	// still see; VERBOSE reports how many, so the table is rewritten again once that
	// transaction has ended (a worker's or a reader's, usually milliseconds).
	var held int
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if m := recentlyDead.FindStringSubmatch(n.Detail); m != nil {
			v, _ := strconv.Atoi(m[1])
			held += v
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return rep, fmt.Errorf("connecting to compact after an erasure: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	deadline := time.Now().Add(compactWait)
	for _, t := range erasureTables {
		if slices.Contains(missing, t) {
			continue
		}
		for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
			held = 0
			if _, err := conn.Exec(ctx, "VACUUM (FULL, VERBOSE) "+pgx.Identifier{t}.Sanitize()); err != nil {
				return rep, fmt.Errorf("compacting %s after an erasure: %w", t, err)
			}
			if held == 0 || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return rep, fmt.Errorf("compacting %s after an erasure: %w", t, ctx.Err())
			case <-time.After(wait):
			}
		}
		if held > 0 {
			if rep.Held == nil {
				rep.Held = map[string]int{}
			}
			rep.Held[t] = held
			continue
		}
		rep.Tables = append(rep.Tables, t)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}
