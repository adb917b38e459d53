package memory

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// Errors callers can test for with errors.Is.
var (
	ErrNoTenant  = errors.New("memory: no tenant given")
	ErrNotFound  = errors.New("memory: not found")
	ErrBadTenant = errors.New("memory: invalid tenant")
	ErrInvalid   = errors.New("memory: invalid input")
)

// CheckTenant validates a tenant id; an empty one is ErrNoTenant.
func CheckTenant(tenant string) error {
	if tenant == "" {
		return ErrNoTenant
	}
	if !ValidID(tenant, MaxIDLength) {
		return fmt.Errorf("%w %q: want 1-128 characters of [A-Za-z0-9._:@-]", ErrBadTenant, tenant)
	}
	return nil
}

// Connect opens a pool for the application. Migrations must have run first (the
// pgvector type is looked up on every new connection), and the role must be bound
// by row-level security: a superuser or BYPASSRLS role is refused, because tenant
// isolation would silently stop holding.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing the database URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		return pgxvec.RegisterTypes(ctx, c)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := CheckRole(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// CheckRole fails when the connected role bypasses row-level security.
func CheckRole(ctx context.Context, pool *pgxpool.Pool) error {
	var name string
	var super, bypass bool
	err := pool.QueryRow(ctx, `SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`).
		Scan(&name, &super, &bypass)
	if err != nil {
		return fmt.Errorf("checking the database role: %w", err)
	}
	if super || bypass {
		return fmt.Errorf("the database role %q bypasses row-level security (superuser or BYPASSRLS): "+
			"connect as a role without those attributes so tenants stay isolated", name)
	}
	return nil
}

// Store is the PostgreSQL store of memories and turns.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore wraps a pool opened with Connect.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Pool is the store's pool, for test harnesses that set up states no store method
// produces (memory/pgtest). Production code runs SQL only through store methods.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tx is a transaction bound to one tenant: row-level security sees only its rows.
type Tx struct {
	tx     pgx.Tx
	tenant string
}

// Tenant is the transaction's tenant.
func (t *Tx) Tenant() string { return t.tenant }

// InTx runs fn in one transaction with the tenant set for row-level security, and
// commits when fn returns nil.
func (s *Store) InTx(ctx context.Context, tenant string, fn func(*Tx) error) error {
	return s.InTxWith(ctx, tenant, pgx.TxOptions{}, fn)
}

// InTxWith is InTx with transaction options, e.g. a repeatable-read, read-only
// snapshot for an export.
func (s *Store) InTxWith(ctx context.Context, tenant string, opts pgx.TxOptions, fn func(*Tx) error) error {
	if err := CheckTenant(tenant); err != nil {
		return err
	}
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
		return fmt.Errorf("setting the tenant: %w", err)
	}
	if err := fn(&Tx{tx: tx, tenant: tenant}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}

// IsRetryable reports whether err is a transient database failure worth retrying
// (connection loss, serialization failure, deadlock, shutdown).
func IsRetryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", "57P01", "57P02", "57P03", "53300", "08000", "08003", "08006":
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr) || pgconn.SafeToRetry(err) || errors.Is(err, context.DeadlineExceeded)
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// ContentHash is what the audit log keeps instead of content.
func ContentHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func nowUTC() time.Time { return time.Now().UTC() }
