package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// syntheticExport is an export of n memories and k turns; the memory at badMem
// (-1: none) has content "PLACEHOLDER" and the turn at badTurn has id "t-bad", for
// the cases to alter. It returns the lines and the 1-based line of each marked record.
func syntheticExport(t *testing.T, n, k, badMem, badTurn int) (lines []string, memLine, turnLine int) {
	t.Helper()
	enc := func(r ExportRecord) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lines = append(lines, enc(ExportRecord{Kind: "header", Format: exportFormat, Version: exportVersion, Tenant: "src", UserID: "u0", ExportedAt: at}))
	for i := range n {
		content := fmt.Sprintf("The user knows fact %d", i)
		if i == badMem {
			content, memLine = "PLACEHOLDER", len(lines)+1
		}
		m := memory.Memory{ID: uuid.New(), Scope: memory.ScopeUser, Type: memory.Semantic, Category: memory.CatFact,
			Content: content, Importance: 0.5, Confidence: 0.8, Status: memory.StatusActive, Version: 1, ValidFrom: at,
			RecordedAt: at, UpdatedAt: at, LastConfirmedAt: at, ConfirmCount: 1, Source: memory.SourceUser}
		lines = append(lines, enc(ExportRecord{Kind: "memory", Memory: &m,
			Versions: []memory.Version{{MemoryID: m.ID, Version: 1, Change: memory.ChangeAdd, Content: content,
				Status: memory.StatusActive, Category: memory.CatFact, Importance: 0.5, Confidence: 0.8, ValidFrom: at,
				RecordedAt: at, Actor: "test"}},
			Lineage:    []memory.Lineage{{MemoryID: m.ID, Kind: memory.LineageTurn, SourceID: "t0", AddedAt: at}},
			Embeddings: []ExportEmbedding{{Model: "m", Vector: []float32{1, 0, 0}}}}))
	}
	for j := range k {
		id := fmt.Sprintf("t%d", j)
		if j == badTurn {
			id, turnLine = "t-bad", len(lines)+1
		}
		tr := memory.Turn{TurnID: id, UserID: "u0", SessionID: "s1", Role: memory.RoleUser, Content: "hello " + id,
			OccurredAt: at, ReceivedAt: at}
		lines = append(lines, enc(ExportRecord{Kind: "turn", Turn: &ExportTurn{Turn: tr, ContentHash: memory.ContentHash(tr.Content)}}))
	}
	lines = append(lines, enc(ExportRecord{Kind: "end", Memories: &n, Turns: &k}))
	return lines, memLine, turnLine
}

