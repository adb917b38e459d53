package extractor

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// DefaultWorkerConcurrency is the extractor worker's default number of concurrent
// handlers. Each handler blocks until its turn's micro-batch is processed, so a batch can
// only fill when Concurrency ≥ BatchMax × sessions being batched at once: 256 lets 32
// sessions fill batches of 8 together. A lower value never deadlocks (a partial batch
// still flushes after BatchQuiet) but makes batches smaller and LLM calls more frequent.
const DefaultWorkerConcurrency = 256

// DefaultTenantInFlight caps one tenant's share of the extractor's handlers (see
// streams.WorkerConfig.TenantInFlight): a quarter, so a tenant's flood leaves the other
// three quarters to everyone else.
const DefaultTenantInFlight = DefaultWorkerConcurrency / 4

// defaultMaxAckPending lets the worker reach past a flood of this many turns to other
// tenants' turns: it holds the messages of a tenant at its cap parked, un-acked.
const defaultMaxAckPending = 50_000

// ExtractorStage names the stage in dead letters (engram.dlq.extract.<tenant>).
const ExtractorStage = "extract"

// WorkerConfig completes wcfg for the extractor: Stream TURNS, Durable "extractor",
// Stage "extract", Validate ValidateTurnPayload, IsOutage the database's and model
// clients' outage classes, Concurrency DefaultWorkerConcurrency (never below the
// pipeline's BatchMax), TenantInFlight a quarter of it (negative: no cap) and
// MaxAckPending 50,000 unless set.
func (p *Pipeline) WorkerConfig(wcfg streams.WorkerConfig) streams.WorkerConfig {
	if wcfg.Stream == "" {
		wcfg.Stream = streams.TurnsStream
	}
	if wcfg.Durable == "" {
		wcfg.Durable = streams.ExtractorConsumer
	}
	if wcfg.Stage == "" {
		wcfg.Stage = ExtractorStage
	}
	if wcfg.Validate == nil {
		wcfg.Validate = streams.ValidateTurnPayload
	}
	if wcfg.Concurrency <= 0 {
		wcfg.Concurrency = DefaultWorkerConcurrency
	}
	if wcfg.Concurrency < p.cfg.BatchMax {
		p.log.Warn("worker concurrency below BatchMax: batches cannot fill", "concurrency", wcfg.Concurrency, "batch_max", p.cfg.BatchMax)
		wcfg.Concurrency = p.cfg.BatchMax
	}
	if wcfg.TenantInFlight == 0 {
		wcfg.TenantInFlight = max(DefaultTenantInFlight*wcfg.Concurrency/DefaultWorkerConcurrency, p.cfg.BatchMax)
	}
	if wcfg.MaxAckPending == 0 {
		wcfg.MaxAckPending = defaultMaxAckPending
	}
	if wcfg.IsOutage == nil {
		wcfg.IsOutage = dependencyOutage
	}
	if wcfg.Logger == nil {
		wcfg.Logger = p.cfg.Logger
	}
	return wcfg
}

// dependencyOutage tells the worker runtime which handler errors are outages of the
// extractor's dependencies (PostgreSQL, the chat and embedding endpoints) rather than
// faults of the turn: it holds the turn through them instead of spending its deliveries.
func dependencyOutage(err error) bool { return memory.IsOutage(err) || llm.IsOutage(err) }

// RunExtractorWorker consumes TURNS with p.Handle until ctx is cancelled, then drains
// in-flight batches (see streams.Worker.Run). wcfg is completed by p.WorkerConfig.
func RunExtractorWorker(ctx context.Context, js jetstream.JetStream, p *Pipeline, wcfg streams.WorkerConfig) error {
	if p == nil {
		return errors.New("extractor worker: nil pipeline")
	}
	return streams.RunWorker(ctx, js, p.WorkerConfig(wcfg), p.Handle)
}
