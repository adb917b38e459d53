package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestBenchLatencyFlags: bad flags are usage errors (exit 2) naming the flag, before
// anything starts; --help describes the measurement.
func TestBenchLatencyFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--turns", "0"}, "--turns"},
		{[]string{"--users", "-1"}, "--users"},
		{[]string{"--bg-turns", "-5"}, "--bg-turns"},
		{[]string{"--poll", "0s"}, "--poll"},
		{[]string{"--batch-quiet", "soon"}, "--batch-quiet"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runCLI(t, append([]string{"bench", "latency"}, tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, errOut, tt.want)
			}
		})
	}
	code, out, errOut := runCLI(t, "bench", "latency", "--help")
	if help := out + errOut; code != 0 || !strings.Contains(help, "202") || !strings.Contains(help, "--poll") {
		t.Errorf("exit %d, help %q", code, help)
	}
}

// TestBenchLatencySmall runs a few turns of `engram bench latency` against the engram
// binary, built here, offline and with the instant model: every turn's memory is found,
// every hop is measured, and the model path counts its calls. No timing is asserted.
func TestBenchLatencySmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds engram and runs it as processes")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "engram")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building engram: %v\n%s", err, out)
	}
	for _, llm := range []bool{false, true} {
		res, err := bench.RunLatency(ctx, bench.LatencyConfig{Binary: bin, DatabaseURL: pgtest.URL(t), WorkDir: t.TempDir(),
			Turns: 12, Users: 3, Concurrency: 2, BackgroundTurns: 2, BackgroundSearches: 2, LLM: llm, Progress: testWriter{t}})
		if err != nil {
			t.Fatalf("llm %v: %v", llm, err)
		}
		t.Logf("llm %v: %+v", llm, res)
		if res.Found != 12 || res.Missing != 0 || res.Retrievable.N != 12 || len(res.Hops) == 0 {
			t.Errorf("llm %v: found %d, missing %d, %d measured", llm, res.Found, res.Missing, res.Retrievable.N)
		}
		for _, h := range res.Hops {
			if h.Stats.N == 0 {
				t.Errorf("llm %v: hop %s measured no turn", llm, h.Name)
			}
		}
		if llm && (res.ModelCalls == 0 || res.RetrievableLessModel == nil || res.TargetMs != 0) {
			t.Errorf("model path: %d calls, less-model %v, target %v", res.ModelCalls, res.RetrievableLessModel, res.TargetMs)
		}
		if !llm && (res.ModelCalls != 0 || res.TargetMs != 100) {
			t.Errorf("offline path: %d model calls, target %v", res.ModelCalls, res.TargetMs)
		}
	}
}
