// Package pgtest gives each test its own real PostgreSQL database, cloned from a
// template that is migrated once per migration set (keyed by its fingerprint), so
// tests run in parallel against real PostgreSQL without seeing each other's rows.
//
// Each database is made as production makes one: created and migrated by the owner
// role, and used by the tests through the application role (engram_app), which owns
// nothing, so forced row-level security binds the tests as it binds serve.
//
// The owner's server URL is ENGRAM_TEST_DATABASE_URL, else the project-local cluster
// of scripts/services.sh (role engram), started on demand; that role must be able to
// create databases and must not bypass row-level security. The application's is
// ENGRAM_TEST_APP_DATABASE_URL, else the owner's URL with the user engram_app and no
// password.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/migrations"
	"github.com/engramhq/engram/scripts"
)

// localPort is the project-local cluster's port: ENGRAM_PG_PORT, as scripts/services.sh
// reads it, or its default.
func localPort() int {
	if p, err := strconv.Atoi(os.Getenv("ENGRAM_PG_PORT")); err == nil && p > 0 {
		return p
	}
	return 55432
}

// DefaultURL is the project-local cluster's owner URL.
func DefaultURL() string {
	return fmt.Sprintf("postgres://engram@127.0.0.1:%d/engram?sslmode=disable", localPort())
}

// AppRole is the role the application connects as (migration 0008 grants to it).
const AppRole = "engram_app"

// templateOnce guards template creation per test binary; across binaries an
// advisory lock does. This is the one piece of package state, and it lives in test
// support code only.
var templateOnce struct {
	sync.Mutex
	done map[string]error
}

// ServerURL is the URL of the owner role, which creates, migrates and drops the
// test databases.
func ServerURL() string {
	if v := os.Getenv("ENGRAM_TEST_DATABASE_URL"); v != "" {
		return v
	}
	return DefaultURL()
}

// appServerURL is the URL of the application role.
func appServerURL() (string, error) {
	if v := os.Getenv("ENGRAM_TEST_APP_DATABASE_URL"); v != "" {
		return v, nil
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		return "", fmt.Errorf("parsing database URL: %w", err)
	}
	u.User = url.User(AppRole)
	return u.String(), nil
}

func withDatabase(raw, db string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parsing database URL: %w", err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// connectAdmin connects to the server's base database, starting the project-local
// cluster when the default URL is in use and nothing answers.
// A cluster made before there were two roles lacks the application role: the
// services script creates it (idempotently) on the local cluster.
func connectAdmin(ctx context.Context) (*pgx.Conn, error) {
	raw := ServerURL()
	conn, err := pgx.Connect(ctx, raw)
	if err == nil {
		var ok bool
		if err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", AppRole).Scan(&ok); err == nil && ok {
			return conn, nil
		}
		conn.Close(ctx)
		if err == nil {
			err = fmt.Errorf("role %s does not exist (create it LOGIN NOSUPERUSER NOBYPASSRLS, as scripts/services.sh does)", AppRole)
		}
	}
	if raw != DefaultURL() {
		return nil, fmt.Errorf("connecting to %s: %w", redact(raw), err)
	}
	var out bytes.Buffer
	if serr := scripts.StartPostgres(ctx, localPort(), &out); serr != nil {
		return nil, fmt.Errorf("connecting to the local cluster: %w (and %v)\n%s", err, serr, out.String())
	}
	return pgx.Connect(ctx, raw)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// ensureTemplate creates the migrated template database once per fingerprint.
func ensureTemplate(ctx context.Context) (string, error) {
	m := migrations.Default()
	name := "engram_tmpl_" + m.Fingerprint()
	templateOnce.Lock()
	defer templateOnce.Unlock()
	if templateOnce.done == nil {
		templateOnce.done = map[string]error{}
	}
	if err, ok := templateOnce.done[name]; ok {
		return name, err
	}
	err := buildTemplate(ctx, name)
	templateOnce.done[name] = err
	return name, err
}

func buildTemplate(ctx context.Context, name string) error {
	admin, err := connectAdmin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	// Test binaries run in parallel; one builds, the others wait and then find it.
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('engram-pgtest-template', 0))"); err != nil {
		return fmt.Errorf("locking template creation: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended('engram-pgtest-template', 0))")
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("looking up template %s: %w", name, err)
	}
	if exists {
		return nil
	}
	// Build under a temporary name and rename when complete, so a crash midway never
	// leaves a half-migrated template behind.
	building := name + "_building"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{building}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping a stale template: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{building}.Sanitize()); err != nil {
		return fmt.Errorf("creating template %s: %w", building, err)
	}
	u, err := withDatabase(ServerURL(), building)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return fmt.Errorf("connecting to template %s: %w", building, err)
	}
	if err := migrations.Migrate(ctx, conn); err != nil {
		conn.Close(ctx)
		return fmt.Errorf("migrating template %s: %w", building, err)
	}
	conn.Close(ctx)
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("renaming template %s: %w", building, err)
	}
	return nil
}

