package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

func TestMemoryList(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := pgtest.Store(t)
	for i, c := range []string{"喜欢喝绿茶", "prefers green tea", "住在上海浦东"} {
		_, err := store.CreateMemory(ctx, "acme", memory.NewMemory{UserID: "u1", Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatPreference, Content: c, Importance: 0.5, Confidence: 0.9, ValidFrom: time.Now(),
			Source: memory.SourceUser, Actor: "test", Metadata: map[string]any{"n": []string{"a", "b", "c"}[i]}})
		if err != nil {
			t.Fatal(err)
		}
	}
	ops := lifecycle.NewOps(store, nil)
	var out, errOut bytes.Buffer
	if err := memoryListCommand(ctx, ops, []string{"--tenant", "acme", "--user", "u1"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", out.String())
	}
	// The content column starts at the same display column on every line, CJK or not.
	col := -1
	for _, l := range lines {
		i := strings.LastIndex(l, "  ")
		w := runewidth.StringWidth(l[:i+2])
		if col >= 0 && w != col {
			t.Fatalf("columns misaligned (display width %d vs %d):\n%s", w, col, out.String())
		}
		col = w
	}
	out.Reset()
	if err := memoryListCommand(ctx, ops, []string{"--tenant", "acme", "--metadata", "n=b", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var ms []memory.Memory
	if err := json.Unmarshal(out.Bytes(), &ms); err != nil || len(ms) != 1 || ms[0].Content != "prefers green tea" {
		t.Fatalf("--metadata n=b --json: %v %s", err, out.String())
	}
	// Paging: --limit smaller than the listing stops there; a page of one reads all.
	out.Reset()
	if err := memoryListCommand(ctx, ops, []string{"--tenant", "acme", "--limit", "2", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &ms); err != nil || len(ms) != 2 {
		t.Fatalf("--limit 2: %s", out.String())
	}
	for _, args := range [][]string{{}, {"--tenant", "acme", "--status", "gone"}, {"--tenant", "acme", "extra"}} {
		err := memoryListCommand(ctx, ops, args, &out, &errOut)
		var ue usageError
		if !errorsAs(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
