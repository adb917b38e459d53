package consolidator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrRunInProgress is returned by Run when another consolidation run (in this or any
// other process) holds the run lock. Runs fail fast rather than queue: the nightly
// schedule fires in every replica, and exactly one of them should do the work.
var ErrRunInProgress = errors.New("another consolidation run is in progress")

// runLockKey is the session advisory lock one run holds for its whole duration. Any
// constant works as long as no other advisory lock in engram uses it (migrations use
// ...01).
const runLockKey int64 = 0x656e6772616d02 // "engram" + 2

// Run statuses, as stored in consolidation_runs.
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// Counts are what a run (or one owner) did, per action. They are stored as jsonb in
// consolidation_runs.counts and consolidation_progress.counts.
type Counts struct {
	Episodes     int `json:"episodes"`     // unconsolidated episodes examined
	Clusters     int `json:"clusters"`     // clusters of at least MinCluster episodes
	Distilled    int `json:"distilled"`    // distilled candidates that added a memory
	Merged       int `json:"merged"`       // ... that confirmed, updated or superseded one
	Noop         int `json:"noop"`         // ... the resolver (or the LLM) found nothing new in
	Replayed     int `json:"replayed"`     // ... already in the ledger (a resumed run)
	Consolidated int `json:"consolidated"` // source episodes marked consolidated
	Expired      int `json:"expired"`      // TTL passed
	Decayed      int `json:"decayed"`      // importance decayed
	Archived     int `json:"archived"`     // unused for ArchiveAfter
	Capped       int `json:"capped"`       // archived to keep the owner under MaxPerOwner
	TurnsPurged  int `json:"turns_purged"` // raw turns whose content retention deleted
}

func (c *Counts) add(o Counts) {
	c.Episodes += o.Episodes
	c.Clusters += o.Clusters
	c.Distilled += o.Distilled
	c.Merged += o.Merged
	c.Noop += o.Noop
	c.Replayed += o.Replayed
	c.Consolidated += o.Consolidated
	c.Expired += o.Expired
	c.Decayed += o.Decayed
	c.Archived += o.Archived
	c.Capped += o.Capped
	c.TurnsPurged += o.TurnsPurged
}

// RunError is one owner's failure; the run goes on with the other owners, ends
// "failed", and the next run (within NightlyConfig.ResumeWithin) retries only what
// failed.
type RunError struct {
	Tenant string `json:"tenant,omitempty"`
	UserID string `json:"user_id,omitempty"`
	Error  string `json:"error"`
}

// RunReport is the outcome of one run.
type RunReport struct {
	RunID         int64      `json:"run_id"`
	Resumes       int64      `json:"resumes,omitempty"` // the interrupted/failed run this one finished
	Status        string     `json:"status"`
	DryRun        bool       `json:"dry_run"`
	Tenant        string     `json:"tenant,omitempty"`
	User          string     `json:"user,omitempty"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    time.Time  `json:"finished_at"`
	Owners        int        `json:"owners"`         // owners this run had to process
	OwnersDone    int        `json:"owners_done"`    // ... and finished
	OwnersSkipped int        `json:"owners_skipped"` // done already by the run it resumes
	Counts        Counts     `json:"counts"`
	LLMCalls      int        `json:"llm_calls"`
	Errors        []RunError `json:"errors,omitempty"`
}

// Duration is how long the run took.
func (r RunReport) Duration() time.Duration { return r.FinishedAt.Sub(r.StartedAt) }

// runLock is the run lock, held on a dedicated connection: a session advisory lock
// lives as long as the session, so a crashed process releases it by dying.
type runLock struct {
	conn *pgxpool.Conn
}

func acquireRunLock(ctx context.Context, pool *pgxpool.Pool) (*runLock, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquiring a connection for the run lock: %w", err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", runLockKey).Scan(&ok); err != nil {
		conn.Release()
		return nil, fmt.Errorf("taking the consolidation run lock: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, ErrRunInProgress
	}
	return &runLock{conn: conn}, nil
}

// release unlocks, or closes the connection when unlocking fails, so a pooled
// connection never goes back to the pool still holding the lock.
func (l *runLock) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", runLockKey); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}

// startRun closes stale runs, decides whether this run resumes an earlier one, and
// inserts its row. It runs under the run lock, so any row still "running" belongs to
// a process that died.
func (c *Consolidator) startRun(ctx context.Context, conn *pgxpool.Conn, opts RunOptions) (id, resumes, root int64, err error) {
	if _, err := conn.Exec(ctx, `UPDATE consolidation_runs r SET status = 'interrupted', finished_at = now(),
			owners_done = (SELECT count(*) FROM consolidation_progress p WHERE p.run_id = r.id),
			counts = coalesce((SELECT jsonb_object_agg(k, s) FROM (
				SELECT e.key AS k, sum(e.value::bigint) AS s
				FROM consolidation_progress p, jsonb_each_text(p.counts) e
				WHERE p.run_id = r.id GROUP BY e.key) x), '{}')
		WHERE status = 'running'`); err != nil {
		return 0, 0, 0, fmt.Errorf("closing stale consolidation runs: %w", err)
	}
	if !opts.DryRun && c.cfg.ResumeWithin > 0 {
		// Only the latest run with the same filters is resumed, and only while the chain
		// it belongs to is young: the next night starts afresh.
		var prevID, prevRoot int64
		var prevStatus string
		var rootAgeSecs float64
		err := conn.QueryRow(ctx, `SELECT r.id, root.id, r.status, extract(epoch FROM now() - root.started_at)::float8
			FROM consolidation_runs r JOIN consolidation_runs root ON root.id = coalesce(r.root_id, r.id)
			WHERE NOT r.dry_run AND r.tenant_filter = $1 AND r.user_filter = $2 ORDER BY r.id DESC LIMIT 1`,
			opts.Tenant, opts.User).Scan(&prevID, &prevRoot, &prevStatus, &rootAgeSecs)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return 0, 0, 0, fmt.Errorf("reading the last consolidation run: %w", err)
		case (prevStatus == RunInterrupted || prevStatus == RunFailed) && rootAgeSecs < c.cfg.ResumeWithin.Seconds():
			resumes, root = prevID, prevRoot
		}
	}
	host, _ := os.Hostname()
	var resumesArg, rootArg *int64
	if resumes != 0 {
		resumesArg, rootArg = &resumes, &root
	}
	err = conn.QueryRow(ctx, `INSERT INTO consolidation_runs (resumes, root_id, status, tenant_filter, user_filter, dry_run, host)
		VALUES ($1, $2, 'running', $3, $4, $5, $6) RETURNING id`,
		resumesArg, rootArg, opts.Tenant, opts.User, opts.DryRun, fmt.Sprintf("%s/%d", host, os.Getpid())).Scan(&id)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("recording the consolidation run: %w", err)
	}
	if root == 0 {
		root = id
		if _, err := conn.Exec(ctx, `UPDATE consolidation_runs SET root_id = id WHERE id = $1`, id); err != nil {
			return 0, 0, 0, fmt.Errorf("recording the consolidation run: %w", err)
		}
	}
	return id, resumes, root, nil
}

// owner is one (tenant, user_id) the run visits.
type owner struct {
	Tenant string
	UserID string
}

func (o owner) String() string {
	if o.UserID == "" {
		return o.Tenant + "/(agent and global)"
	}
	return o.Tenant + "/" + o.UserID
}

// listOwners returns the owners the run must visit (registry order, filtered) and how
// many the chain's earlier runs finished already.
func listOwners(ctx context.Context, conn *pgxpool.Conn, root int64, opts RunOptions) ([]owner, int, error) {
	// The registry is row-level secured like every tenant table: a query that sets
	// no tenant sees nothing. Enumerating owners across tenants is the one operator
	// read, and it says so explicitly, for this transaction only.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("listing owners: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT set_config('engram.operator', 'on', true)`); err != nil {
		return nil, 0, fmt.Errorf("listing owners: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT o.tenant, o.user_id,
			EXISTS (SELECT 1 FROM consolidation_progress p WHERE p.root_id = $3 AND p.tenant = o.tenant AND p.user_id = o.user_id)
		FROM owners o WHERE ($1 = '' OR o.tenant = $1) AND ($2 = '' OR o.user_id = $2)
		ORDER BY o.tenant, o.user_id`, opts.Tenant, opts.User, root)
	if err != nil {
		return nil, 0, fmt.Errorf("listing owners: %w", err)
	}
	defer rows.Close()
	var out []owner
	skipped := 0
	for rows.Next() {
		var o owner
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

// finishRun stores the final state of a run. It uses its own context: a cancelled
// run must still be recorded as interrupted.
func (c *Consolidator) finishRun(ctx context.Context, rep RunReport) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	errs := rep.Errors
	if errs == nil {
		errs = []RunError{}
	}
	_, err := c.store.Pool().Exec(ctx, `UPDATE consolidation_runs SET status = $2, finished_at = now(),
		owners_total = $3, owners_done = $4, owners_skipped = $5, counts = $6, llm_calls = $7, errors = $8
		WHERE id = $1`, rep.RunID, rep.Status, rep.Owners, rep.OwnersDone, rep.OwnersSkipped, rep.Counts,
		rep.LLMCalls, errs)
	if err != nil {
		return fmt.Errorf("recording the end of consolidation run %d: %w", rep.RunID, err)
	}
	return nil
}

// RunRecord is one row of consolidation_runs.
type RunRecord struct {
	ID            int64      `json:"id"`
	Resumes       *int64     `json:"resumes,omitempty"`
	RootID        int64      `json:"root_id"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	Status        string     `json:"status"`
	Tenant        string     `json:"tenant,omitempty"`
	User          string     `json:"user,omitempty"`
	DryRun        bool       `json:"dry_run"`
	Owners        int        `json:"owners"`
	OwnersDone    int        `json:"owners_done"`
	OwnersSkipped int        `json:"owners_skipped"`
	Counts        Counts     `json:"counts"`
	LLMCalls      int        `json:"llm_calls"`
	Errors        []RunError `json:"errors,omitempty"`
	Host          string     `json:"host,omitempty"`
}

// Runs lists the most recent runs, newest first.
func (c *Consolidator) Runs(ctx context.Context, limit int) ([]RunRecord, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := c.store.Pool().Query(ctx, `SELECT id, resumes, coalesce(root_id, id), started_at, finished_at, status,
		tenant_filter, user_filter, dry_run, owners_total, owners_done, owners_skipped, counts, llm_calls, errors, host
		FROM consolidation_runs ORDER BY id DESC LIMIT $1`, limit)
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