// TestImportRefusesBadRecords: a record the store cannot hold, after more than one
// write batch of good ones, is refused as bad input naming its line and field, and
// nothing of the import is written, whether the input can be re-read (a file) or not
// (a request body).
func TestImportRefusesBadRecords(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	lc := NewLifecycle(memory.NewStore(pool), nil, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Each case alters one line of a fresh export (new memory ids, so no case can
	// meet another's rows), past the first write batch.
	const n, k = importBatch + 20, 5
	export := func() (lines []string, memLine, turnLine int) {
		return syntheticExport(t, n, k, importBatch+10, 2)
	}
	mem := func(old, repl string) func() (int, []string) {
		return func() (int, []string) {
			ls, line, _ := export()
			if !strings.Contains(ls[line-1], old) {
				t.Fatalf("%q is not in line %d", old, line)
			}
			ls[line-1] = strings.Replace(ls[line-1], old, repl, 1)
			return line, ls
		}
	}
	turn := func(old, repl string) func() (int, []string) {
		return func() (int, []string) {
			ls, _, line := export()
			if !strings.Contains(ls[line-1], old) {
				t.Fatalf("%q is not in line %d", old, line)
			}
			ls[line-1] = strings.Replace(ls[line-1], old, repl, 1)
			return line, ls
		}
	}
	for _, tc := range []struct {
		name  string
		alter func() (int, []string)
		want  string // in the error, after the line number
	}{
		{"NUL in content", mem(`"content":"PLACEHOLDER"`, `"content":"a\u0000b"`), "memory.content: contains a NUL byte"},
		{"empty content", mem(`"content":"PLACEHOLDER"`, `"content":""`), "memory.content: must not be empty"},
		{"importance above 1", mem(`"importance":0.5`, `"importance":2`), "memory.importance: 2 is outside [0,1]"},
		{"unknown scope", mem(`"scope":"user"`, `"scope":"x"`), `memory.scope: unknown scope "x"`},
		{"agent scope without agent", mem(`"scope":"user"`, `"scope":"agent"`), "memory.agent_id: is required for agent scope"},
		{"version without actor", mem(`"actor":"test"`, `"actor":""`), "versions[0].actor: must not be empty"},
		{"NUL in a version", mem(`"content":"PLACEHOLDER","status"`, `"content":"x\u0000","status"`), "versions[0].content: contains a NUL byte"},
		{"unknown lineage kind", mem(`"kind":"turn"`, `"kind":"x"`), `lineage[0].kind: unknown kind "x"`},
		{"invalid UTF-8", mem(`"content":"PLACEHOLDER"`, "\"content\":\"a\xffb\""), "not valid UTF-8"},
		{"lone surrogate", mem(`"content":"PLACEHOLDER"`, `"content":"a\ud800b"`), `\ud800 at byte`},
		{"empty turn id", turn(`"turn_id":"t-bad"`, `"turn_id":""`), "turn.turn_id: must not be empty"},
		{"NUL in turn content", turn(`"content":"hello t-bad"`, `"content":"a\u0000b"`), "turn.content: contains a NUL byte"},
		{"unknown role", turn(`"role":"user"`, `"role":"x"`), `turn.role: unknown role "x"`},
		{"memory record without memory", func() (int, []string) {
			ls, line, _ := export()
			ls[line-1] = `{"kind":"memory"}`
			return line, ls
		}, "memory: missing"},
	} {
		for _, seekable := range []bool{true, false} {
			user := fmt.Sprintf("u-%s-%v", strings.ReplaceAll(tc.name, " ", "-"), seekable)
			line, ls := tc.alter()
			var r io.Reader = strings.NewReader(strings.Join(ls, "\n") + "\n")
			if !seekable {
				r = struct{ io.Reader }{r} // hides Seek, as a request body does
			}
			_, err := lc.Import(ctx, "acme", user, r, "test")
			if !errors.Is(err, ErrBadExport) || !strings.Contains(err.Error(), fmt.Sprintf("line %d: ", line)) ||
				!strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s (seekable %v): %v, want ErrBadExport naming line %d and %q", tc.name, seekable, err, line, tc.want)
			}
			for _, table := range []string{"memories", "turns", "memory_embeddings", "audit_log"} {
				col := "user_id"
				if table == "audit_log" {
					col = "subject"
				}
				if c := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM `+table+` WHERE `+col+` = $1`, user); c != 0 {
					t.Errorf("%s (seekable %v): %d rows in %s after a refused import", tc.name, seekable, c, table)
				}
			}
		}
	}

	lines, _, _ := export()
	// The export unaltered imports whole, from either kind of reader, and again changes nothing.
	for i, r := range []io.Reader{strings.NewReader(strings.Join(lines, "\n")), struct{ io.Reader }{strings.NewReader(strings.Join(lines, "\n"))}} {
		rep, err := lc.Import(ctx, "acme", "u-good", r, "test")
		want := ImportReport{Memories: n, Turns: k}
		if i > 0 {
			want = ImportReport{MemoriesSkipped: n, TurnsSkipped: k}
		}
		if err != nil || rep != want {
			t.Fatalf("import %d of the good export: %+v, %v; want %+v", i, rep, err, want)
		}
	}
}

// TestImportRefusesBadFraming: input that is not a whole export writes nothing, even
// when its records are good (a cut-short file used to keep its first batches).
func TestImportRefusesBadFraming(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	lc := NewLifecycle(memory.NewStore(pool), nil, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const n = importBatch + 5
	lines, _, _ := syntheticExport(t, n, 1, -1, -1)
	body := strings.Join(lines[:len(lines)-1], "\n")
	for _, tc := range []struct{ name, body, want string }{
		{"no end line", body, "no end line"},
		{"wrong count", body + "\n" + `{"kind":"end","memories":3,"turns":1}`, "memories read, the end line says 3"},
		{"data after the end", strings.Join(lines, "\n") + "\n" + lines[1], fmt.Sprintf("line %d: %s: data after the end line", len(lines)+1, ErrBadExport)},
		{"unknown record", strings.Join(lines[:3], "\n") + "\n" + `{"kind":"note"}`, `line 4: ` + ErrBadExport.Error() + `: unknown record "note"`},
		{"garbage", lines[0] + "\nnot json\n", "line 2: " + ErrBadExport.Error()},
	} {
		user := "u-" + strings.ReplaceAll(tc.name, " ", "-")
		_, err := lc.Import(ctx, "acme", user, bytes.NewReader([]byte(tc.body)), "test")
		if !errors.Is(err, ErrBadExport) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrBadExport with %q", tc.name, err, tc.want)
		}
		if c := pgtest.Count(t, pool, "acme", `SELECT count(*) FROM memories WHERE user_id = $1`, user); c != 0 {
			t.Errorf("%s: %d memories written", tc.name, c)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{`{"a":"plain"}`, -1},
		{`{"a":"\u00e9\n\\u d800"}`, -1},
		{`{"a":"\ud83d\ude00"}`, -1}, // a pair: one emoji
		{`{"a":"\\ud800"}`, -1},      // an escaped backslash, then text
		{`{"a":"\ud800"}`, 6},
		{`{"a":"x\udc00"}`, 7},
		{`{"a":"\ud83d\u0041"}`, 6},
		{`{"a":"\uD800\uDC00"}`, -1},
	} {
		if got := loneSurrogate([]byte(tc.raw)); got != tc.want {
			t.Errorf("loneSurrogate(%s) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}
