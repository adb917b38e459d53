package memory

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
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
// pgvector type is looked up on every new connection), and the role must be one that
// row-level security binds and that cannot lift it: see CheckRole.
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

// ConnectOwner opens a pool as the owner role, for maintenance the application role
// may not do (VACUUM after an erasure, the benchmarks' ANALYZE and index builds).
// Forced row-level security binds the owner too on every tenant table; only the
// operator tables let it see across tenants. Request paths never use it.
func ConnectOwner(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing the owner's database URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		return pgxvec.RegisterTypes(ctx, c)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL as the owner: %w", err)
	}
	var owner bool
	if err := pool.QueryRow(ctx, `SELECT pg_has_role(current_user, relowner, 'MEMBER') FROM pg_class
		WHERE oid = to_regclass('memories')`).Scan(&owner); err != nil || !owner {
		pool.Close()
		if err == nil {
			err = errors.New("it does not own the table memories")
		}
		return nil, fmt.Errorf("%w: the owner's database URL is not the owner role's: %v", ErrRole, err)
	}
	return pool, nil
}

// ErrRole is the error CheckRole wraps: the role could bypass or lift row-level
// security.
var ErrRole = errors.New("memory: unsafe database role")

// CheckRole fails unless the connected role is one that forced row-level security
// binds and that cannot lift it: not a superuser nor BYPASSRLS (nor a member of a
// role that is), owning nothing in the database (no table, function or schema, and
// not the database: an owner can ALTER TABLE ... NO FORCE ROW LEVEL SECURITY) and
// unable to create objects in a schema. The migrations run as the owner role; the
// application connects as engram_app (migration 0008).
func CheckRole(ctx context.Context, pool *pgxpool.Pool) error {
	var name, db string
	var privileged, ownsDB, canCreate bool
	var owned []string
	err := pool.QueryRow(ctx, `SELECT current_user, current_database(),
		EXISTS (SELECT 1 FROM pg_roles r WHERE (r.rolsuper OR r.rolbypassrls) AND pg_has_role(current_user, r.oid, 'MEMBER')),
		(SELECT pg_has_role(current_user, d.datdba, 'MEMBER') FROM pg_database d WHERE d.datname = current_database()),
		EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
			AND has_schema_privilege(n.oid, 'CREATE')),
		ARRAY(SELECT o FROM (
			SELECT 'table ' || c.relname AS o FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema' AND pg_has_role(current_user, c.relowner, 'MEMBER')
			UNION ALL
			SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema' AND pg_has_role(current_user, p.proowner, 'MEMBER')
			UNION ALL
			SELECT 'schema ' || n.nspname FROM pg_namespace n
			WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema' AND pg_has_role(current_user, n.nspowner, 'MEMBER')
		) x ORDER BY o NOT LIKE 'table %', o LIMIT 4)`).Scan(&name, &db, &privileged, &ownsDB, &canCreate, &owned)
	if err != nil {
		return fmt.Errorf("checking the database role: %w", err)
	}
	const fix = "connect serve and the workers as the application role (engram_app: LOGIN NOSUPERUSER NOBYPASSRLS, " +
		"owning nothing) and run the migrations as the owner role (ENGRAM_MIGRATE_DATABASE_URL)"
	switch {
	case privileged:
		return fmt.Errorf("%w: the database role %q bypasses row-level security (superuser or BYPASSRLS, or a member of such a role): %s",
			ErrRole, name, fix)
	case len(owned) > 0:
		return fmt.Errorf("%w: the database role %q owns objects in database %q (%s) and could lift their row-level security: %s",
			ErrRole, name, db, strings.Join(owned, ", "), fix)
	case ownsDB:
		return fmt.Errorf("%w: the database role %q owns database %q: %s", ErrRole, name, db, fix)
	case canCreate:
		return fmt.Errorf("%w: the database role %q may create objects in a schema of database %q: %s", ErrRole, name, db, fix)
	}
	return nil
}

// Store is the PostgreSQL store of memories and turns.
type Store struct {
	pool    *pgxpool.Pool
	indexes *ownerIndexes // the resolver's view of the owner indexes (memory/hnsw_resolve.go)
	census  *censusCache  // the last census of memories (memory/census.go)
}

// NewStore wraps a pool opened with Connect.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, indexes: &ownerIndexes{}, census: &censusCache{}}
}

// Pool is the store's pool, for test harnesses that set up states no store method
// produces (memory/pgtest). Production code runs SQL only through store methods.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tx is a transaction bound to one tenant: row-level security sees only its rows.
type Tx struct {
	tx      pgx.Tx
	tenant  string
	indexes *ownerIndexes // the store's; nil reads the registry every time
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
	if err := fn(&Tx{tx: tx, tenant: tenant, indexes: s.indexes}); err != nil {
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
