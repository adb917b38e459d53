package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/console"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/readiness"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
)

// pipeline wires engram's components for one process: the services behind the HTTP
// edge and the workers, all sharing the App's connections.
type pipeline struct {
	app      *App
	redactor *redact.Redactor
	ingest   *ingest.Service
	extract  *extractor.Pipeline
	resolver *consolidator.Resolver
	ops      *lifecycle.Ops
	retr     *retriever.Retriever
	tasks    *retriever.TaskStore
	nightly  *consolidator.Consolidator
	life     *lifecycle.Lifecycle
	metrics  *metrics.Metrics
	ready    *readiness.Checker
}

func newPipeline(ctx context.Context, app *App) (*pipeline, error) {
	r, err := redact.New(redact.Config{Keep: app.Config.RedactKeep})
	if err != nil {
		return nil, fmt.Errorf("building the redactor: %w", err)
	}
	in, err := ingest.NewService(ingest.Config{Limits: ingest.DefaultLimits(), Redactor: r, Publisher: app.JS, Logger: app.Logger,
		Stored: app.Store})
	if err != nil {
		return nil, err
	}
	m := metrics.New(app.Logger)
	m.LimitTenants(app.Config.MetricsTenants)
	m.WatchJetStream(app.JS)
	if app.coverage != nil {
		// Registered before the node listens: a scrape right after /healthz answers
		// already has the gauge.
		m.WatchVectorCoverage(app.coverage.Model(), app.coverage.Ratio)
	}
	ex, chat, err := app.extractor(r, m)
	if err != nil {
		return nil, err
	}
	emb, err := app.embedder()
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_EMBED_*: %w", err)
	}
	if oe, ok := emb.(*llm.OpenAIEmbedder); ok {
		oe.SetObserver(m.ModelObserver("embedding"))
	}
	var turnEmb extractor.TurnEmbedder
	if app.Config.EmbedTurns && emb != nil {
		turnEmb = emb
	}
	ep, err := extractor.NewPipeline(extractor.PipelineConfig{Store: app.Store, Publisher: app.JS, Extractor: ex,
		Redactor: r, TurnEmbedder: turnEmb, BatchQuiet: app.Config.BatchQuiet, Logger: app.Logger})
	if err != nil {
		return nil, fmt.Errorf("building the extractor: %w", err)
	}
	m.WatchExtractor(ep)
	var judge consolidator.Judge
	if chat != nil {
		judge = consolidator.NewLLMJudge(chat)
	}
	res := consolidator.NewResolver(app.Store, emb, judge, consolidator.DefaultResolverConfig(), app.Logger)
	ops := lifecycle.NewOps(app.Store, emb)
	ops.SetRedactor(r)
	tasks, err := retriever.NewTaskStore(ctx, app.JS, retriever.TaskStoreConfig{Replicas: app.Config.StreamReplicas, Logger: app.Logger})
	if err != nil {
		return nil, fmt.Errorf("opening the task-state bucket: %w", err)
	}
	rcfg := retriever.DefaultConfig()
	rcfg.Tasks = tasks
	rcfg.EmbedTurns = app.Config.EmbedTurns
	rcfg.SetContextTurns(app.Config.ContextTurns)
	if app.coverage != nil {
		rcfg.VectorsComplete = app.coverage.Complete // skip per-search coverage counts once complete
	}
	if w := app.Config.SearchWeights; w != nil {
		_, r1 := w["rrf"]
		_, r2 := w["importance"]
		_, r3 := w["recency"]
		_, r4 := w["confidence"]
		if r1 || r2 || r3 || r4 { // the rerank weights are set together; the others stay default
			rcfg.WeightRRF, rcfg.WeightImportance, rcfg.WeightRecency, rcfg.WeightConfidence =
				w["rrf"], w["importance"], w["recency"], w["confidence"]
		}
		if v, ok := w["memory_layer"]; ok {
			rcfg.MemoryLayerWeight = v
		}
		if v, ok := w["turn_neighbour"]; ok {
			rcfg.TurnNeighbourWeight = v
		}
	}
	retr, err := retriever.NewRetriever(app.Store, emb, rcfg, app.Logger)
	if err != nil {
		return nil, fmt.Errorf("building the retriever: %w", err)
	}
	nightly := consolidator.NewConsolidator(app.Store, res, emb, chat, consolidator.DefaultNightlyConfig(), app.Logger)
	life := lifecycle.NewLifecycle(app.Store, app.JS, tasks, app.Logger)
	life.SetCompactor(app.compactor(ctx))
	return &pipeline{app: app, redactor: r, ingest: in, extract: ep, resolver: res, ops: ops,
		retr: retr, tasks: tasks, nightly: nightly, life: life, metrics: m, ready: app.readiness(m)}, nil
}

