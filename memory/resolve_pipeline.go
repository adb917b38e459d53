package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A pipelined transaction (InOwnerTx) saves round trips, which bound the resolver
// (each costs a wake-up of a PostgreSQL backend, 1–3 ms on a loaded machine; a
// candidate took 12–14 of them): statements whose result only matters as an error —
// BEGIN, the tenant, the owner's lock, lineage, vectors, audit rows, the ledger row,
// COMMIT — are queued and sent with the next statement that needs an answer, in one
// batch, in order. Order and atomicity are those of the plain transaction: every
// statement goes through pipeTx, which sends what is queued before anything else, and
// an error in a queued statement fails the statement it was sent with (and, the
// transaction being aborted, the commit).

// ErrAlreadyRecorded is what a pipelined transaction fails with when RecordCandidate
// found the candidate already in the ledger (another transaction recorded it first):
// the caller rolls back and replays the recorded decision.
var ErrAlreadyRecorded = errors.New("memory: candidate already recorded")

// queued is a statement sent with the next one that needs an answer.
type queued struct {
	sql  string
	args []any
	what string // what it does, for its error
	// unique, when not nil, is the error a unique violation of the statement means.
	// A check of the result would come too late: the statements after it, COMMIT
	// included, have run by the time it is read, so only a server-side error may
	// stop the transaction.
	unique error
}

// pipeTx is a pgx.Tx that queues statements until one needs an answer. It begins the
// transaction in its first batch.
type pipeTx struct {
	conn  *pgxpool.Conn
	opts  pgx.TxOptions
	tx    pgx.Tx // nil until the first batch is sent
	q     []queued
	ended bool
}

var _ pgx.Tx = (*pipeTx)(nil)

func (p *pipeTx) queue(q queued) { p.q = append(p.q, q) }

// send sends BEGIN (the first time), the queued statements and extra in one batch and
// reads the queued ones' results; the caller reads extra's and closes the results.
func (p *pipeTx) send(ctx context.Context, extra []*pgx.QueuedQuery) (pgx.BatchResults, error) {
	if p.ended {
		return nil, pgx.ErrTxClosed
	}
	b := &pgx.Batch{}
	begin := p.tx == nil
	if begin {
		b.BeginTx(p.opts)
	}
	for _, q := range p.q {
		b.Queue(q.sql, q.args...)
	}
	b.QueuedQueries = append(b.QueuedQueries, extra...)
	pending := p.q
	p.q = nil
	br := p.conn.SendBatch(ctx, b)
	if begin {
		p.tx = br.Tx()
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("beginning a transaction: %w", err)
		}
	}
	for _, q := range pending {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if q.unique != nil && IsUniqueViolation(err) {
				err = fmt.Errorf("%w (%v)", q.unique, err)
			}
			return nil, fmt.Errorf("%s: %w", q.what, err)
		}
	}
	return br, nil
}

// direct reports whether nothing is queued, so a statement can go straight to the
// transaction.
func (p *pipeTx) direct() bool { return p.tx != nil && len(p.q) == 0 && !p.ended }

