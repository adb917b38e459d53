package extractor

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// RebuildKey is the metadata key of memories extracted by the offline rules while the
// model was unavailable (value RebuildLLMUnavailable): a later rebuild re-extracts
// their turns with the model.
const (
	RebuildKey            = "rebuild"
	RebuildLLMUnavailable = "llm_unavailable"
)

// Fallback is an Extractor that uses a model-backed primary and, once the primary has
// failed with retryable errors for at least After with no success in between, the
// offline rules, marking those candidates for a later rebuild (ENGRAM_LLM_FALLBACK=
// offline). Before After, a failure is returned: the turn waits in TURNS, nothing is
// lost, and the consumer's lag grows.
type Fallback struct {
	primary, offline Extractor
	after            time.Duration
	log              *slog.Logger
	now              func() time.Time

	mu           sync.Mutex
	failingSince time.Time // zero while the primary works

	fallbacks atomic.Int64
}

var _ Extractor = (*Fallback)(nil)

// NewFallback wraps primary; offline is the rules extractor; after is the outage that
// must pass before falling back (at least one minute is sensible).
func NewFallback(primary, offline Extractor, after time.Duration, logger *slog.Logger) *Fallback {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Fallback{primary: primary, offline: offline, after: after, now: time.Now,
		log: logger.With("component", "extractor.fallback")}
}

// Name, Version and Model are the primary's: candidates it did not make say so themselves.
func (f *Fallback) Name() string    { return f.primary.Name() }
func (f *Fallback) Version() string { return f.primary.Version() }
func (f *Fallback) Model() string   { return f.primary.Model() }

// LLMCalls is the primary's count, when it keeps one.
func (f *Fallback) LLMCalls() int64 {
	if lc, ok := f.primary.(LLMCallCounter); ok {
		return lc.LLMCalls()
	}
	return 0
}

// Fallbacks is how many batches the offline rules extracted instead of the primary.
func (f *Fallback) Fallbacks() int64 { return f.fallbacks.Load() }

// Extract implements Extractor.
func (f *Fallback) Extract(ctx context.Context, b Batch) ([]memory.Candidate, error) {
	cands, err := f.primary.Extract(ctx, b)
	if err == nil {
		f.mu.Lock()
		recovered := !f.failingSince.IsZero()
		f.failingSince = time.Time{}
		f.mu.Unlock()
		if recovered {
			f.log.Info("model extraction works again")
		}
		return cands, nil
	}
	if streams.IsPermanent(err) || ctx.Err() != nil {
		return nil, err
	}
	now := f.now()
	f.mu.Lock()
	if f.failingSince.IsZero() {
		f.failingSince = now
	}
	outage := now.Sub(f.failingSince)
	f.mu.Unlock()
	if outage < f.after {
		return nil, err
	}
	cands, oerr := f.offline.Extract(ctx, b)
	if oerr != nil {
		return nil, oerr
	}
	for i := range cands {
		c := &cands[i]
		c.Extractor, c.ExtractorVersion, c.Model = f.offline.Name(), f.offline.Version(), f.offline.Model()
		md := maps.Clone(c.Metadata)
		if md == nil {
			md = map[string]any{}
		}
		md[RebuildKey] = RebuildLLMUnavailable
		c.Metadata = md
	}
	f.fallbacks.Add(1)
	f.log.Warn("model unavailable; extracted with the offline rules, marked for rebuild",
		"tenant", b.Tenant, "outage", outage.Round(time.Second), "candidates", len(cands), "error", err)
	return cands, nil
}
