package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
)

// unreachable points every service at a closed port: a command line that is checked
// before anything is opened answers as a usage error (2), one that reaches a service
// fails at run time (1).
var unreachable = map[string]string{
	"ENGRAM_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?connect_timeout=2",
	"ENGRAM_NATS_URL":     "nats://127.0.0.1:1",
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, envMap(unreachable), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpListsSubcommandsAndFlags: every command answers --help with exit 0 and
// names its subcommands; a subcommand's help lists the flags that apply to it and
// none that do not.
func TestHelpListsSubcommandsAndFlags(t *testing.T) {
	t.Parallel()
	subcommands := map[string][]string{
		"memory":      {"list", "get", "history", "as-of", "correct", "deprecate", "rollback", "delete", "restore"},
		"users":       {"forget", "delete", "export", "import"},
		"dlq":         {"list", "show", "replay", "purge"},
		"bench":       {"ingest", "resolve", "search"},
		"eval":        {"golden", "locomo"},
		"consolidate": {"runs", "-dry-run"},
		"migrate":     {"up", "status"},
		"worker":      {"extractor", "resolver", "all"},
		"token":       {"-tenant", "-name", "-json"},
		"version":     {"-json"},
	}
	_, top, _ := runCLI(t, "--help")
	for name := range commands() {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(top, "\n  "+name+" ") {
				t.Errorf("engram --help does not list %s", name)
			}
			code, out, errOut := runCLI(t, name, "--help")
			help := out + errOut
			if code != 0 || !strings.Contains(help, "Usage") {
				t.Fatalf("exit %d, help %q", code, help)
			}
			for _, sub := range subcommands[name] {
				if !strings.Contains(help, sub) {
					t.Errorf("help lacks %q:\n%s", sub, help)
				}
			}
		})
	}
	for _, tc := range []struct {
		args          []string
		want, notWant []string
	}{
		{[]string{"memory", "get", "--help"}, []string{"-tenant", "-json"}, []string{"-reason", "-actor", "-content"}},
		{[]string{"memory", "correct", "--help"}, []string{"-content", "-reason", "-actor", "-expect-version"}, []string{"-version", "-at"}},
		{[]string{"memory", "rollback", "--help"}, []string{"-version", "-reason"}, []string{"-content"}},
		{[]string{"memory", "list", "--help"}, []string{"-metadata", "-status", "-user", "-json"}, []string{"-reason"}},
		{[]string{"memory", "delete", "--help"}, []string{"-tenant", "-json"}, []string{"-content"}},
		{[]string{"users", "forget", "--help"}, []string{"-turns", "-tenant"}, []string{"-file"}},
		{[]string{"users", "delete", "--help"}, []string{"-tenant"}, []string{"-turns", "-file"}},
		{[]string{"users", "export", "--help"}, []string{"-file"}, []string{"-turns"}},
		{[]string{"dlq", "list", "--help"}, []string{"-limit", "-json"}, []string{"-all"}},
		{[]string{"bench", "resolve", "--help"}, []string{"-json"}, nil},
		// -help, as the flag package spells it, is help too, not a run.
		{[]string{"consolidate", "-help"}, []string{"-dry-run", "runs"}, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			help := out + errOut
			if code != 0 {
				t.Fatalf("exit %d: %s", code, help)
			}
			for _, w := range tc.want {
				if !strings.Contains(help, w) {
					t.Errorf("lacks %s:\n%s", w, help)
				}
			}
			// The flags section, after the description (which may mention other commands' flags).
			flags := help[max(strings.LastIndex(help, "Flags:"), 0):]
			for _, w := range tc.notWant {
				if strings.Contains(flags, "  "+w+" ") || strings.Contains(flags, "  "+w+"\n") {
					t.Errorf("lists %s, which does not apply:\n%s", w, help)
				}
			}
		})
	}
}

