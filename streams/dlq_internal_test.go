package streams

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/streams/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func dlqSetup(t *testing.T) (jetstream.JetStream, context.Context) {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := EnsureTopology(ctx, js, Config{}); err != nil {
		t.Fatal(err)
	}
	return js, ctx
}

func letter(stage, tenant string, seq uint64) deadLetter {
	h := nats.Header{}
	h.Set(HeaderMsgID, tenant+":turn")
	h.Set(HeaderTenant, tenant)
	h.Set("Nats-Expected-Stream", "TURNS") // a publish directive that must not follow
	h.Set("X-Custom", "kept")
	subj, _ := TurnSubject(tenant, "u1")
	now := time.Now()
	return deadLetter{
		Stage: stage, Subject: subj, Stream: TurnsStream, Seq: seq, Headers: h,
		Data: []byte(`{"v":1}`), Err: errors.New("line one\r\nline two"), Attempts: 5,
		First: now.Add(-time.Minute), Last: now,
	}
}

func TestDeadLetterMessage(t *testing.T) {
	t.Parallel()
	d := letter("extractor", "a.b", 7)
	m, err := d.message()
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "engram.dlq.extractor.a_2Eb" {
		t.Errorf("subject %q", m.Subject)
	}
	want := map[string]string{
		HeaderMsgID: "dlq:TURNS:7", HeaderDLQMsgID: "a.b:turn", HeaderDLQError: "line one  line two",
		HeaderDLQSeq: "7", HeaderDLQAttempts: "5", HeaderDLQStream: "TURNS", HeaderDLQStage: "extractor",
		HeaderDLQSubject: d.Subject, "X-Custom": "kept", "Nats-Expected-Stream": "",
	}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	// Unknown tenant: neither header nor subject tells.
	d.Headers = nats.Header{}
	d.Subject = "elsewhere"
	if m, err = d.message(); err != nil || m.Subject != "engram.dlq.extractor._" {
		t.Errorf("unknown tenant: %v, %v", m, err)
	}
	long := strings.Repeat("x", 5000)
	if got := headerValue(long, maxErrorHeader); len(got) > maxErrorHeader+4 {
		t.Errorf("header not truncated: %d bytes", len(got))
	}
}

func TestDLQListGetPurge(t *testing.T) {
	t.Parallel()
	js, ctx := dlqSetup(t)
	for i, stage := range []string{"extractor", "resolver", "extractor", "resolver"} {
		if err := publishDeadLetter(ctx, js, letter(stage, "acme", uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	// A crash between the DLQ publish and the Term republishes the same letter: deduped.
	if err := publishDeadLetter(ctx, js, letter("extractor", "acme", 1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	if err := publishDeadLetter(ctx, js, letter("extractor", "other", 9)); err != nil {
		t.Fatal(err)
	}
	dlq := NewDLQ(js)

	tests := []struct {
		name string
		f    DLQFilter
		want []uint64 // original seqs
	}{
		{"all", DLQFilter{}, []uint64{1, 2, 3, 4, 9}},
		{"stage", DLQFilter{Stage: "resolver"}, []uint64{2, 4}},
		{"limit", DLQFilter{Stage: "extractor", Limit: 2}, []uint64{1, 3}},
		{"since", DLQFilter{Since: mid}, []uint64{9}},
		{"ids", DLQFilter{IDs: []uint64{2, 1}}, []uint64{2, 1}},
		{"ids and stage", DLQFilter{IDs: []uint64{1, 2}, Stage: "resolver"}, []uint64{2}},
		{"none", DLQFilter{Stage: "nobody"}, nil},
	}
	// The subtests run in turn, not in parallel: they share the setup's deadline, and a
	// parallel subtest waits for a free slot until its parent returns, which on a busy
	// two-core machine outlasted the deadline (every subtest failed at once).
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dlq.List(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			for _, e := range got {
				seqs = append(seqs, e.Seq)
			}
			if len(seqs) != len(tt.want) || (len(seqs) > 0 && !equal(seqs, tt.want)) {
				t.Fatalf("seqs %v, want %v", seqs, tt.want)
			}
		})
	}
	t.Run("get", func(t *testing.T) {
		e, err := dlq.Get(ctx, 5)
		if err != nil || e.Seq != 9 || e.Tenant != "other" || e.Headers.Get("X-Custom") != "kept" ||
			e.Headers.Get(HeaderMsgID) != "other:turn" || e.Attempts != 5 || e.Error != "line one  line two" {
			t.Fatalf("%+v, %v", e, err)
		}
		if _, err := dlq.Get(ctx, 99); !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Fatalf("missing entry: %v", err)
		}
	})
}

func TestDLQPurge(t *testing.T) {
	t.Parallel()
	js, ctx := dlqSetup(t)
	for i, stage := range []string{"extractor", "resolver", "extractor"} {
		if err := publishDeadLetter(ctx, js, letter(stage, "acme", uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	for i, stage := range []string{"extractor", "resolver"} {
		if err := publishDeadLetter(ctx, js, letter(stage, "acme", uint64(i+10))); err != nil {
			t.Fatal(err)
		}
	}
	dlq := NewDLQ(js)
	steps := []struct {
		before time.Time
		stage  string
		want   int
		left   int
	}{
		{mid, "extractor", 2, 3},
		{mid, "extractor", 0, 3},
		{mid, "", 1, 2},
		{time.Time{}, "resolver", 1, 1},
		{time.Time{}, "", 1, 0},
	}
	for i, s := range steps {
		n, err := dlq.Purge(ctx, s.before, s.stage)
		if err != nil || n != s.want {
			t.Fatalf("step %d: purged %d, %v; want %d", i, n, err, s.want)
		}
		if left, err := dlq.List(ctx, DLQFilter{}); err != nil || len(left) != s.left {
			t.Fatalf("step %d: %d left, %v; want %d", i, len(left), err, s.left)
		}
	}
}

func TestBackoffDelays(t *testing.T) {
	t.Parallel()
	w, err := NewWorker(nil, WorkerConfig{Stream: "S", Durable: "d", InitialBackoff: 100 * time.Millisecond,
		MaxBackoff: time.Second, BackoffJitter: -1}, func(context.Context, *Msg) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for delivery, want := range map[uint64]time.Duration{
		1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 500: time.Second,
	} {
		if got := w.backoff(delivery); got != want {
			t.Errorf("delivery %d: %s, want %s", delivery, got, want)
		}
	}
	w.cfg.BackoffJitter = 0.5
	for range 100 {
		if got := w.backoff(3); got < 200*time.Millisecond || got > 600*time.Millisecond {
			t.Fatalf("jittered delay %s outside [200ms, 600ms]", got)
		}
	}
}

func equal(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
