package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

func TestRebuildUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"rebuild", "--help"}, 0, "Usage: engram rebuild"},
		{[]string{"rebuild"}, 2, "--tenant is required"},
		{[]string{"rebuild", "--tenant", "acme", "--since", "last week"}, 2, "--since"},
		{[]string{"rebuild", "--tenant", "acme", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"rebuild", "runs"}, 2, "--tenant is required"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, "_"), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if code := run(context.Background(), tt.args, envMap(nil), &out, &errOut); code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, errOut.String())
			}
			if all := out.String() + errOut.String(); !strings.Contains(all, tt.wantOut) {
				t.Fatalf("output lacks %q:\n%s", tt.wantOut, all)
			}
		})
	}
}

// TestRebuildCommand: turns stored without memories (as after an extractor outage
// that was never replayed) are rebuilt by the command with the offline rules: a dry
// run lists what would be added, the run adds it, a second run changes nothing.
func TestRebuildCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := pgtest.URL(t)
	pool, err := memory.Connect(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := memory.NewStore(pool)
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	if err := store.InTx(ctx, "acme", func(tx *memory.Tx) error {
		for i, c := range []string{"I prefer green tea to coffee in the mornings.", "My favourite board game is Carcassonne."} {
			if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: "t" + string(rune('1'+i)), UserID: "u1", SessionID: "s1",
				Role: memory.RoleUser, Content: c, OccurredAt: at.Add(time.Duration(i) * time.Minute)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	env := envMap(map[string]string{"ENGRAM_DATABASE_URL": url, "ENGRAM_LOG_LEVEL": "error"})
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"rebuild", "--tenant", "acme", "--dry-run"}, env, &out, &errOut); code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "user u1: would-replace") || !strings.Contains(out.String(), "  + [semantic/") ||
		!strings.Contains(errOut.String(), "rebuild: 1/1 owners (u1)") {
		t.Fatalf("dry run output:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories`); n != 0 {
		t.Fatalf("the dry run wrote %d memories", n)
	}
	for i, want := range []struct{ replaced, unchanged int }{{1, 0}, {0, 1}} {
		out.Reset()
		errOut.Reset()
		if code := run(ctx, []string{"rebuild", "--tenant", "acme", "--json", "--quiet"}, env, &out, &errOut); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i+1, code, errOut.String())
		}
		var rep struct {
			Status    string `json:"status"`
			Replaced  int    `json:"owners_replaced"`
			Unchanged int    `json:"owners_unchanged"`
			After     int    `json:"memories_after"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out.String())
		}
		if rep.Status != "completed" || rep.Replaced != want.replaced || rep.Unchanged != want.unchanged || rep.After != 2 {
			t.Errorf("run %d: %+v", i+1, rep)
		}
	}
	if n := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories WHERE status = 'active'`); n != 2 {
		t.Errorf("%d active memories, want 2", n)
	}
	out.Reset()
	if code := run(ctx, []string{"rebuild", "runs", "--tenant", "acme", "--json"}, env, &out, &errOut); code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut.String())
	}
	var runs []memory.RebuildRun
	if err := json.Unmarshal(out.Bytes(), &runs); err != nil || len(runs) != 2 || runs[0].Status != "completed" ||
		runs[1].Counts["after"] != 2 || runs[1].Counts["before"] != 0 {
		t.Errorf("runs %+v %v", runs, err)
	}
}
