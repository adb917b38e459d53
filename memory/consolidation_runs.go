package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The nightly consolidation's run records (consolidation_runs), per-owner progress
// (consolidation_progress) and the owners registry. All three are under forced
// row-level security (migration 0008): a tenant's transaction sees its own rows, and
// the work that spans tenants (listing owners, starting, finishing and listing runs)
// goes through the SECURITY DEFINER functions engram_op_*, the one narrow path the
// application role has across tenants.

// runLockKey is the session advisory lock one consolidation run holds for its whole
// duration. Any constant works as long as no other advisory lock in engram uses it
// (migrations use ...01).
const runLockKey int64 = 0x656e6772616d02 // "engram" + 2

// Run statuses, as stored in consolidation_runs.
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// RunLock is the consolidation run lock, held on a dedicated connection: a session
// advisory lock lives as long as the session, so a crashed process releases it by
// dying. The run's own bookkeeping (StartRun, OwnersToConsolidate) uses that
// connection.
type RunLock struct {
	conn *pgxpool.Conn
}

// TryRunLock takes the run lock; ok is false when another run (in this or any other
// process) holds it.
func (s *Store) TryRunLock(ctx context.Context) (lock *RunLock, ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquiring a connection for the run lock: %w", err)
	}
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", runLockKey).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("taking the consolidation run lock: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return &RunLock{conn: conn}, true, nil
}

// Release unlocks, or closes the connection when unlocking fails, so a pooled
// connection never goes back to the pool still holding the lock. It uses its own
// context: a cancelled run must still let go.
func (l *RunLock) Release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", runLockKey); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}

// RunStart describes a run about to start.
type RunStart struct {
	Tenant, User string // filters; empty: all
	DryRun       bool
	// ResumeWithin: when the latest run with the same filters was interrupted or
	// failed, and the chain it belongs to started less than this ago, the new run
	// resumes it. Zero or negative: never resume.
	ResumeWithin time.Duration
	Host         string // recorded on the run
}

// StartRun closes stale runs, decides whether this run resumes an earlier one, and
// inserts its row. It must run under the run lock, so any row still "running" belongs
// to a process that died. root is the first run of the chain (the run itself when it
// resumes nothing); resumes is 0 when it resumes nothing.
func (l *RunLock) StartRun(ctx context.Context, r RunStart) (id, resumes, root int64, err error) {
	within := 0.0
	if r.ResumeWithin > 0 {
		within = r.ResumeWithin.Seconds()
	}
	err = l.conn.QueryRow(ctx, `SELECT out_id, out_resumes, out_root FROM engram_op_start_run($1, $2, $3, $4, $5)`,
		r.Tenant, r.User, r.DryRun, within, r.Host).Scan(&id, &resumes, &root)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("recording the consolidation run: %w", err)
	}
	return id, resumes, root, nil
}

// RunOwner is one (tenant, user_id) of the owners registry; an empty user id is a tenant's
// pool of agent and global memories.
type RunOwner struct {
	Tenant string
	UserID string
}

// OwnersToConsolidate returns the registered owners the filters select (empty: all),
// in registry order, leaving out those the chain root already finished, and how many
// it left out.
func (l *RunLock) OwnersToConsolidate(ctx context.Context, root int64, tenant, user string) ([]RunOwner, int, error) {
	// The registry is row-level secured like every tenant table: enumerating owners
	// across tenants is an operator read, through its SECURITY DEFINER function.
	rows, err := l.conn.Query(ctx, `SELECT tenant, user_id, done FROM engram_op_owners($1, $2, $3)`, tenant, user, root)
	if err != nil {
		return nil, 0, fmt.Errorf("listing owners: %w", err)
	}
	defer rows.Close()
	var out []RunOwner
	skipped := 0
	for rows.Next() {
		var o RunOwner
		var done bool
		if err := rows.Scan(&o.Tenant, &o.UserID, &done); err != nil {
			return nil, 0, fmt.Errorf("listing owners: %w", err)
		}
		if done {
			skipped++
			continue
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("listing owners: %w", err)
	}
	return out, skipped, nil
}

// OwnerDone reports whether the chain root recorded the transaction's tenant's owner
// userID done.
func (t *Tx) OwnerDone(ctx context.Context, root int64, userID string) (bool, error) {
	var done bool
	if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM consolidation_progress
		WHERE root_id = $1 AND tenant = $2 AND user_id = $3)`, root, t.tenant, userID).Scan(&done); err != nil {
		return false, fmt.Errorf("checking progress: %w", err)
	}
	return done, nil
}

// RecordOwnerDone records the owner userID done within chain root by run runID, with
// what the chain did for it (counts, stored as JSON). It belongs in the transaction
// of the owner's last step, so a resumed run neither skips nor repeats it.
func (t *Tx) RecordOwnerDone(ctx context.Context, root, runID int64, userID string, counts any) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO consolidation_progress (root_id, tenant, user_id, run_id, counts)
		VALUES ($1, $2, $3, $4, $5)`, root, t.tenant, userID, runID, counts); err != nil {
		return fmt.Errorf("recording progress: %w", err)
	}
	return nil
}

// RunEnd is the final state of a run. Counts and Errors are stored as JSON.
type RunEnd struct {
	ID            int64
	Status        string
	Owners        int
	OwnersDone    int
	OwnersSkipped int
	Counts        any
	LLMCalls      int
	Errors        any
}

// FinishRun stores the final state of a run. It uses its own context: a cancelled
// run must still be recorded as interrupted.
func (s *Store) FinishRun(ctx context.Context, r RunEnd) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, `SELECT engram_op_finish_run($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.ID, r.Status, r.Owners, r.OwnersDone, r.OwnersSkipped, r.Counts, r.LLMCalls, r.Errors)
	if err != nil {
		return fmt.Errorf("recording the end of consolidation run %d: %w", r.ID, err)
	}
	return nil
}

// RunRecord is one row of consolidation_runs; Counts and Errors are its raw JSON.
type RunRecord struct {
	ID            int64
	Resumes       *int64
	RootID        int64
	StartedAt     time.Time
	FinishedAt    *time.Time
	Status        string
	Tenant        string
	User          string
	DryRun        bool
	Owners        int
	OwnersDone    int
	OwnersSkipped int
	Counts        []byte
	LLMCalls      int
	Errors        []byte
	Host          string
}

// ConsolidationRuns lists the most recent limit runs, newest first.
func (s *Store) ConsolidationRuns(ctx context.Context, limit int) ([]RunRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, resumes, coalesce(root_id, id), started_at, finished_at, status,
		tenant_filter, user_filter, dry_run, owners_total, owners_done, owners_skipped, counts, llm_calls, errors, host
		FROM engram_op_runs($1)`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing consolidation runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunRecord, error) {
		var x RunRecord
		err := r.Scan(&x.ID, &x.Resumes, &x.RootID, &x.StartedAt, &x.FinishedAt, &x.Status, &x.Tenant, &x.User,
			&x.DryRun, &x.Owners, &x.OwnersDone, &x.OwnersSkipped, &x.Counts, &x.LLMCalls, &x.Errors, &x.Host)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing consolidation runs: %w", err)
	}
	return out, nil
}

// RunServedSince reports whether an unfiltered, real run started at or after since
// and is running or completed (another replica served a schedule tick).
func (s *Store) RunServedSince(ctx context.Context, since time.Time) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT engram_op_run_served_since($1)`, since).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("reading recent consolidation runs: %w", err)
	}
	return ok, nil
}
