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
	"github.com/engramhq/engram/internal/redact"
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
}

func newPipeline(ctx context.Context, app *App) (*pipeline, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, fmt.Errorf("building the redactor: %w", err)
	}
	in, err := ingest.NewService(ingest.Config{Limits: ingest.DefaultLimits(), Redactor: r, Publisher: app.JS, Logger: app.Logger})
	if err != nil {
		return nil, err
	}
	chat, err := app.chat()
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_LLM_*: %w", err)
	}
	var ex extractor.Extractor = extractor.NewOffline()
	if chat != nil {
		ex, err = extractor.NewLLMExtractor(chat, extractor.LLMConfig{Redactor: r, Logger: app.Logger})
		if err != nil {
			return nil, err
		}
	}
	emb, err := app.embedder()
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_EMBED_*: %w", err)
	}
	var turnEmb extractor.TurnEmbedder
	if app.Config.EmbedTurns && emb != nil {
		turnEmb = emb
	}
	ep, err := extractor.NewPipeline(extractor.PipelineConfig{Store: app.Store, Publisher: app.JS, Extractor: ex,
		Redactor: r, TurnEmbedder: turnEmb, Logger: app.Logger})
	if err != nil {
		return nil, fmt.Errorf("building the extractor: %w", err)
	}
	var judge consolidator.Judge
	if chat != nil {
		judge = consolidator.NewLLMJudge(chat)
	}
	res := consolidator.NewResolver(app.Store, emb, judge, consolidator.DefaultResolverConfig(), app.Logger)
	ops := lifecycle.NewOps(app.Store, emb)
	tasks, err := retriever.NewTaskStore(ctx, app.JS, retriever.TaskStoreConfig{Replicas: app.Config.StreamReplicas})
	if err != nil {
		return nil, fmt.Errorf("opening the task-state bucket: %w", err)
	}
	rcfg := retriever.DefaultConfig()
	rcfg.Tasks = tasks
	rcfg.EmbedTurns = app.Config.EmbedTurns
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
	return &pipeline{app: app, redactor: r, ingest: in, extract: ep, resolver: res, ops: ops,
		retr: retr, tasks: tasks, nightly: nightly, life: life}, nil
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
		Retriever: p.retr, Tasks: p.tasks, Health: health, Console: con, Logger: p.app.Logger}), nil
}

func (p *pipeline) runExtractor(ctx context.Context) error {
	return extractor.RunExtractorWorker(ctx, p.app.JS, p.extract, streams.WorkerConfig{Logger: p.app.Logger})
}

func (p *pipeline) runResolver(ctx context.Context) error {
	return consolidator.RunResolverWorker(ctx, p.app.JS, p.resolver, consolidator.WorkerConfig{Logger: p.app.Logger})
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
