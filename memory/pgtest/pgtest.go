// Package pgtest gives each test its own real PostgreSQL database, cloned from a
// template that is migrated once per migration set (keyed by its fingerprint), so
// tests run in parallel against real PostgreSQL without seeing each other's rows.
//
// The server is ENGRAM_TEST_DATABASE_URL, else ENGRAM_DATABASE_URL, else the
// project-local cluster of scripts/services.sh, started on demand. The role must be
// able to create databases and must not bypass row-level security.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
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

// DefaultURL is the project-local cluster's application URL.
func DefaultURL() string {
	return fmt.Sprintf("postgres://engram@127.0.0.1:%d/engram?sslmode=disable", localPort())
}

// templateOnce guards template creation per test binary; across binaries an
// advisory lock does. This is the one piece of package state, and it lives in test
// support code only.
var templateOnce struct {
	sync.Mutex
	done map[string]error
}

// ServerURL is the URL tests connect to for administration.
func ServerURL() string {
	for _, k := range []string{"ENGRAM_TEST_DATABASE_URL", "ENGRAM_DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return DefaultURL()
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
func connectAdmin(ctx context.Context) (*pgx.Conn, error) {
	raw := ServerURL()
	conn, err := pgx.Connect(ctx, raw)
	if err == nil {
		return conn, nil
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

// URL creates a fresh, migrated database for t and returns its URL. The database is
// dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := ensureTemplate(ctx)
	if err != nil {
		t.Fatalf("pgtest: preparing the template database: %v", err)
	}
	return create(ctx, t, tmpl)
}

// EmptyURL creates a fresh database with no migrations applied (the extensions the
// cluster installs in template1 are there), for testing migrations themselves.
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
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: dropping %s: %v", name, err)
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
