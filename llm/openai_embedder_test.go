package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
)

func newEmbedder(t *testing.T, s *fakeopenai.Server, mod func(*llm.EmbedConfig)) *llm.OpenAIEmbedder {
	t.Helper()
	cfg := llm.EmbedConfig{
		BaseURL: s.URL(), Model: "embed-model",
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	e, err := llm.NewOpenAIEmbedder(cfg, nil)
	if err != nil {
		t.Fatalf("NewOpenAIEmbedder: %v", err)
	}
	return e
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d", i)
	}
	return out
}

func TestOpenAIEmbedder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   func(*llm.EmbedConfig)
		setup func(*fakeopenai.Server)
		input []string
		check func(t *testing.T, s *fakeopenai.Server, e *llm.OpenAIEmbedder, vecs [][]float32, err error)
	}{
		{
			name:  "batched and ordered by index",
			cfg:   func(c *llm.EmbedConfig) { c.BatchSize = 4 },
			setup: func(s *fakeopenai.Server) { s.SetEmbedReverseOrder(true) },
			input: texts(10),
			check: func(t *testing.T, s *fakeopenai.Server, e *llm.OpenAIEmbedder, vecs [][]float32, err error) {
				if err != nil || len(vecs) != 10 {
					t.Fatalf("err = %v, %d vectors", err, len(vecs))
				}
				for i, v := range vecs {
					want := fakeopenai.DefaultEmbedding(fmt.Sprintf("text %d", i), fakeopenai.DefaultEmbedDims)
					if llm.Cosine(v, want) < 0.99999 {
						t.Fatalf("vector %d out of order", i)
					}
				}
				reqs := s.EmbedRequests()
				if len(reqs) != 3 {
					t.Fatalf("%d requests, want 3 batches", len(reqs))
				}
				for i, want := range []int{4, 4, 2} {
					if in, ok := reqs[i].Input.([]any); !ok || len(in) != want || reqs[i].Model != "embed-model" {
						t.Fatalf("request %d input = %v", i, reqs[i].Input)
					}
				}
				if e.Dims() != fakeopenai.DefaultEmbedDims || e.Stats().Calls != 3 {
					t.Fatalf("dims = %d, stats = %+v", e.Dims(), e.Stats())
				}
			},
		},
		{
			name: "dims mismatch within a response",
			setup: func(s *fakeopenai.Server) {
				s.SetEmbedFunc(func(_, in string) []float32 { return make([]float32, 4+len(in)%2) })
			},
			input: []string{"ab", "abc"},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.OpenAIEmbedder, _ [][]float32, err error) {
				// Retried a bounded number of times, then an invalid reply: not permanent,
				// since the endpoint, not the text, is at fault.
				if !errors.Is(err, llm.ErrInvalidReply) || errors.Is(err, llm.ErrPermanent) ||
					!llm.IsOutage(err) || !strings.Contains(err.Error(), "dims") {
					t.Fatalf("err = %v, want an invalid-reply dims error", err)
				}
				if n := len(s.EmbedRequests()); n != 3 {
					t.Fatalf("%d requests, want 3 attempts", n)
				}
			},
		},
		{
			name:  "dims differ from configured",
			cfg:   func(c *llm.EmbedConfig) { c.Dims = 1536 },
			input: []string{"a"},
			check: func(t *testing.T, _ *fakeopenai.Server, _ *llm.OpenAIEmbedder, _ [][]float32, err error) {
				if !errors.Is(err, llm.ErrInvalidReply) || !strings.Contains(err.Error(), "want 1536") {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name:  "dims sent when asked",
			cfg:   func(c *llm.EmbedConfig) { c.Dims, c.SendDims = 8, true },
			input: []string{"a"},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.OpenAIEmbedder, _ [][]float32, err error) {
				if err != nil || s.EmbedRequests()[0].Dimensions != 8 {
					t.Fatalf("err = %v, dimensions = %d", err, s.EmbedRequests()[0].Dimensions)
				}
			},
		},
		{
			name:  "wrong vector count once, then recovered",
			setup: func(s *fakeopenai.Server) { s.QueueEmbed(fakeopenai.Reply{Body: `{"object":"list","data":[]}`}) },
			input: []string{"a"},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.OpenAIEmbedder, vecs [][]float32, err error) {
				if err != nil || len(vecs) != 1 || len(s.EmbedRequests()) != 2 {
					t.Fatalf("err = %v, %d vectors, %d requests", err, len(vecs), len(s.EmbedRequests()))
				}
			},
		},
		{
			name:  "429 and 500 retried",
			setup: func(s *fakeopenai.Server) { s.QueueEmbed(fakeopenai.Reply{Status: 429}, fakeopenai.Reply{Status: 500}) },
			input: []string{"a"},
			check: func(t *testing.T, s *fakeopenai.Server, e *llm.OpenAIEmbedder, vecs [][]float32, err error) {
				if err != nil || len(vecs) != 1 || len(s.EmbedRequests()) != 3 || e.Stats().Retries != 2 {
					t.Fatalf("err = %v, requests = %d, stats = %+v", err, len(s.EmbedRequests()), e.Stats())
				}
			},
		},
		{
			name:  "404 not retried",
			setup: func(s *fakeopenai.Server) { s.QueueEmbed(fakeopenai.Reply{Status: 404, Content: "model not found"}) },
			input: []string{"a"},
			check: func(t *testing.T, s *fakeopenai.Server, e *llm.OpenAIEmbedder, _ [][]float32, err error) {
				if !errors.Is(err, llm.ErrPermanent) || len(s.EmbedRequests()) != 1 || e.Stats().Failures != 1 {
					t.Fatalf("err = %v, requests = %d", err, len(s.EmbedRequests()))
				}
			},
		},
		{
			name:  "no input, no request",
			input: nil,
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.OpenAIEmbedder, vecs [][]float32, err error) {
				if err != nil || len(vecs) != 0 || len(s.Requests()) != 0 {
					t.Fatalf("err = %v, vecs = %v", err, vecs)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := fakeopenai.New(t)
			if tt.setup != nil {
				tt.setup(s)
			}
			e := newEmbedder(t, s, tt.cfg)
			vecs, err := e.Embed(context.Background(), tt.input)
			tt.check(t, s, e, vecs, err)
		})
	}
}

func TestOpenAIEmbedderWaitNotifier(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	s.QueueEmbed(fakeopenai.Reply{Status: 503, Headers: map[string]string{"Retry-After": "0"}})
	e := newEmbedder(t, s, nil)
	var waits atomic.Int32
	ctx := llm.WithWaitNotifier(context.Background(), func(time.Duration) { waits.Add(1) })
	if _, err := e.Embed(ctx, []string{"a"}); err != nil || waits.Load() != 1 {
		t.Fatalf("err = %v, waits = %d", err, waits.Load())
	}
}

func TestNewOpenAIEmbedderValidation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  llm.EmbedConfig
		want string
	}{
		{llm.EmbedConfig{}, "model is required"},
		{llm.EmbedConfig{Model: "m", Dims: -1}, "dims"},
		{llm.EmbedConfig{Model: "m", SendDims: true}, "dims"},
		{llm.EmbedConfig{Model: "m", BatchSize: -1}, "batch size"},
	} {
		if _, err := llm.NewOpenAIEmbedder(tt.cfg, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("cfg %+v: err = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
