package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestChaosSmall is the small `engram bench chaos`: the engram binary, built here, runs
// as an API and a worker process; the worker is killed with SIGKILL, PostgreSQL is cut,
// NATS restarted and the embedding endpoint made faulty while 300 turns are sent
// (ENGRAM_TEST_CHAOS_TURNS for more, ENGRAM_TEST_CHAOS_OUTAGE for longer outages; make
// test-chaos runs 10,000 turns with 20 s outages). Every turn must be stored once and become one
// memory, with nothing dead-lettered.
func TestChaosSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds engram and runs it as processes for about a minute")
	}
	t.Parallel()
	turns := 300
	outage := 5 * time.Second
	if v := os.Getenv("ENGRAM_TEST_CHAOS_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ENGRAM_TEST_CHAOS_OUTAGE=%q: %v", v, err)
		}
		outage = d
	}
	if v := os.Getenv("ENGRAM_TEST_CHAOS_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("ENGRAM_TEST_CHAOS_TURNS=%q: want a positive number", v)
		}
		turns = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "engram")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building engram: %v\n%s", err, out)
	}
	res, err := bench.RunChaos(ctx, bench.ChaosConfig{
		Binary: bin, DatabaseURL: pgtest.URL(t), WorkDir: t.TempDir(), Turns: turns,
		Outage: outage, NATSDown: 3 * time.Second, Progress: testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if !res.OK {
		t.Fatalf("%d lost, %d duplicated, %d dead letters, %d of %d turns stored (%d distinct), %d accepted",
			res.Lost, res.Duplicated, res.DeadLetters, res.StoredTurns, res.Turns, res.DistinctTurns, res.Accepted)
	}
	if len(res.Faults) != len(bench.ChaosFaults) || res.ModelFaults == 0 {
		t.Fatalf("faults %+v, %d faulty model answers: the faults did not all happen", res.Faults, res.ModelFaults)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
