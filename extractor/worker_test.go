package extractor_test

import (
	"testing"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

func TestWorkerConfigDefaults(t *testing.T) {
	t.Parallel()
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing here touches the store or the server.
	p, err := extractor.NewPipeline(extractor.PipelineConfig{Store: memory.NewStore(nil), Publisher: nilPublisher{},
		Extractor: extractor.NewOffline(), Redactor: red, BatchMax: 16, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		in              streams.WorkerConfig
		wantConcurrency int
	}{
		{"defaults", streams.WorkerConfig{}, extractor.DefaultWorkerConcurrency},
		{"kept", streams.WorkerConfig{Concurrency: 64}, 64},
		{"never below BatchMax", streams.WorkerConfig{Concurrency: 4}, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := p.WorkerConfig(tt.in)
			if got.Stream != streams.TurnsStream || got.Durable != streams.ExtractorConsumer || got.Stage != extractor.ExtractorStage ||
				got.Validate == nil || got.Concurrency != tt.wantConcurrency {
				t.Errorf("config %+v", got)
			}
		})
	}
	if c := p.Config(); c.BatchMax != 16 || c.BatchQuiet != extractor.DefaultSettle || c.WindowTurns != extractor.DefaultWindowTurns || c.Gate == nil {
		t.Errorf("pipeline config %+v", c)
	}
}

// nilPublisher satisfies streams.Publisher for tests that never publish.
type nilPublisher struct{ streams.Publisher }