// TestExitCodes: usage errors exit 2 and runtime errors 1, with the error printed
// exactly once, whether or not the services are reachable.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	id := "01a2315b-43ee-7b63-b448-b23200d1a7ab"
	for _, tc := range []struct {
		args []string
		code int
		msg  string // printed once on stderr
	}{
		{nil, 2, ""},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"dlq", "list", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"dlq", "nope"}, 2, `unknown command "nope"`},
		{[]string{"dlq", "show"}, 2, "want exactly one ID"},
		{[]string{"dlq", "show", "x"}, 2, "not a positive integer"},
		{[]string{"dlq", "purge"}, 2, "refusing to purge everything"},
		{[]string{"dlq", "purge", "--before", "NaNd"}, 2, `invalid value "NaNd" for flag -before`},
		{[]string{"dlq", "purge", "--before", "200000d"}, 2, `invalid value "200000d" for flag -before`},
		{[]string{"memory"}, 2, "missing command"},
		{[]string{"memory", "get"}, 2, "--tenant is required"},
		{[]string{"memory", "get", "--tenant", "acme"}, 2, "want exactly one memory ID"},
		{[]string{"memory", "get", "--tenant", "acme", "x"}, 2, "is not a memory ID"},
		{[]string{"memory", "get", "--tenant", "acme", "--reason", "r", id}, 2, "flag provided but not defined: -reason"},
		{[]string{"memory", "as-of", "--tenant", "acme", "--at", "yesterday", id}, 2, "RFC 3339"},
		{[]string{"memory", "list"}, 2, "--tenant is required"},
		{[]string{"memory", "list", "--tenant", "acme", "--metadata", "x"}, 2, "KEY=VALUE"},
		{[]string{"memory", "delete", "--tenant", "acme"}, 2, "want exactly one memory ID"},
		{[]string{"users", "forget", "--tenant", "acme"}, 2, "want exactly one user id"},
		{[]string{"users", "import", "--tenant", "acme", "u1"}, 2, "--file is required"},
		{[]string{"users"}, 2, "missing command"},
		{[]string{"bench"}, 2, "name a benchmark"},
		{[]string{"bench", "resolve", "--bogus"}, 2, "-bogus"},
		{[]string{"bench", "ingest", "extra"}, 2, "unknown argument"},
		{[]string{"bench", "growth", "--sizes", "1000,lots"}, 2, `--sizes: "lots" is not a positive memory count`},
		{[]string{"bench", "growth", "--sizes", "500"}, 2, "less than one owner"},
		{[]string{"bench", "large", "--m", "32", "--ef-construction", "40"}, 2, "--ef-construction 2×m"},
		{[]string{"bench", "search", "--runs", "0"}, 2, "--runs"},
		{[]string{"consolidate", "--user", "u1"}, 2, "--user needs --tenant"},
		{[]string{"token"}, 2, "--tenant"},
		{[]string{"version", "extra"}, 2, "unknown argument"},
		{[]string{"eval"}, 2, "name an evaluation"},
		{[]string{"worker"}, 2, "name one worker"},
		{[]string{"probe", "a", "b"}, 2, "at most one URL"},
		// Checked before anything is opened: each of these used to connect (or, for
		// serve, wait for the services) before it said what was wrong, or not at all.
		{[]string{"bench", "foo", "--help"}, 2, `unknown benchmark "foo"`},
		{[]string{"reembed", "extra", "junk"}, 2, `unknown argument "extra"`},
		{[]string{"reembed", "--tenant", "a b"}, 2, `--tenant "a b": want 1-128 characters`},
		{[]string{"consolidate", "runs", "extra"}, 2, `unknown argument "extra"`},
		{[]string{"consolidate", "runs", "--limit", "-1"}, 2, "--limit must be positive, got -1"},
		{[]string{"consolidate", "--tenant", "a b"}, 2, `--tenant "a b"`},
		{[]string{"rebuild", "runs", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"rebuild", "runs", "--tenant", "t", "extra", "--limit", "5"}, 2, `unknown argument "extra"`},
		{[]string{"rebuild", "runs", "--tenant", "t", "--limit", "0"}, 2, "--limit must be positive, got 0"},
		{[]string{"rebuild", "--tenant", "a/b"}, 2, `--tenant "a/b"`},
		{[]string{"serve", "--http-addr", "bogus"}, 2, `--http-addr "bogus"`},
		{[]string{"dev", "--http-addr", "localhost:http-alt"}, 2, `--http-addr "localhost:http-alt"`},
		{[]string{"memory", "list", "--tenant", "a b"}, 2, `--tenant "a b"`},
		{[]string{"memory", "get", "--tenant", "a b", id}, 2, `--tenant "a b"`},
		{[]string{"memory", "correct", "--tenant", "acme", id}, 2, "--content is required"},
		{[]string{"memory", "correct", "--tenant", "acme", "--content", "x", "--importance", "2", id}, 2, "--importance must be in [0,1]"},
		{[]string{"memory", "rollback", "--tenant", "acme", id}, 2, "--version is required"},
		{[]string{"users", "import", "--tenant", "acme", "--file", "/nonexistent/export.jsonl", "u1"}, 2, "no such file or directory"},
		{[]string{"users", "export", "--tenant", "acme", "--file", "/nonexistent/export.jsonl", "u1"}, 2, `folder "/nonexistent" does not exist`},
		{[]string{"users", "forget", "--tenant", "acme", "bad user"}, 2, "user id: whitespace not allowed"},
		{[]string{"users", "forget", "--tenant", "a b", "u1"}, 2, `--tenant "a b"`},
		{[]string{"migrate", "--json", "sideways"}, 2, `unknown argument "sideways"`},
		{[]string{"probe", "--timeout", "0"}, 2, "--timeout must be positive"},
		{[]string{"probe", "not a url"}, 2, `bad URL "not a url"`},
		{[]string{"probe", "ftp://127.0.0.1/readyz"}, 2, `bad URL "ftp://127.0.0.1/readyz"`},
		// The command line is right; the database is not there.
		{[]string{"migrate", "--json", "status"}, 1, "connecting to ENGRAM_DATABASE_URL"},
		{[]string{"index", "--json", "list"}, 1, "connecting to ENGRAM_DATABASE_URL"},
		{[]string{"memory", "get", "--tenant", "acme", id}, 1, "connecting to ENGRAM_DATABASE_URL"},
		{[]string{"probe", "http://127.0.0.1:1/readyz"}, 1, "probing"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if tc.msg != "" {
				if n := strings.Count(errOut, tc.msg); n != 1 {
					t.Errorf("%q printed %d times in:\n%s", tc.msg, n, errOut)
				}
				n := 0
				for _, l := range strings.Split(errOut, "\n") {
					if strings.HasPrefix(l, "engram ") || strings.Contains(l, "flag provided") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d error lines, want 1:\n%s", n, errOut)
				}
			}
		})
	}
}