func (p *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.direct() {
		return p.tx.Exec(ctx, sql, args...)
	}
	br, err := p.send(ctx, []*pgx.QueuedQuery{{SQL: sql, Arguments: args}})
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (p *pipeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.direct() {
		return p.tx.Query(ctx, sql, args...)
	}
	br, err := p.send(ctx, []*pgx.QueuedQuery{{SQL: sql, Arguments: args}})
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (p *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.direct() {
		return p.tx.QueryRow(ctx, sql, args...)
	}
	br, err := p.send(ctx, []*pgx.QueuedQuery{{SQL: sql, Arguments: args}})
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

func (p *pipeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if p.direct() {
		return p.tx.SendBatch(ctx, b)
	}
	br, err := p.send(ctx, b.QueuedQueries)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return br
}

// flush sends what is queued.
func (p *pipeTx) flush(ctx context.Context) error {
	if p.direct() {
		return nil
	}
	br, err := p.send(ctx, nil)
	if err != nil {
		return err
	}
	return br.Close()
}

func (p *pipeTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.tx.Begin(ctx)
}

func (p *pipeTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := p.flush(ctx); err != nil {
		return 0, err
	}
	return p.tx.CopyFrom(ctx, table, cols, src)
}

func (p *pipeTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.tx.Prepare(ctx, name, sql)
}

func (p *pipeTx) LargeObjects() pgx.LargeObjects {
	if p.tx == nil {
		_ = p.flush(context.Background())
	}
	return p.tx.LargeObjects()
}

func (p *pipeTx) Conn() *pgx.Conn { return p.conn.Conn() }

// Commit sends what is queued and COMMIT in one batch. A transaction that never sent
// a statement has nothing to commit.
func (p *pipeTx) Commit(ctx context.Context) error {
	if p.ended {
		return pgx.ErrTxClosed
	}
	if p.tx == nil && len(p.q) == 0 {
		p.ended = true
		return nil
	}
	br, err := p.send(ctx, []*pgx.QueuedQuery{{SQL: "commit"}})
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	p.ended = true
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback drops what is queued and rolls back what was sent.
func (p *pipeTx) Rollback(ctx context.Context) error {
	p.q = nil
	if p.ended {
		return pgx.ErrTxClosed
	}
	p.ended = true
	if p.tx == nil {
		return nil
	}
	return p.tx.Rollback(ctx)
}

// batchRows closes the batch with the rows.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// later runs a statement whose result only matters as an error: queued in a pipelined
// transaction, at once otherwise.
func (t *Tx) later(ctx context.Context, what, sql string, args ...any) error {
	if p, ok := t.tx.(*pipeTx); ok {
		p.queue(queued{sql: sql, args: args, what: what})
		return nil
	}
	if _, err := t.tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Pipelined reports whether t queues statements (InOwnerTx).
func (t *Tx) Pipelined() bool {
	_, ok := t.tx.(*pipeTx)
	return ok
}

// InOwnerTx is InTx for a writer of one owner's memories, with the owner's lock
// (LockOwner(lockKey)) taken first, and pipelined: BEGIN, the tenant and the lock go
// with the first statement fn sends, statements whose result only matters as an error
// go with the next one that needs an answer, and COMMIT with the last of them. The
// effects are those of InTx with LockOwner; what differs is that an error of a queued
// statement is returned by a later call (or the commit), and that RecordCandidate
// reports a candidate already recorded as ErrAlreadyRecorded from there instead of
// returning false.
func (s *Store) InOwnerTx(ctx context.Context, tenant, lockKey string, fn func(*Tx) error) error {
	// Generic plans for the transaction (PreferGenericPlans' reason): PostgreSQL kept
	// re-planning the nearest-memories statement for each candidate (0.4 ms a time, a
	// tenth of the resolver's database time at 1,000 owners × 1,000 memories), while its
	// generic plan is the one measured: the owner's index, then the exact distances. An
	// owner's HNSW read runs its generic plan too (it names the owner by literals,
	// ownerIndexPredicate) and only turns sorting off for itself.
	return s.inPipelinedTx(ctx, tenant, func(t *Tx) error {
		if err := t.LockOwner(ctx, lockKey); err != nil {
			return err
		}
		return fn(t)
	})
}

// InReadTx is InTx for a read path (a search, a context call): pipelined like
// InOwnerTx without a lock, so BEGIN, the tenant and the choice of generic plans
// (PreferGenericPlans) go with the first statement fn sends instead of costing a
// round trip each, a large part of a search that reads an owner of a thousand
// memories in a few milliseconds.
func (s *Store) InReadTx(ctx context.Context, tenant string, fn func(*Tx) error) error {
	return s.inPipelinedTx(ctx, tenant, fn)
}

// inPipelinedTx runs fn in a pipelined transaction of tenant with generic plans.
func (s *Store) inPipelinedTx(ctx context.Context, tenant string, fn func(*Tx) error) error {
	if err := CheckTenant(tenant); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	p := &pipeTx{conn: conn}
	defer func() {
		_ = p.Rollback(ctx)
		conn.Release()
	}()
	t := &Tx{tx: p, tenant: tenant, indexes: s.indexes}
	p.queue(queued{sql: "SELECT set_config('engram.tenant', $1, true), set_config('plan_cache_mode', 'force_generic_plan', true)",
		args: []any{tenant}, what: "setting the tenant"})
	if err := fn(t); err != nil {
		return err
	}
	if err := p.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}
