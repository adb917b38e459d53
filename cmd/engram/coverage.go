package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/reembed"
	"github.com/engramhq/engram/llm"
)

// Vector coverage of the configured embedding model in `engram serve` and `engram
// dev`: logged on start, shown by /readyz (check vector_coverage) and exported as
// engram_vector_coverage; with ENGRAM_REEMBED=auto, what lacks a vector is embedded
// in the background.

// trackCoverage counts the configured model's coverage once and logs it. The tracker
// it sets on the app makes the node's readiness report it.
func (a *App) trackCoverage(ctx context.Context, emb llm.Embedder) {
	a.coverage = reembed.NewTracker(a.Store, emb.Model())
	a.coverage.MaxAge = a.Config.MetricsInterval / 2 // the memory gauges' census serves both
	c, err := a.coverage.Refresh(ctx)
	if err != nil {
		a.Logger.Warn("counting the vector coverage failed", "model", emb.Model(), "error", err)
		return
	}
	with, ratio := c.For(emb.Model()), reembed.Ratio(c, emb.Model())
	if ratio >= 1 {
		a.Logger.Info("vector coverage", "model", emb.Model(), "memories", c.Total, "with_vector", with, "coverage", ratio)
		return
	}
	next := "re-embedding them in the background (ENGRAM_REEMBED=auto)"
	if a.Config.Reembed == "off" {
		next = "run `engram reembed` (ENGRAM_REEMBED=off)"
	}
	a.Logger.Warn("memories lack a vector in the configured embedding model: searched by keyword and recency only until re-embedded; "+next,
		"model", emb.Model(), "memories", c.Total, "with_vector", with, "coverage", ratio)
}

// runCoverage refreshes the coverage every ENGRAM_METRICS_INTERVAL and, with
// ENGRAM_REEMBED=auto, re-embeds whenever it is incomplete (one job at a time across
// processes), until ctx ends. It returns once its goroutine has stopped.
func (a *App) runCoverage(ctx context.Context, emb llm.Embedder) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		interval := a.Config.MetricsInterval
		for {
			if ratio, ok := a.coverage.Ratio(); a.Config.Reembed == "auto" && (!ok || ratio < 1 || a.Config.EmbedTurns) {
				a.backgroundReembed(ctx, emb)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
			if _, err := a.coverage.Refresh(ctx); err != nil && ctx.Err() == nil {
				a.Logger.Warn("counting the vector coverage failed", "model", emb.Model(), "error", err)
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

func (a *App) backgroundReembed(ctx context.Context, emb llm.Embedder) {
	rep, err := reembed.Run(ctx, a.Store, emb, reembed.Options{Turns: a.Config.EmbedTurns, Logger: a.Logger,
		CensusAge: a.Config.MetricsInterval / 2}) // the tracker's count, just taken
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return // shutting down: what is embedded is stored
	case err != nil:
		a.Logger.Warn("background re-embedding failed; it is tried again later, or run `engram reembed`", "model", emb.Model(), "error", err)
		return
	case rep.Skipped:
		a.Logger.Debug("another process is re-embedding", "model", emb.Model())
		return
	}
	if rep.Memories.Missing > 0 || (rep.Turns != nil && rep.Turns.Missing > 0) {
		if _, err := a.coverage.Refresh(ctx); err != nil && ctx.Err() == nil {
			a.Logger.Warn("counting the vector coverage failed", "model", emb.Model(), "error", err)
		}
	}
}