// serve reads its tokens before it waits for PostgreSQL and NATS, which may take
// minutes: a missing tokens file, or none at all, is said at once.
func TestServeChecksTokensBeforeWaiting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"missing tokens file", map[string]string{"ENGRAM_TOKENS_FILE": filepath.Join(t.TempDir(), "tokens.json")}, "ENGRAM_TOKENS_FILE"},
		{"no token", nil, "no API tokens configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"ENGRAM_DATA_DIR": t.TempDir()}
			maps.Copy(env, unreachable)
			maps.Copy(env, tc.env)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			code := run(ctx, []string{"serve"}, envMap(env), &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), tc.want) || ctx.Err() != nil {
				t.Fatalf("exit %d (deadline: %v), want 1 with %q:\n%s", code, ctx.Err(), tc.want, errOut.String())
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "version", "--json")
	var v versionInfo
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.GoVersion == "" || v.Version == "" {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "engram "+v.Version) || !strings.Contains(out, v.GoVersion) {
		t.Fatalf("exit %d, %q", code, out)
	}
}

// TestTabWriterAlignsByDisplayWidth: a CJK character is two cells wide; columns after
// it line up on a terminal, which text/tabwriter (counting runes) gets wrong.
func TestTabWriterAlignsByDisplayWidth(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tw := newTabWriter(&b, false)
	tw.Write([]byte("content\tstatus\n喜欢绿茶\tactive\nlikes tea\tpending\n"))
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "content    status\n喜欢绿茶   active\nlikes tea  pending\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	right := newTabWriter(&b, true)
	right.Write([]byte("phase\tper s\t\nacross\t1200\t\n"))
	_ = right.Flush()
	if want := " phase  per s\nacross   1200\n"; b.String() != want {
		t.Fatalf("right-aligned: got %q, want %q", b.String(), want)
	}
}

