package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams/natstest"
)

// TestErasureReachesTheDisk: after DELETE /v1/users/{id} returns, neither the JetStream
// store directory nor the database's table files (heap, TOAST and index files of every
// table, by pg_relation_filepath) hold any of the user's distinctive strings, while
// another user's strings are still there (so the scans do read where the data is);
// before the deletion they held both (issue 12, item 4).
func TestErasureReachesTheDisk(t *testing.T) {
	t.Parallel()
	dataDir := pgtest.DataDir()
	if dataDir == "" {
		t.Skip("the PostgreSQL data directory is not readable here (set ENGRAM_TEST_PGDATA)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := natstest.Start(t)
	url := pgtest.URL(t)
	owner := pgtest.OwnerURLOf(t, url)
	cfg, err := LoadConfig(envMap(map[string]string{
		"ENGRAM_DATABASE_URL": url, "ENGRAM_MIGRATE_DATABASE_URL": owner, "ENGRAM_NATS_URL": ns.URL(),
		"ENGRAM_HTTP_ADDR": "127.0.0.1:0", "ENGRAM_DATA_DIR": t.TempDir(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t.Cleanup(app.Close)
	if err := app.openDB(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := app.openNATS(ctx, false); err != nil {
		t.Fatal(err)
	}
	n, tok := startTestNode(t, ctx, app)
	c := client.New(n.URL, tok)

	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	marks := func(user string) []string {
		var m []string
		for i := range 9 {
			m = append(m, fmt.Sprintf("%szq%03dx", user, i))
		}
		return m
	}
	gone, kept := marks("erased"), marks("keeper")
	var turns []client.Turn
	for _, u := range []struct {
		id    string
		marks []string
	}{{"erased", gone}, {"keeper", kept}} {
		turns = append(turns,
			client.Turn{UserID: u.id, SessionID: "s1", TaskID: "task-" + u.id, Role: client.RoleUser, OccurredAt: at,
				Content: "I prefer meetings in the " + u.marks[0] + " room on Tuesdays"},
			client.Turn{UserID: u.id, SessionID: "s1", TaskID: "task-" + u.id, Role: client.RoleUser, OccurredAt: at.Add(time.Minute),
				Content: "From now on always send the agenda to the " + u.marks[1] + " list a day before"},
			client.Turn{UserID: u.id, SessionID: "s1", TaskID: "task-" + u.id, Role: client.RoleAssistant, OccurredAt: at.Add(2 * time.Minute),
				Content: "Noted, " + u.marks[2] + " it is", Metadata: map[string]any{"note": u.marks[3]}},
		)
		// Long content goes to TOAST.
		turns = append(turns, client.Turn{UserID: u.id, SessionID: "s1", Role: client.RoleUser, OccurredAt: at.Add(3 * time.Minute),
			Content: "My travel diary: " + strings.Repeat("we walked along the river and talked about "+u.marks[4]+" again. ", 90)})
		if _, err := c.Remember(ctx, client.RememberRequest{UserID: u.id, Category: "preference",
			Content: "The user likes the " + u.marks[5] + " cafe near the office"}); err != nil {
			t.Fatal(err)
		}
		// Working memory: the tenant's task the user's turns name, and a task of the
		// user's own, written twice: the put that replaces a state deletes the old one
		// securely, and the erasure deletes the rest.
		if _, err := c.PutUserTaskState(ctx, u.id, "inbox", map[string]any{"step": "draft", "label": u.marks[8]}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutTaskState(ctx, "task-"+u.id, map[string]any{"step": "booking", "where": u.marks[6]}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutUserTaskState(ctx, u.id, "inbox", map[string]any{"step": "triage", "label": u.marks[7]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AddTurns(ctx, turns...); err != nil {
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.Count(t, app.Pool, "t1", `SELECT count(*) FROM memories WHERE user_id = 'erased'`); n == 0 {
		t.Fatal("the user has no memories: the test would prove little")
	}
	// Before: the rows are put into the table files (a rewrite writes its pages
	// directly, not through shared buffers), and the stream files get both users' turns.
	rewrite(t, ctx, owner)
	waitFor(t, ctx, func() bool {
		files := streamFiles(t, ns.StoreDir())
		return allIn(files, gone[:8]) && allIn(files, kept[:8])
	}, "both users' strings in the JetStream store")
	// The replaced task state (mark 8) was deleted securely by the put that replaced it.
	for _, f := range scanFiles(t, streamFiles(t, ns.StoreDir()), kept[8:]) {
		t.Errorf("a replaced task state is still in the JetStream store: %s", f)
	}
	before := scanFiles(t, relationFiles(t, ctx, owner, dataDir), gone)
	if len(before) == 0 {
		t.Fatal("before the erasure, no table file holds the user's strings: the scan would prove nothing")
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, n.URL+"/v1/users/erased", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE /v1/users/erased: %d %s", resp.StatusCode, body)
	}
	var rep struct {
		Compacted      []string `json:"compacted"`
		CompactSeconds float64  `json:"compact_seconds"`
		TurnMessages   int      `json:"turn_messages"`
		TaskStates     int      `json:"task_states"`
		UserTaskStates int      `json:"user_task_states"`
		Skipped        []string `json:"skipped"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || len(rep.Compacted) == 0 || rep.TurnMessages == 0 ||
		rep.TaskStates != 1 || rep.UserTaskStates != 1 || len(rep.Skipped) != 0 {
		t.Fatalf("deletion report %s (%v): want compacted tables, turn messages, both task states and nothing skipped", body, err)
	}
	t.Logf("before: the user's strings in %d table files; erasure compacted %d tables in %.2fs", len(before), len(rep.Compacted), rep.CompactSeconds)

	// After: none of the user's strings in any stream file or table file; the other
	// user's still there.
	for _, f := range scanFiles(t, streamFiles(t, ns.StoreDir()), gone) {
		t.Errorf("after the erasure, the JetStream store holds %s", f)
	}
	rel := relationFiles(t, ctx, owner, dataDir)
	for _, f := range scanFiles(t, rel, gone) {
		t.Errorf("after the erasure, a table file holds %s", f)
	}
	if got := scanFiles(t, rel, kept); len(got) == 0 {
		t.Error("after the erasure, no table file holds the other user's strings either: the scan reads nothing")
	}
	if !allIn(streamFiles(t, ns.StoreDir()), kept[:8]) {
		t.Error("after the erasure, the JetStream store lost the other user's strings")
	}
	// What the database directory holds beyond the table files (statistics, WAL is
	// elsewhere) is reported, not asserted: see the README on what remains.
	var dbDir string
	if err := pgxQueryRow(ctx, owner, `SELECT 'base/' || oid FROM pg_database WHERE datname = current_database()`, &dbDir); err != nil {
		t.Fatal(err)
	}
	var all []string
	_ = filepath.WalkDir(filepath.Join(dataDir, dbDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	if other := scanFiles(t, all, gone); len(other) > 0 {
		t.Logf("outside the table files (catalogs, statistics): %v", other)
	}
}

// rewrite rewrites every table of the database as the owner, so its rows are in the
// files now.
func rewrite(t *testing.T, ctx context.Context, owner string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `VACUUM (FULL)`); err != nil {
		t.Fatal(err)
	}
}

func pgxQueryRow(ctx context.Context, url, sql string, dst ...any) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dst...)
}

// relationFiles are the files of every table of the public schema, with its indexes,
// its TOAST table and the TOAST table's index, all segments.
func relationFiles(t *testing.T, ctx context.Context, owner, dataDir string) []string {
	t.Helper()
	conn, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `WITH tables AS (
			SELECT c.oid, c.reltoastrelid FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'),
		rels AS (
			SELECT oid FROM tables
			UNION SELECT reltoastrelid FROM tables WHERE reltoastrelid <> 0
			UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM tables UNION SELECT reltoastrelid FROM tables))
		SELECT pg_relation_filepath(oid) FROM rels WHERE pg_relation_filepath(oid) IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		segs, _ := filepath.Glob(filepath.Join(dataDir, p) + ".*")
		out = append(out, filepath.Join(dataDir, p))
		out = append(out, segs...)
	}
	return out
}

func streamFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scanFiles reports "needle in file" for every needle found in one of files (files
// that vanished meanwhile are skipped).
func scanFiles(t *testing.T, files, needles []string) []string {
	t.Helper()
	var found []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, n := range needles {
			if strings.Contains(string(b), n) {
				found = append(found, n+" in "+f)
			}
		}
	}
	return found
}

// allIn reports whether every needle is in one of files.
func allIn(files, needles []string) bool {
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, n := range needles {
			if strings.Contains(string(b), n) {
				seen[n] = true
			}
		}
	}
	return len(seen) == len(needles)
}

func waitFor(t *testing.T, ctx context.Context, ok func() bool, what string) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
