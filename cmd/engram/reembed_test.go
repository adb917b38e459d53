package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/reembed"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestReembedCommand: memories embedded with the local model; `engram reembed` with
// model-b configured fills model-b in, reports the coverage before and after, and a
// second run does nothing.
func TestReembedCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	pool, err := memory.Connect(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := memory.NewStore(pool)
	hash, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		pgtest.SeedEpisode(t, ctx, store, hash, "t1", fmt.Sprintf("u%d", i%3), fmt.Sprintf("walked %d miles along the canal", i+1),
			time.Date(2026, 2, 1, 8, i, 0, 0, time.UTC))
	}
	fake := fakeopenai.New(t)
	env := map[string]string{"ENGRAM_DATABASE_URL": dbURL, "ENGRAM_EMBED_BASE_URL": fake.URL(), "ENGRAM_EMBED_MODEL": "model-b",
		"ENGRAM_DATA_DIR": t.TempDir(), "ENGRAM_LOG_LEVEL": "warn"}
	cmd := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"reembed"}, args...), envMap(env), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	report := func(args ...string) reembed.Report {
		t.Helper()
		out, errOut, code := cmd(append(args, "--json")...)
		if code != 0 {
			t.Fatalf("reembed %v: exit %d\n%s", args, code, errOut)
		}
		var r reembed.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("reembed %v: %v\n%s", args, err, out)
		}
		return r
	}

	if r := report("--dry-run"); r.Memories.Missing != 7 || r.Owners != 3 || r.Before.Memories.For("model-b") != 0 || len(fake.EmbedRequests()) != 0 {
		t.Fatalf("dry run: %+v", r)
	}
	out, errOut, code := cmd("--batch", "3")
	if code != 0 {
		t.Fatalf("reembed: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"embedded 7", "coverage before:", llm.HashModel + " 7/7 (100.0%)", "model-b 0/7 (0.0%)", "coverage after:", "model-b 7/7 (100.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, r := range fake.EmbedRequests() {
		if in, ok := r.Input.([]any); ok && len(in) > 3 {
			t.Errorf("a request of %d texts with --batch 3", len(in))
		}
	}
	if n := len(fake.EmbedRequests()); n != 3 {
		t.Errorf("%d embedding requests for 7 texts with --batch 3, want 3", n)
	}
	if !strings.Contains(errOut, "reembed: memories 7/7 (100%)") {
		t.Errorf("no progress line on a non-terminal stderr:\n%s", errOut)
	}
	if r := report(); r.Memories.Missing != 0 || r.Memories.Embedded != 0 || reembed.Ratio(r.After.Memories, "model-b") != 1 {
		t.Fatalf("second run: %+v", r)
	}

	for _, bad := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--user", "u1"}, 2, "--user needs --tenant"},
		{[]string{"--tenant", "no spaces allowed"}, 2, "--tenant"},
		{[]string{"--batch", "0"}, 2, "--batch"},
	} {
		if _, errOut, code := cmd(bad.args...); code != bad.code || !strings.Contains(errOut, bad.want) {
			t.Errorf("reembed %v: exit %d, stderr %q; want exit %d naming %q", bad.args, code, errOut, bad.code, bad.want)
		}
	}
	delete(env, "ENGRAM_EMBED_BASE_URL")
	delete(env, "ENGRAM_EMBED_MODEL")
	if _, errOut, code := cmd("--model", "model-c"); code != 2 || !strings.Contains(errOut, "ENGRAM_EMBED_BASE_URL") {
		t.Errorf("--model without an endpoint: exit %d, %q", code, errOut)
	}
}