// TestBenchResolvePrintsDecisionsAsATable: one aligned line per decision kind, in
// order, not a Go map.
func TestBenchResolvePrintsDecisionsAsATable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printBenchResolve(&b, bench.ResolveResult{Tenant: "bench", Owners: 2, PerOwner: 3,
		Across: bench.ResolvePhase{Candidates: 10, PerSecond: 600, Decisions: map[string]int{"update": 3, "add": 12, "confirm": 1}}})
	out := b.String()
	if strings.Contains(out, "map[") {
		t.Fatalf("a Go map in the output:\n%s", out)
	}
	if !strings.Contains(out, "decisions across owners:\n  add      12\n  confirm  1\n  update   3\n") {
		t.Fatalf("decisions not tabulated:\n%s", out)
	}
}

// TestBenchResolvePrintsLargeOwnerPaths: the large owner's exact-scan baseline and its
// owner-index run side by side, with the index's build and recall; --no-hnsw has the
// exact scan alone.
func TestBenchResolvePrintsLargeOwnerPaths(t *testing.T) {
	t.Parallel()
	exact := &bench.ResolvePhase{Candidates: 500, Concurrency: 1, PerSecond: 80}
	indexed := &bench.ResolvePhase{Candidates: 500, Concurrency: 1, PerSecond: 130}
	ix := &bench.ResolveIndex{Threshold: 10000, Index: "engram_hnsw_x", Vectors: 10038, BuildSeconds: 4.2, M: 24,
		EfConstruction: 128, EfSearch: 400, ResolveEfSearch: 100, RecallAt10: 0.996, RecallQueries: 100, IndexedReads: 100}
	for _, c := range []struct {
		name      string
		res       bench.ResolveResult
		want, not []string
	}{
		{"both paths", bench.ResolveResult{LargeOwnerSize: 10000, LargeExact: exact, Large: indexed, LargeIndex: ix},
			[]string{"one owner of 10000, exact scan", "one owner of 10000, owner index", "over 10038 vectors in 4.2 s",
				"the resolver's 100", "recall@10 0.996 against the exact scan over 100 candidates (100 read through the index)",
				"130 candidates/s for the owner of 10000"},
			nil},
		{"no-hnsw", bench.ResolveResult{LargeOwnerSize: 10000, Large: exact},
			[]string{"one owner of 10000, exact scan", "80 candidates/s for the owner of 10000"},
			[]string{"owner index", "recall"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			printBenchResolve(&b, c.res)
			checkContains(t, b.String(), c.want, c.not)
		})
	}
}

// TestBenchResolvePrintsCPU: per phase, the CPU a candidate cost and the rate all
// cores would allow at that cost; a database elsewhere says so; without /proc, nothing.
func TestBenchResolvePrintsCPU(t *testing.T) {
	t.Parallel()
	across := bench.ResolvePhase{Candidates: 5000, PerSecond: 480, Decisions: map[string]int{"add": 1},
		CPU: &bench.CPUUse{Cores: 2, MachineSeconds: 20, EngramSeconds: 4, PostgresSeconds: 15.5, PostgresLocal: true, Busy: 0.96}}
	remote := across
	remote.CPU = &bench.CPUUse{Cores: 2, MachineSeconds: 4, EngramSeconds: 4, Busy: 0.2}
	bare := across
	bare.CPU = nil
	for _, c := range []struct {
		name      string
		res       bench.ResolveResult
		want, not []string
	}{
		{"local", bench.ResolveResult{Across: across}, []string{"CPU per candidate", "across owners", "4.00", "0.80", "3.10", "96% of 2", "500/s"}, []string{"elsewhere"}},
		{"remote", bench.ResolveResult{Across: remote}, []string{"0.80", "elsewhere", "20% of 2", "2500/s"}, nil},
		{"no /proc", bench.ResolveResult{Across: bare}, nil, []string{"CPU per candidate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			printBenchResolve(&b, c.res)
			checkContains(t, b.String(), c.want, c.not)
		})
	}
}

// checkContains fails t for each of want that out lacks and each of not it holds.
func checkContains(t *testing.T, out string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	for _, w := range not {
		if strings.Contains(out, w) {
			t.Errorf("%q in\n%s", w, out)
		}
	}
}
