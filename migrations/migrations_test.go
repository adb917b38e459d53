package migrations_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/migrations"
)

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestMigrateFromZeroAndAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.EmptyURL(t))
	m := migrations.Default()

	st, err := m.Status(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Applied {
			t.Fatalf("migration %d applied on an empty database", s.Version)
		}
	}
	done, err := m.Up(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != len(m.Migrations()) {
		t.Fatalf("applied %d migrations, want %d", len(done), len(m.Migrations()))
	}
	again, err := m.Up(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("second run applied %d migrations, want none", len(again))
	}
	st, err = m.Status(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if !s.Applied || s.AppliedAt.IsZero() {
			t.Fatalf("migration %d not recorded as applied", s.Version)
		}
	}
	for _, table := range []string{"turns", "memories", "memory_versions", "memory_lineage", "memory_embeddings", "turn_embeddings", "audit_log", "applied_candidates", "owners", "retrievals", "session_summaries"} {
		var forced bool
		if err := conn.QueryRow(ctx, "SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE relname = $1", table).Scan(&forced); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if !forced {
			t.Errorf("table %s lacks forced row-level security", table)
		}
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	counts := make([]int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close(ctx)
			done, err := migrations.Default().Up(ctx, conn)
			errs[i], counts[i] = err, len(done)
		}()
	}
	wg.Wait()
	total := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrator %d: %v", i, err)
		}
		total += counts[i]
	}
	if want := len(migrations.Default().Migrations()); total != want {
		t.Fatalf("migrations applied %d times in all, want exactly %d", total, want)
	}
}

func TestChangedMigrationRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.EmptyURL(t))
	one := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x int);")}}
	m, err := migrations.New(one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx, conn); err != nil {
		t.Fatal(err)
	}
	changed := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x bigint);")}}
	m2, err := migrations.New(changed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Up(ctx, conn); err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("want a changed-migration error, got %v", err)
	}
	// A stored checksum someone shortened by hand is an error too, not a panic.
	if _, err := conn.Exec(ctx, "UPDATE engram_migrations SET checksum = 'x' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx, conn); err == nil || !strings.Contains(err.Error(), "applied x)") {
		t.Fatalf("want a changed-migration error naming the stored checksum, got %v", err)
	}
	if _, err := conn.Exec(ctx, "UPDATE engram_migrations SET checksum = $1 WHERE version = 1", m.Migrations()[0].Checksum); err != nil {
		t.Fatal(err)
	}
	// A database ahead of the binary is refused too.
	two := fstest.MapFS{"0001_a.sql": one["0001_a.sql"], "0002_b.sql": {Data: []byte("SELECT 1;")}}
	m3, _ := migrations.New(two)
	if _, err := m3.Up(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx, conn); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Fatalf("want an unknown-migration error, got %v", err)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.EmptyURL(t))
	fsys := fstest.MapFS{
		"0001_ok.sql":  {Data: []byte("CREATE TABLE ok (x int);")},
		"0002_bad.sql": {Data: []byte("CREATE TABLE half (x int); SELECT nonsense FROM nowhere;")},
	}
	m, err := migrations.New(fsys)
	if err != nil {
		t.Fatal(err)
	}
	done, err := m.Up(ctx, conn)
	if err == nil || !strings.Contains(err.Error(), "0002_bad") {
		t.Fatalf("want an error naming 0002_bad, got %v", err)
	}
	if len(done) != 1 {
		t.Fatalf("applied %d, want 1", len(done))
	}
	var half bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('half') IS NOT NULL").Scan(&half); err != nil {
		t.Fatal(err)
	}
	if half {
		t.Fatal("a failed migration left its table behind")
	}
}

func TestNewRefusesBadSets(t *testing.T) {
	t.Parallel()
	sql := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"gap", fstest.MapFS{"0001_a.sql": sql, "0003_c.sql": sql}, "gap"},
		{"duplicate", fstest.MapFS{"0001_a.sql": sql, "0001_b.sql": sql}, "duplicate"},
		{"not from one", fstest.MapFS{"0002_a.sql": sql}, "gap"},
		{"bad name", fstest.MapFS{"1_a.sql": sql}, "name must look like"},
		{"empty", fstest.MapFS{}, "no migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := migrations.New(tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error containing %q, got %v", tt.want, err)
			}
		})
	}
}

func TestEmbeddedSetIsValid(t *testing.T) {
	t.Parallel()
	m := migrations.Default()
	if len(m.Migrations()) == 0 || m.Fingerprint() == "" {
		t.Fatal("no embedded migrations")
	}
}