// URL creates a fresh, migrated database for t and returns the application role's
// URL of it. The database is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	owner := OwnerDatabaseURL(t)
	return AppURLOf(t, owner)
}

// OwnerDatabaseURL creates a fresh, migrated database for t and returns the owner
// role's URL of it, for tests of what only the owner may do.
func OwnerDatabaseURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := ensureTemplate(ctx)
	if err != nil {
		t.Fatalf("pgtest: preparing the template database: %v", err)
	}
	return create(ctx, t, tmpl)
}

// AppURLOf is the application role's URL of the database of rawURL.
func AppURLOf(t testing.TB, rawURL string) string {
	t.Helper()
	return sameDatabase(t, rawURL, appServerURL)
}

// OwnerURLOf is the owner role's URL of the database of rawURL.
func OwnerURLOf(t testing.TB, rawURL string) string {
	t.Helper()
	return sameDatabase(t, rawURL, func() (string, error) { return ServerURL(), nil })
}

func sameDatabase(t testing.TB, rawURL string, server func() (string, error)) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("pgtest: parsing database URL: %v", err)
	}
	srv, err := server()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	out, err := withDatabase(srv, strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return out
}

// EmptyURL creates a fresh database with no migrations applied (the extensions the
// cluster installs in template1 are there), for testing migrations themselves. The
// URL is the owner role's: migrations run as the owner.
func EmptyURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return create(ctx, t, "template1")
}

