package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/migrations"
)

// The application role cannot lift its own guard: every way it might reach another
// tenant's rows or loosen row-level security fails (issue 12, item 6).
func TestAppRoleCannotLiftItsGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	for _, tenant := range []string{"acme", "globex"} {
		if err := s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			_, err := tx.InsertTurn(ctx, memory.Turn{TurnID: "t-" + tenant, UserID: "u-" + tenant, SessionID: "s1",
				Role: memory.RoleUser, Content: "hello from " + tenant, OccurredAt: time.Now()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	fails := []struct {
		name, sql string
	}{
		{"lift forced RLS", `ALTER TABLE owners NO FORCE ROW LEVEL SECURITY`},
		{"disable RLS", `ALTER TABLE turns DISABLE ROW LEVEL SECURITY`},
		{"drop the policy", `DROP POLICY tenant_isolation ON owners`},
		{"add a policy", `CREATE POLICY open ON turns USING (true)`},
		{"create a table", `CREATE TABLE stash (x text)`},
		{"create a function", `CREATE FUNCTION peek() RETURNS int LANGUAGE sql AS 'SELECT 1'`},
		{"create a schema", `CREATE SCHEMA mine`},
		{"become the owner", `SET ROLE engram`},
		{"write run records", `INSERT INTO consolidation_runs (status) VALUES ('running')`},
		{"read run errors", `SELECT errors FROM consolidation_runs`},
		{"rewrite the audit log", `UPDATE audit_log SET actor = 'x'`},
		{"record another tenant's progress", `INSERT INTO consolidation_progress (root_id, tenant, user_id, run_id) VALUES (1, 'globex', 'u-globex', 1)`},
		{"write another tenant's owner", `INSERT INTO owners (tenant, user_id) VALUES ('globex', 'intruder')`},
		{"record a migration", `INSERT INTO engram_migrations (version, name, checksum) VALUES (999, 'x', 'x')`},
	}
	for _, f := range fails {
		t.Run(f.name, func(t *testing.T) {
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SELECT set_config('engram.tenant', 'acme', true)`); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, f.sql)
				return err
			})
			if err == nil {
				t.Fatalf("%s: succeeded as the application role", f.sql)
			}
		})
	}

	// The old operator switch is just an unknown setting now: setting it reads nothing
	// of another tenant, nor does a transaction without a tenant.
	for _, tenant := range []string{"acme", ""} {
		var n int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('engram.operator', 'on', true), set_config('engram.tenant', $1, true)`, tenant); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM owners WHERE tenant = 'globex')
				+ (SELECT count(*) FROM turns WHERE tenant = 'globex')`).Scan(&n)
		})
		if err != nil || n != 0 {
			t.Errorf("tenant %q with engram.operator on reads %d of globex's rows (%v), want 0", tenant, n, err)
		}
	}

	// The narrow operator path still lists every owner (and nothing more).
	var owners []string
	rows, err := pool.Query(ctx, `SELECT tenant || '/' || user_id FROM engram_op_owners('', '', 0)`)
	if err == nil {
		owners, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || strings.Join(owners, ",") != "acme/u-acme,globex/u-globex" {
		t.Fatalf("engram_op_owners = %v, %v", owners, err)
	}
}

// Connect refuses the owner role, naming it and what is wrong.
func TestConnectRefusesTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owner := pgtest.OwnerDatabaseURL(t)
	pool, err := memory.Connect(ctx, owner, 2)
	if err == nil {
		pool.Close()
		t.Fatal("Connect accepted the owner role")
	}
	if !errors.Is(err, memory.ErrRole) || !strings.Contains(err.Error(), `"engram"`) || !strings.Contains(err.Error(), "owns") {
		t.Fatalf("Connect(owner) = %v, want ErrRole naming the role and what it owns", err)
	}
}

// The application role cannot run the migrations: it may create nothing.
func TestAppRoleCannotMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app := pgtest.AppURLOf(t, pgtest.EmptyURL(t))
	conn, err := pgx.Connect(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := migrations.Migrate(ctx, conn); err == nil {
		t.Fatal("the application role applied the migrations")
	}
}

// Every table that holds a tenant or a user id is under forced row-level security,
// also those later migrations add.
func TestEveryTenantTableIsForced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	rows, err := pool.Query(ctx, `SELECT DISTINCT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p') AND a.attname IN ('tenant', 'tenant_filter', 'user_id', 'user_filter')
		  AND NOT (c.relrowsecurity AND c.relforcerowsecurity)`)
	if err != nil {
		t.Fatal(err)
	}
	open, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Fatalf("tables with tenant or user ids but no forced row-level security: %v", open)
	}
}
