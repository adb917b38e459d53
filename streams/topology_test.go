package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

func TestEnsureTopologyIdempotent(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := testCtx(t)

	for range 2 {
		if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]struct {
		subject string
		maxAge  time.Duration
		dup     time.Duration
	}{
		streams.TurnsStream:      {"engram.turns.*.*", streams.DefaultTurnsMaxAge, streams.DefaultDuplicateWindow},
		streams.CandidatesStream: {"engram.candidates.*.*", streams.DefaultCandidateMaxAge, streams.DefaultDuplicateWindow},
		streams.DLQStream:        {"engram.dlq.*.*", 0, 2 * time.Minute},
	}
	for name, w := range want {
		info := streamInfo(t, js, name)
		c := info.Config
		if len(c.Subjects) != 1 || c.Subjects[0] != w.subject || c.Storage != jetstream.FileStorage ||
			c.Retention != jetstream.LimitsPolicy || c.MaxAge != w.maxAge || c.Duplicates != w.dup || c.Replicas != 1 {
			t.Errorf("%s: config %+v", name, c)
		}
	}

	// A changed setting is applied in place; data survives the update.
	publishTurn(t, js, turnEvent("acme", "u1", "t1"))
	cfg := streams.Config{TurnsMaxAge: 48 * time.Hour, DuplicateWindow: 20 * time.Minute}
	if err := streams.EnsureTopology(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	info := streamInfo(t, js, streams.TurnsStream)
	if info.Config.MaxAge != 48*time.Hour || info.Config.Duplicates != 20*time.Minute {
		t.Errorf("after update: max age %s, duplicates %s", info.Config.MaxAge, info.Config.Duplicates)
	}
	if info.State.Msgs != 1 {
		t.Errorf("after update: %d messages, want 1", info.State.Msgs)
	}
	// A window below the 10-minute floor is raised to it.
	if err := streams.EnsureTopology(ctx, js, streams.Config{DuplicateWindow: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got := streamInfo(t, js, streams.TurnsStream).Config.Duplicates; got != streams.DefaultDuplicateWindow {
		t.Errorf("duplicate window %s, want %s", got, streams.DefaultDuplicateWindow)
	}
}

func streamInfo(t *testing.T, js jetstream.JetStream, name string) *jetstream.StreamInfo {
	t.Helper()
	s, err := js.Stream(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestAcceptedTurnSurvivesRestart(t *testing.T) {
	t.Parallel()
	srv, js := setup(t)
	ev := turnEvent("acme", "u1", "durable-1")
	publishTurn(t, js, ev)

	srv.Restart(t)

	var info *jetstream.StreamInfo
	waitFor(t, 10*time.Second, "stream after restart", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, streams.TurnsStream)
		if err != nil {
			return false
		}
		info, err = s.Info(ctx)
		return err == nil
	})
	if info.State.Msgs != 1 {
		t.Fatalf("%d turns after restart, want 1", info.State.Msgs)
	}
	s, _ := js.Stream(testCtx(t), streams.TurnsStream)
	raw, err := s.GetMsg(testCtx(t), info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	got, err := streams.DecodeTurnEvent(raw.Data)
	if err != nil || got.Turn.TurnID != "durable-1" || got.Tenant != "acme" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	// The dedupe window survives too: the retry of an accepted turn is still a duplicate.
	dup, err := streams.PublishTurn(testCtx(t), js, ev)
	if err != nil || !dup {
		t.Fatalf("republish after restart: duplicate=%v err=%v, want duplicate", dup, err)
	}
}
