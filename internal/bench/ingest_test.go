package bench_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

func TestRunIngest(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := testCtx(t, 60*time.Second)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	res, err := bench.RunIngest(ctx, js, bench.IngestConfig{
		Turns: 530, Batch: 50, Concurrency: 3, Logger: quietLogger(), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 530 || res.Batch != 50 || res.Concurrency != 3 || res.HTTP.Count != 530 || res.Raw.Count != 530 {
		t.Errorf("result %+v", res)
	}
	if res.HTTP.PerSecond <= 0 || res.Raw.PerSecond <= 0 || res.Ratio <= 0 || res.AvgPayloadBytes < 100 ||
		res.Target != bench.IngestTarget || res.Pass != (res.Ratio >= bench.IngestTarget) {
		t.Errorf("result %+v", res)
	}
	if !strings.HasPrefix(res.Tenant, "bench-") || !strings.Contains(progress.String(), "http:") {
		t.Errorf("tenant %q, progress %q", res.Tenant, progress.String())
	}
	// The benchmark's turns are purged afterwards.
	s, err := js.Stream(ctx, streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("%d messages left in %s", info.State.Msgs, streams.TurnsStream)
	}
}

func TestRunIngestErrors(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	tests := []struct {
		name string
		cfg  bench.IngestConfig
		want string
	}{
		{"batch over the API limit", bench.IngestConfig{Batch: 1001}, "exceeds"},
		{"no TURNS stream", bench.IngestConfig{Turns: 10}, streams.TurnsStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := bench.RunIngest(testCtx(t, 60*time.Second), js, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
