package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchFlags: a bad value of a bench or eval flag is a usage error (exit 2) naming
// the flag and the reason, reported before anything is opened or created: no service
// is reached (runCLI points them at closed ports) and no work directory is left in
// TMPDIR. The chaos and flood rows name a binary that does not exist, so that a command line
// that were let through fails fast (exit 1) instead of running the benchmark.
func TestBenchFlags(t *testing.T) {
	// Not parallel: TMPDIR is this test's, to see what a run leaves behind.
	missing := filepath.Join(t.TempDir(), "no-such-dir", "out")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	locomo := filepath.Join("..", "..", "internal", "eval", "testdata", "locomo_tiny.json")
	golden := filepath.Join("..", "..", "testdata", "golden")
	noBinary := "/nonexistent/engram"
	for _, tc := range []struct {
		args []string
		msg  string // printed once on stderr
	}{
		// 1: bench chaos checks its durations and faults before making a work directory.
		{[]string{"bench", "chaos", "--binary", noBinary, "--outage", "-5s", "--faults", "bogus"}, "--outage must be positive"},
		{[]string{"bench", "chaos", "--binary", noBinary, "--nats-down", "-1s", "--faults", "bogus"}, "--nats-down must be positive"},
		{[]string{"bench", "chaos", "--faults", "bogus"}, `--faults: unknown fault "bogus"`},
		{[]string{"bench", "search", "--tenant", "a b"}, `--tenant "a b"`},
		{[]string{"bench", "large", "--tenant", "a/b"}, `--tenant "a/b"`},
		{[]string{"bench", "resolve", "--tenant", "a b"}, `--tenant "a b"`},
		{[]string{"bench", "chaos", "--binary", noBinary, "--faults", "nats,,model"}, "--faults: an empty entry"},
		// 2: bench flood's stated limits.
		{[]string{"bench", "flood", "--batch-turns", "5000", "--binary", noBinary}, "--batch-turns must be at most 1000"},
		{[]string{"bench", "flood", "--content-bytes", "100000", "--binary", noBinary}, "--content-bytes must be at most 32768"},
		{[]string{"bench", "flood", "--drain-timeout", "-1s", "--binary", noBinary}, "--drain-timeout must be positive"},
		// 3: bench ingest's --batch limit, before NATS is reached.
		{[]string{"bench", "ingest", "--batch", "5000"}, "--batch must be at most 1000"},
		// 4: no silent default for a bad --large-candidates.
		{[]string{"bench", "resolve", "--large-candidates", "-5"}, "--large-candidates must be positive"},
		// 5: --cpuprofile's directory, before the database is opened.
		{[]string{"bench", "search", "--cpuprofile", missing}, "--cpuprofile: "},
		{[]string{"bench", "resolve", "--cpuprofile", missing}, "--cpuprofile: "},
		// 6: --html's directory, before the run.
		{[]string{"eval", "golden", "--html", missing, golden}, "--html: "},
		{[]string{"eval", "locomo", "--data", locomo, "--html", missing}, "--html: "},
		// 7: an unknown conversation, before the eval system starts.
		{[]string{"eval", "locomo", "--data", locomo, "--conversations", "conv-99"}, `--conversations: no conversation "conv-99"`},
		// 8: an empty entry of a list.
		{[]string{"eval", "locomo", "--data", locomo, "--k", "5,,10"}, "--k: an empty entry"},
		{[]string{"eval", "locomo", "--data", locomo, "--layers", "memories,,turns"}, "--layers: an empty entry"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, errOut)
			}
			if n := strings.Count(errOut, tc.msg); n != 1 {
				t.Errorf("%q printed %d times in:\n%s", tc.msg, n, errOut)
			}
			if strings.Contains(errOut, "panic") || out != "" {
				t.Errorf("stdout %q, stderr:\n%s", out, errOut)
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				t.Errorf("the run left %s in TMPDIR", e.Name())
				_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
			}
		})
	}
}
