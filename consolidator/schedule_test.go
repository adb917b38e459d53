package consolidator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec string
		ok   bool
	}{
		{"", true},
		{"0 3 * * *", true},
		{"@daily", true},
		{"@every 6h", true},
		{"0 3 * *", false},
		{"61 3 * * *", false},
		{"tomorrow", false},
	}
	for _, tc := range cases {
		_, err := ParseSchedule(tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.spec, err)
		}
		if err != nil && !strings.Contains(err.Error(), "ENGRAM_CONSOLIDATE_CRON") {
			t.Errorf("%q: error %q does not name ENGRAM_CONSOLIDATE_CRON", tc.spec, err)
		}
	}
}

func TestRunSchedule(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	e.seedPayments("acme", "u1")
	if err := RunSchedule(e.ctx, e.c, "every night", nil); err == nil {
		t.Fatal("an invalid spec was accepted")
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- RunSchedule(ctx, e.c, "@every 1s", nil) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs, err := e.c.Runs(e.ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].Status == memory.RunCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the schedule never completed a run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunSchedule after cancel: %v", err)
	}
	if len(e.semantic("acme", "u1")) != 1 {
		t.Fatal("the scheduled run distilled nothing")
	}
	// Another process served this tick: skip it.
	if skip, err := e.c.skipTick(e.ctx, time.Now().Add(-time.Minute)); err != nil || !skip {
		t.Fatalf("skipTick after a run: %v, %v", skip, err)
	}
	if skip, err := e.c.skipTick(e.ctx, time.Now().Add(time.Minute)); err != nil || skip {
		t.Fatalf("skipTick before any run: %v, %v", skip, err)
	}
}