func create(ctx context.Context, t testing.TB, tmpl string) string {
	t.Helper()
	admin, err := connectAdmin(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "engram_t_" + sanitize(t.Name()) + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize()); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin, err := connectAdmin(ctx)
		if err != nil {
			t.Logf("pgtest: dropping %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		// The application role's connections may still be closing; FORCE ends those
		// left when the owner may signal them (pg_signal_backend, as scripts/services.sh
		// grants it), and otherwise the drop is retried for a while.
		for attempt := 0; ; attempt++ {
			_, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			if err == nil {
				return
			}
			if attempt == 50 || ctx.Err() != nil {
				t.Logf("pgtest: dropping %s: %v", name, err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	u, err := withDatabase(ServerURL(), name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}

// Pool creates a fresh database for t and returns an application pool on it (pgvector
// types registered, role checked), closed when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := memory.Connect(ctx, u, 8)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// OwnerExec runs a statement as the owner role on the database of pool, in a
// transaction of tenant: tests use it to set up states the application role may not
// write (run records of a process that died). Row-level security binds the owner too,
// except on the operator tables (migration 0008).
func OwnerExec(t testing.TB, pool *pgxpool.Pool, tenant, sql string, args ...any) {
	t.Helper()
	owner := OwnerURLOf(t, pool.Config().ConnString())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatalf("pgtest: connecting as the owner: %v", err)
	}
	defer conn.Close(ctx)
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: as the owner: %s: %v", sql, err)
	}
}

// OwnerCount is OwnerExec for a query returning one integer.
func OwnerCount(t testing.TB, pool *pgxpool.Pool, tenant, sql string, args ...any) int {
	t.Helper()
	owner := OwnerURLOf(t, pool.Config().ConnString())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatalf("pgtest: connecting as the owner: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
			return err
		}
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	})
	if err != nil {
		t.Fatalf("pgtest: as the owner: %s: %v", sql, err)
	}
	return n
}

// DataDir is the data directory of the cluster the tests use, when this process can
// read it: ENGRAM_TEST_PGDATA, else the project-local cluster's (scripts/services.sh
// records where it lives in .engram/location), else "" (a remote server).
func DataDir() string {
	if v := os.Getenv("ENGRAM_TEST_PGDATA"); v != "" {
		return v
	}
	if os.Getenv("ENGRAM_TEST_DATABASE_URL") != "" {
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, ".engram", "location")); err == nil {
			d := filepath.Join(strings.TrimSpace(string(b)), "data")
			if servesTests(d) {
				return d
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// servesTests reports whether the cluster of data directory d is running and is the one
// the tests connect to: the local folder may hold a stopped cluster while another
// serves the port, and scanning the wrong files would prove nothing.
func servesTests(d string) bool {
	pid, err := os.ReadFile(filepath.Join(d, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(pid), "\n")
	if len(lines) < 4 {
		return false
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		return false
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if strings.TrimSpace(lines[3]) != port {
		return false
	}
	// A cluster killed without a clean shutdown leaves its postmaster.pid behind.
	n, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || n <= 0 {
		return false
	}
	err = syscall.Kill(n, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Store is a memory.Store on a fresh database.
func Store(t testing.TB) *memory.Store {
	t.Helper()
	return memory.NewStore(Pool(t))
}

// Exec runs a statement in a transaction of tenant on pool (row-level security
// applies): tests use it to set up states that no store method produces.
func Exec(t testing.TB, pool *pgxpool.Pool, tenant, sql string, args ...any) {
	t.Helper()
	if err := inTenant(pool, tenant, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Held returns release as a function that may be called more than once, and calls it
// when the test ends: a test that fails while it holds a connection, a lock or an open
// transaction must still give it back, or the pool could not close and the test
// database could not be dropped (the package would hang until its timeout).
func Held(t testing.TB, release func()) func() {
	release = sync.OnceFunc(release)
	t.Cleanup(release)
	return release
}

// Count runs a query returning one integer in a transaction of tenant on pool.
func Count(t testing.TB, pool *pgxpool.Pool, tenant, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := inTenant(pool, tenant, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	}); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	return n
}

func inTenant(pool *pgxpool.Pool, tenant string, fn func(context.Context, pgx.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// Embedder is what SeedEpisode needs of an embedding model (llm.HashEmbedder fits).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// SeedEpisode stores a user turn of session "s1" and an episodic memory made from it,
// as the extractor and the resolver would, with its embedding under emb; it returns the
// memory's id.
func SeedEpisode(t testing.TB, ctx context.Context, s *memory.Store, emb Embedder, tenant, user, content string, at time.Time) uuid.UUID {
	t.Helper()
	vs, err := emb.Embed(ctx, []string{content})
	if err != nil {
		t.Fatal(err)
	}
	turnID := "turn-" + uuid.NewString()
	var id uuid.UUID
	err = s.InTx(ctx, tenant, func(tx *memory.Tx) error {
		if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: turnID, UserID: user, SessionID: "s1", Role: memory.RoleUser,
			Content: content, OccurredAt: at, TaskID: "task-" + user}); err != nil {
			return err
		}
		m, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: user, Scope: memory.ScopeUser, Type: memory.Episodic,
			Category: memory.CatEvent, Content: content, Importance: 0.6, Confidence: 0.8, ValidFrom: at,
			Source: memory.SourceUser, SourceTurnIDs: []string{turnID}, CandidateID: "seed-" + uuid.NewString(),
			Embeddings: []memory.Embedding{{Model: emb.Model(), Vector: vs[0]}}, Actor: "test"})
		id = m.ID
		return err
	})
	if err != nil {
		t.Fatalf("seeding %q: %v", content, err)
	}
	return id
}
