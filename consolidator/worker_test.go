package consolidator_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

func TestWorkerEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, r := newResolver(t, nil)
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- consolidator.RunResolverWorker(wctx, js, r, consolidator.WorkerConfig{
			Concurrency: 4, InitialBackoff: 50 * time.Millisecond, FetchWait: 200 * time.Millisecond,
			ShutdownGrace: 5 * time.Second,
		})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})

	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	// Handlers run concurrently, so one owner's candidates may be resolved in any
	// order; whatever the order, the latest statement must end up believed.
	good := []memory.Candidate{
		cand("u1", "The user prefers dark mode.", withKey("ui.theme"), validFrom(t0)),
		cand("u1", "The user prefers dark mode.", withKey("ui.theme"), validFrom(t0.Add(time.Hour))),
		cand("u1", "The user now prefers light mode.", withKey("ui.theme"), validFrom(t0.Add(2*time.Hour))),
		cand("u2", "用户对花生过敏", withKey("allergy.peanut")),
	}
	var evs []streams.CandidateEvent
	for _, c := range good {
		evs = append(evs, streams.CandidateEvent{Candidate: c})
	}
	// Published one by one so the order within u1 is the order of the stream.
	for _, ev := range evs[:3] {
		if _, err := streams.PublishCandidate(ctx, js, ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := streams.PublishCandidates(ctx, js, evs[3:]); err != nil {
		t.Fatal(err)
	}
	// Poison: not JSON at all; and a well-formed envelope the resolver can never apply.
	subj, err := streams.CandidateSubject(tenant, "u1")
	if err != nil {
		t.Fatal(err)
	}
	poison := nats.NewMsg(subj)
	poison.Data = []byte("{not json")
	poison.Header.Set(streams.HeaderMsgID, "poison-1")
	if _, err := js.PublishMsg(ctx, poison); err != nil {
		t.Fatal(err)
	}
	bad := cand("u1", "The user likes tea.")
	bad.Confidence = 3
	if _, err := streams.PublishCandidate(ctx, js, streams.CandidateEvent{Candidate: bad}); err != nil {
		t.Fatal(err)
	}

	dlq := streams.NewDLQ(js)
	deadline := time.Now().Add(30 * time.Second)
	for {
		applied := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM applied_candidates`)
		dead, err := dlq.List(ctx, streams.DLQFilter{Stage: "resolve"})
		if err != nil {
			t.Fatal(err)
		}
		if applied == len(good) && len(dead) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %d of %d candidates applied, %d of 2 dead letters", applied, len(good), len(dead))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ui memory.Memory
	err = s.InTx(ctx, tenant, func(tx *memory.Tx) error {
		ms, err := tx.ByKey(ctx, "u1", "ui.theme")
		if len(ms) != 1 {
			t.Fatalf("%d ui.theme memories, want 1", len(ms))
		}
		ui = ms[0]
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ui.Content != "The user now prefers light mode." || !ui.ValidFrom.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("ui.theme memory: %q valid from %s", ui.Content, ui.ValidFrom)
	}
	if n := countMemories(t, s, "u1"); n != 1 {
		t.Fatalf("u1 has %d memories, want 1 (the bad candidate must not be stored)", n)
	}
}
