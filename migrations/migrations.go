// Package migrations holds engram's SQL schema as embedded, numbered migrations and
// applies them in order, each in its own transaction, under an advisory lock.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed *.sql
var embedded embed.FS

// lockKey serialises migrators across processes; any constant works as long as no
// other advisory lock in engram uses it.
const lockKey int64 = 0x656e6772616d01 // "engram" + 1

// Migration is one numbered SQL file.
type Migration struct {
	Version  int
	Name     string
	SQL      string
	Checksum string
}

// Status is a migration and whether (and when) it was applied.
type Status struct {
	Migration
	Applied   bool
	AppliedAt time.Time
}

// Migrator applies a fixed, validated list of migrations.
type Migrator struct {
	migrations []Migration
}

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// newMigrator reads migrations from fsys (files named NNNN_name.sql at its root). Versions
// must start at 1 and have no gap or duplicate.
func newMigrator(fsys fs.FS) (*Migrator, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: name must look like 0001_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", e.Name(), err)
		}
		sum := sha256.Sum256(body)
		ms = append(ms, Migration{Version: v, Name: m[2], SQL: string(body), Checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if i > 0 && ms[i-1].Version == m.Version {
			return nil, fmt.Errorf("duplicate migration version %d (%s and %s)", m.Version, ms[i-1].Name, m.Name)
		}
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration versions have a gap: expected %04d, found %04d_%s", i+1, m.Version, m.Name)
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations found")
	}
	return &Migrator{migrations: ms}, nil
}

// Default returns the migrator over engram's embedded migrations.
func Default() *Migrator {
	m, err := newMigrator(embedded)
	if err != nil {
		// The embedded set is fixed at build time and covered by tests.
		panic(fmt.Sprintf("engram's embedded migrations are invalid: %v", err))
	}
	return m
}

// Migrate applies engram's embedded migrations that conn's database lacks.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	_, err := Default().Up(ctx, conn)
	return err
}

// Fingerprint identifies the whole migration set; test templates are keyed by it.
func (m *Migrator) Fingerprint() string {
	h := sha256.New()
	for _, mig := range m.migrations {
		fmt.Fprintf(h, "%d:%s:%s\n", mig.Version, mig.Name, mig.Checksum)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

const createTable = `CREATE TABLE IF NOT EXISTS engram_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	checksum   text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Up applies every pending migration, each in its own transaction, and returns the
// ones it applied. Concurrent callers wait on an advisory lock, then find nothing to do.
func (m *Migrator) Up(ctx context.Context, conn *pgx.Conn) ([]Migration, error) {
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return nil, fmt.Errorf("taking the migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the unlock must run even when ctx was cancelled.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey)
	}()
	if _, err := conn.Exec(ctx, createTable); err != nil {
		return nil, fmt.Errorf("creating the migrations table: %w", err)
	}
	applied, err := m.applied(ctx, conn)
	if err != nil {
		return nil, err
	}
	var done []Migration
	for _, mig := range m.migrations {
		if a, ok := applied[mig.Version]; ok {
			if a.checksum != mig.Checksum {
				return done, fmt.Errorf("migration %04d_%s was changed after it was applied (checksum %s, applied %s)",
					mig.Version, mig.Name, short(mig.Checksum), short(a.checksum))
			}
			continue
		}
		if err := apply(ctx, conn, mig); err != nil {
			return done, err
		}
		done = append(done, mig)
	}
	return done, nil
}

func apply(ctx context.Context, conn *pgx.Conn, mig Migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("beginning migration %04d_%s: %w", mig.Version, mig.Name, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, mig.SQL); err != nil {
		return fmt.Errorf("applying migration %04d_%s: %w", mig.Version, mig.Name, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO engram_migrations (version, name, checksum) VALUES ($1, $2, $3)",
		mig.Version, mig.Name, mig.Checksum); err != nil {
		return fmt.Errorf("recording migration %04d_%s: %w", mig.Version, mig.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing migration %04d_%s: %w", mig.Version, mig.Name, err)
	}
	return nil
}

type appliedRow struct {
	checksum string
	at       time.Time
}

func (m *Migrator) applied(ctx context.Context, conn *pgx.Conn) (map[int]appliedRow, error) {
	rows, err := conn.Query(ctx, "SELECT version, checksum, applied_at FROM engram_migrations")
	if err != nil {
		return nil, fmt.Errorf("reading applied migrations: %w", err)
	}
	defer rows.Close()
	out := map[int]appliedRow{}
	for rows.Next() {
		var v int
		var r appliedRow
		if err := rows.Scan(&v, &r.checksum, &r.at); err != nil {
			return nil, fmt.Errorf("reading applied migrations: %w", err)
		}
		out[v] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading applied migrations: %w", err)
	}
	known := len(m.migrations)
	for v := range out {
		if v > known {
			return nil, fmt.Errorf("the database has migration %04d, which this engram does not know: upgrade engram", v)
		}
	}
	return out, nil
}

// Status lists every migration with whether it was applied.
func (m *Migrator) Status(ctx context.Context, conn *pgx.Conn) ([]Status, error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('engram_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return nil, fmt.Errorf("checking the migrations table: %w", err)
	}
	applied := map[int]appliedRow{}
	if exists {
		var err error
		if applied, err = m.applied(ctx, conn); err != nil {
			return nil, err
		}
	}
	out := make([]Status, 0, len(m.migrations))
	for _, mig := range m.migrations {
		a, ok := applied[mig.Version]
		out = append(out, Status{Migration: mig, Applied: ok, AppliedAt: a.at})
	}
	return out, nil
}

// short is the first 12 characters of a checksum, for messages (a stored one may be
// shorter when someone edited the table).
func short(checksum string) string {
	return checksum[:min(len(checksum), 12)]
}
