package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// defaultEmbedBatchSize is how many texts go in one embeddings request by default.
const defaultEmbedBatchSize = 64

// EmbedConfig configures an OpenAIEmbedder. Zero values take the documented defaults; the
// retry fields mean what they mean in ChatConfig.
type EmbedConfig struct {
	BaseURL string // default OpenAI's API (defaultBaseURL)
	APIKey  string
	Model   string // required
	// Dims is the expected vector length; 0 learns it from the first response. Every response
	// must then match it.
	Dims int
	// SendDims sends Dims as the "dimensions" request parameter (text-embedding-3 models can
	// shorten their vectors); many other servers reject the parameter.
	SendDims  bool
	BatchSize int // texts per request, default 64

	Timeout                    time.Duration // per attempt, default 60s
	MaxRetries                 int           // default 4; negative disables retries
	InitialBackoff, MaxBackoff time.Duration // defaults 500ms, 30s
	MaxRetryAfter              time.Duration // default 2m
}

// OpenAIEmbedder calls an OpenAI-compatible /embeddings endpoint. Safe for concurrent use.
type OpenAIEmbedder struct {
	client    *openai.Client
	model     string
	sendDims  bool
	batchSize int
	policy    retryPolicy
	logger    *slog.Logger
	dims      atomic.Int64 // configured, or learnt from the first response

	calls, retries, failures atomic.Int64
	observe                  Observer // nil: calls are not reported
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// NewOpenAIEmbedder makes an embedder. A nil logger discards logs.
func NewOpenAIEmbedder(cfg EmbedConfig, logger *slog.Logger) (*OpenAIEmbedder, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: embed config: model is required")
	}
	if cfg.Dims < 0 {
		return nil, fmt.Errorf("llm: embed config: dims must not be negative, got %d", cfg.Dims)
	}
	if cfg.SendDims && cfg.Dims == 0 {
		return nil, errors.New("llm: embed config: send dims needs dims")
	}
	if cfg.BatchSize < 0 {
		return nil, fmt.Errorf("llm: embed config: batch size must not be negative, got %d", cfg.BatchSize)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = defaultEmbedBatchSize
	}
	policy, err := newRetryPolicy(cfg.Timeout, cfg.MaxRetries, cfg.InitialBackoff, cfg.MaxBackoff, cfg.MaxRetryAfter)
	if err != nil {
		return nil, fmt.Errorf("llm: embed config: %w", err)
	}
	oc, err := newOpenAIClient(cfg.BaseURL, cfg.APIKey)
	if err != nil {
		return nil, fmt.Errorf("llm: embed config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &OpenAIEmbedder{
		client: oc, model: cfg.Model, sendDims: cfg.SendDims, batchSize: cfg.BatchSize,
		policy: policy, logger: logger.With("component", "llm.embed"),
	}
	e.dims.Store(int64(cfg.Dims))
	return e, nil
}

// Model is the configured model name.
func (e *OpenAIEmbedder) Model() string { return e.model }

// Dims is the vector length: configured, or learnt from the first response (0 before it).
func (e *OpenAIEmbedder) Dims() int { return int(e.dims.Load()) }

// Embed embeds texts in batches, one request per batch in sequence, and returns the vectors in
// input order. Retry waits are reported to a WithWaitNotifier callback in ctx.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batchSize {
		batch := texts[start:min(start+e.batchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("llm: embedding texts %d-%d of %d with model %s: %w",
				start, start+len(batch)-1, len(texts), e.model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	req := openai.EmbeddingRequestStrings{
		Input: batch, Model: openai.EmbeddingModel(e.model), EncodingFormat: openai.EmbeddingEncodingFormatFloat,
	}
	if e.sendDims {
		req.Dimensions = e.Dims()
	}
	e.calls.Add(1)
	var vecs [][]float32
	start := time.Now()
	var usage int
	attempts, err := e.policy.run(ctx, e.logger, "embeddings request", nil, nil, func(actx context.Context) error {
		resp, err := e.client.CreateEmbeddings(actx, req)
		if err != nil {
			return err
		}
		usage = resp.Usage.PromptTokens
		vecs, err = e.collect(len(batch), resp.Data)
		return err
	})
	if e.observe != nil {
		e.observe(Call{Op: "embed", Model: e.model, Duration: time.Since(start), Err: err, PromptTokens: usage, Attempts: attempts})
	}
	if attempts > 1 {
		e.retries.Add(int64(attempts - 1))
	}
	if err != nil {
		e.failures.Add(1)
		return nil, err
	}
	return vecs, nil
}

// collect orders the response's vectors by index and checks their count and length. A
// malformed response is an ErrInvalidReply: retried a few times within the call, then left
// to the caller (an endpoint answering the wrong dims is broken for every text, not for
// this one).
func (e *OpenAIEmbedder) collect(n int, data []openai.Embedding) ([][]float32, error) {
	if len(data) != n {
		return nil, fmt.Errorf("%w: got %d vectors for %d inputs", ErrInvalidReply, len(data), n)
	}
	out := make([][]float32, n)
	for _, d := range data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: bad or repeated vector index %d for %d inputs", ErrInvalidReply, d.Index, n)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty vector at index %d", ErrInvalidReply, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	dims := len(out[0])
	for i, v := range out {
		if len(v) != dims {
			return nil, fmt.Errorf("%w: vector %d has %d dims, vector 0 has %d", ErrInvalidReply, i, len(v), dims)
		}
	}
	if want := e.dims.Load(); want != 0 && int(want) != dims {
		return nil, fmt.Errorf("%w: vectors have %d dims, want %d", ErrInvalidReply, dims, want)
	}
	if e.dims.CompareAndSwap(0, int64(dims)) {
		e.logger.Info("learnt embedding dims", "model", e.model, "dims", dims)
	} else if want := e.dims.Load(); int(want) != dims { // another call learnt first
		return nil, fmt.Errorf("%w: vectors have %d dims, want %d", ErrInvalidReply, dims, want)
	}
	return out, nil
}
