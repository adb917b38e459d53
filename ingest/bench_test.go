package ingest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

func TestRunIngestBench(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	var progress bytes.Buffer
	res, err := ingest.RunIngestBench(testCtx(t), e.js, ingest.BenchConfig{
		Turns: 530, Batch: 50, Concurrency: 3, Logger: quietLogger(), Progress: &progress, Serve: benchEdge(e.js)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 530 || res.Batch != 50 || res.Concurrency != 3 || res.HTTP.Count != 530 || res.Raw.Count != 530 {
		t.Errorf("result %+v", res)
	}
	if res.HTTP.PerSecond <= 0 || res.Raw.PerSecond <= 0 || res.Ratio <= 0 || res.AvgPayloadBytes < 100 ||
		res.Target != ingest.BenchTarget || res.Pass != (res.Ratio >= ingest.BenchTarget) {
		t.Errorf("result %+v", res)
	}
	if !strings.HasPrefix(res.Tenant, "bench-") || !strings.Contains(progress.String(), "http:") {
		t.Errorf("tenant %q, progress %q", res.Tenant, progress.String())
	}
	// The benchmark's turns are purged afterwards.
	s, err := e.js.Stream(testCtx(t), streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("%d messages left in %s", info.State.Msgs, streams.TurnsStream)
	}
}

func TestRunIngestBenchErrors(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	tests := []struct {
		name string
		cfg  ingest.BenchConfig
		want string
	}{
		{"batch over the API limit", ingest.BenchConfig{Batch: 1001}, "exceeds"},
		{"no TURNS stream", ingest.BenchConfig{Turns: 10}, streams.TurnsStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ingest.RunIngestBench(testCtx(t), js, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
