package migrations_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/migrations"
)

// TestForgottenTurnsBackfill: migration 0015 marks the turns behind deletions made
// before it, from the audit log: a single memory's source turns, and every turn a user
// had stored before all their memories were forgotten; no other turn.
func TestForgottenTurnsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.EmptyURL(t))
	all := migrations.Default().Migrations()
	upTo := func(last int) *migrations.Migrator {
		fsys := fstest.MapFS{}
		for _, m := range all {
			if m.Version <= last {
				fsys[fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)] = &fstest.MapFile{Data: []byte(m.SQL)}
			}
		}
		m, err := migrations.New(fsys)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if _, err := upTo(14).Up(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT set_config('engram.tenant', 'acme', false)`); err != nil {
		t.Fatal(err)
	}
	for _, tu := range [][2]string{{"t1", "u1"}, {"t2", "u1"}, {"t3", "u2"}, {"t4", "u3"}} {
		if _, err := conn.Exec(ctx, `INSERT INTO turns (turn_id, user_id, session_id, role, content, content_hash, occurred_at)
			VALUES ($1, $2, 's', 'user', 'words', '\x00', now())`, tu[0], tu[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{`{"source_turn_ids": ["t1"]}`, `{"forget_user_memories": true}`} {
		subject := "u1"
		if d != `{"source_turn_ids": ["t1"]}` {
			subject = "u2"
		}
		if _, err := conn.Exec(ctx, `INSERT INTO audit_log (action, actor, module, subject, details)
			VALUES ('delete', 'test', 'test', $1, $2)`, subject, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := migrations.Default().Up(ctx, conn); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT turn_id FROM turns WHERE forgotten ORDER BY turn_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "t1" || got[1] != "t3" {
		t.Fatalf("forgotten turns %v, want [t1 t3]", got)
	}
}
