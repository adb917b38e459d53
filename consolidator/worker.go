package consolidator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// WorkerConfig tunes the resolver worker. Zero fields take the streams runtime's
// defaults; the stream, durable consumer and stage are fixed.
type WorkerConfig struct {
	// Concurrency is how many candidates are resolved at once. Different owners run
	// in parallel; one owner's candidates serialise on its lock. Default 8.
	Concurrency    int
	MaxDeliver     int
	AckWait        time.Duration
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	FetchWait      time.Duration
	ShutdownGrace  time.Duration
	// OutageBackoff and MaxOutageBackoff shape the in-process retries of a candidate
	// held through an outage of PostgreSQL or a model endpoint (streams.WorkerConfig).
	OutageBackoff    time.Duration
	MaxOutageBackoff time.Duration
	Logger           *slog.Logger
}

// defaultWorkerConcurrency is the resolver worker's default concurrency.
const defaultWorkerConcurrency = 8

// streamsConfig is the streams.WorkerConfig the resolver worker runs with.
func (c WorkerConfig) streamsConfig() streams.WorkerConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = defaultWorkerConcurrency
	}
	return streams.WorkerConfig{
		Stream:      streams.CandidatesStream,
		Durable:     streams.ResolverConsumer,
		Stage:       "resolve",
		Concurrency: c.Concurrency,
		// One tenant's flood of candidates takes at most half the resolver while other
		// tenants have work (alone it may use all but one handler), so the other
		// tenants' candidates behind it are reached; the worker parks the surplus.
		TenantInFlight: max(c.Concurrency/2, 1),
		MaxAckPending:  50_000,
		MaxDeliver:     c.MaxDeliver,
		AckWait:        c.AckWait,
		InitialBackoff: c.InitialBackoff,
		MaxBackoff:     c.MaxBackoff,
		FetchWait:      c.FetchWait,
		ShutdownGrace:  c.ShutdownGrace,
		// Undecodable or invalid envelopes are poison: straight to the DLQ.
		Validate: streams.ValidateCandidatePayload,
		// PostgreSQL or a model endpoint down holds the candidate instead of spending
		// its deliveries.
		IsOutage:         func(err error) bool { return memory.IsOutage(err) || llm.IsOutage(err) },
		OutageBackoff:    c.OutageBackoff,
		MaxOutageBackoff: c.MaxOutageBackoff,
		Logger:           c.Logger,
	}
}

// RunResolverWorker consumes CANDIDATES with the durable consumer "resolver" until
// ctx is cancelled. A message is acked only after its transaction committed (the
// runtime acks when the handler returns nil); transient failures are redelivered
// with backoff, and candidates that can never apply go to the DLQ.
func RunResolverWorker(ctx context.Context, js jetstream.JetStream, r *Resolver, cfg WorkerConfig) error {
	return streams.RunWorker(ctx, js, cfg.streamsConfig(), resolverHandler(r))
}

// resolverHandler is the worker's message handler.
func resolverHandler(r *Resolver) streams.Handler { return ObservedResolverHandler(r, nil) }

// NewResolverWorker is the resolver worker RunResolverWorker runs, with observe (when
// not nil) told each resolved candidate's decision and latency, for metrics; the
// caller runs it (Run) and may read its Stats.
func NewResolverWorker(js jetstream.JetStream, r *Resolver, cfg WorkerConfig,
	observe func(d Decision, took time.Duration, err error)) (*streams.Worker, error) {
	return streams.NewWorker(js, cfg.streamsConfig(), ObservedResolverHandler(r, observe))
}

// ObservedResolverHandler is the resolver's message handler telling observe (when not
// nil) what each resolved candidate became and how long resolving it took.
func ObservedResolverHandler(r *Resolver, observe func(d Decision, took time.Duration, err error)) streams.Handler {
	return func(ctx context.Context, m *streams.Msg) error {
		ev, err := streams.DecodeCandidateEvent(m.Data)
		if err != nil {
			return streams.Permanent(err)
		}
		// The subject is what the publisher was authorised for, and what erasure
		// deletes by: a payload claiming another tenant or user (or none) than its
		// subject is refused rather than written there.
		want, err := ev.Subject()
		if err != nil {
			return streams.Permanent(fmt.Errorf("candidate %s: %w", ev.Candidate.ID, err))
		}
		if want != m.Subject {
			return streams.Permanent(fmt.Errorf("candidate %s: payload tenant %q and user %q (subject %s) differ from message subject %s",
				ev.Candidate.ID, ev.Candidate.Tenant, ev.Candidate.UserID, want, m.Subject))
		}
		start := time.Now()
		// Candidates of one owner handled at the same time share a transaction.
		d, err := r.ResolveQueued(ctx, ev.Candidate)
		if observe != nil {
			observe(d, time.Since(start), err)
		}
		return err
	}
}
