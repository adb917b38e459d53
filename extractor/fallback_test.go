package extractor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

type failingExtractor struct{ err error }

func (failingExtractor) Name() string    { return "llm" }
func (failingExtractor) Version() string { return "1" }
func (failingExtractor) Model() string   { return "m" }
func (f failingExtractor) Extract(context.Context, Batch) ([]memory.Candidate, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []memory.Candidate{{Content: "from the model"}}, nil
}

func TestFallbackAfterOutage(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	b := Batch{Tenant: "t", UserID: "u", SessionID: "s", New: []memory.Turn{{
		Tenant: "t", TurnID: "1", UserID: "u", SessionID: "s", Role: memory.RoleUser,
		Content: "I prefer green tea in the morning", OccurredAt: at}}}
	now := at
	f := NewFallback(failingExtractor{err: errors.New("connection refused")}, NewOffline(), 10*time.Minute, nil)
	f.now = func() time.Time { return now }
	if _, err := f.Extract(context.Background(), b); err == nil {
		t.Fatal("fell back at once: the turn should wait for the model")
	}
	now = now.Add(9 * time.Minute)
	if _, err := f.Extract(context.Background(), b); err == nil {
		t.Fatal("fell back before the configured outage")
	}
	now = now.Add(2 * time.Minute)
	cands, err := f.Extract(context.Background(), b)
	if err != nil || len(cands) == 0 {
		t.Fatalf("after the outage: %v, %d candidates", err, len(cands))
	}
	for _, c := range cands {
		if c.Extractor != OfflineName || c.Metadata[RebuildKey] != RebuildLLMUnavailable {
			t.Errorf("candidate %+v: want the offline extractor's, marked for rebuild", c)
		}
	}
	if f.Fallbacks() != 1 {
		t.Errorf("Fallbacks = %d", f.Fallbacks())
	}
	// A permanent failure is never papered over.
	p := NewFallback(failingExtractor{err: streams.Permanent(errors.New("bad request"))}, NewOffline(), 0, nil)
	if _, err := p.Extract(context.Background(), b); !streams.IsPermanent(err) {
		t.Errorf("permanent failure: %v", err)
	}
}