// extractor is the configured extractor (the LLM one when ENGRAM_LLM_* is set, with
// the offline fallback when asked for; else the offline rules) and its chat client
// (nil offline). m, when set, observes the model calls.
func (a *App) extractor(r *redact.Redactor, m *metrics.Metrics) (extractor.Extractor, *llm.ChatClient, error) {
	chat, err := a.chat()
	if err != nil {
		return nil, nil, fmt.Errorf("ENGRAM_LLM_*: %w", err)
	}
	if chat == nil {
		return extractor.NewOffline(), nil, nil
	}
	if m != nil {
		chat.SetObserver(m.ModelObserver("llm"))
	}
	var ex extractor.Extractor
	ex, err = extractor.NewLLMExtractor(chat, extractor.LLMConfig{Redactor: r, Logger: a.Logger})
	if err != nil {
		return nil, nil, err
	}
	if a.Config.LLMFallback == "offline" {
		fb := extractor.NewFallback(ex, extractor.NewOffline(), a.Config.LLMFallbackAfter, a.Logger)
		if m != nil {
			m.WatchCounter("engram_extractor_fallback_batches_total",
				"Batches the offline rules extracted because the chat model was unavailable (ENGRAM_LLM_FALLBACK=offline).", fb.Fallbacks)
		}
		ex = fb
	}
	return ex, chat, nil
}

func (p *pipeline) workers() []func(context.Context) error {
	// The retriever's background loop batches access counts and refreshes session
	// summaries off the request path.
	return []func(context.Context) error{p.runExtractor, p.runResolver, p.retr.Run, p.runSchedule}
}

// edge is the HTTP API over the pipeline's services.
func (p *pipeline) edge(tokens *httpapi.Tokens, health httpapi.Health) (http.Handler, error) {
	con, err := console.New(console.Config{Tokens: tokens, Reader: p.app.Store, Memories: p.ops, Lifecycle: p.life,
		Retriever: p.retr, DLQ: streams.NewDLQ(p.app.JS), Logger: p.app.Logger})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Config{Tokens: tokens, Turns: p.ingest, Memories: p.ops, Lifecycle: p.life,
		Retriever: p.retr, Tasks: p.tasks, Health: health, Console: con, Metrics: p.metrics.Handler(), Observer: p.metrics,
		Logger: p.app.Logger, MCP: p.mcp}), nil
}

// opsEdge is the HTTP edge of a worker process: only /healthz, /readyz and /metrics
// are served (every other route answers 503).
func (p *pipeline) opsEdge() http.Handler {
	return httpapi.New(httpapi.Config{Health: p.ready, Metrics: p.metrics.Handler(), Observer: p.metrics, Logger: p.app.Logger})
}

// runExtractor is extractor.RunExtractorWorker with the worker runtime's counters
// exposed as metrics.
func (p *pipeline) runExtractor(ctx context.Context) error {
	w, err := streams.NewWorker(p.app.JS, p.extract.WorkerConfig(streams.WorkerConfig{
		MaxOutageBackoff: p.app.Config.OutageBackoffMax, Logger: p.app.Logger}), p.extract.Handle)
	if err != nil {
		return err
	}
	p.metrics.WatchWorker(extractor.ExtractorStage, w)
	return w.Run(ctx)
}

// runResolver is consolidator.RunResolverWorker with decisions, latency and the
// worker runtime's counters exposed as metrics.
func (p *pipeline) runResolver(ctx context.Context) error {
	w, err := consolidator.NewResolverWorker(p.app.JS, p.resolver, consolidator.WorkerConfig{
		MaxOutageBackoff: p.app.Config.OutageBackoffMax, Logger: p.app.Logger}, p.metrics.ObserveDecision)
	if err != nil {
		return err
	}
	p.metrics.WatchWorker("resolve", w)
	return w.Run(ctx)
}

// runMemoryGauge refreshes the memories-by-status gauge while the process serves /metrics.
func (p *pipeline) runMemoryGauge(ctx context.Context) error {
	return p.metrics.RunMemoryGauge(ctx, p.app.Store, p.app.Config.MetricsInterval)
}

func (p *pipeline) close() {}

// runSchedule runs nightly consolidation on ENGRAM_CONSOLIDATE_CRON; only one run at a
// time across all processes (an advisory lock), so every replica may run it.
func (p *pipeline) runSchedule(ctx context.Context) error {
	if p.app.Config.ConsolidateCron == "off" {
		<-ctx.Done()
		return nil
	}
	return consolidator.RunSchedule(ctx, p.nightly, p.app.Config.ConsolidateCron, p.app.Logger)
}
