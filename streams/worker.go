package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for WorkerConfig.
const (
	defaultConcurrency    = 1
	defaultMaxDeliver     = 5
	defaultAckWait        = 30 * time.Second
	defaultMaxAckPending  = 1000
	defaultInitialBackoff = time.Second
	defaultMaxBackoff     = 5 * time.Minute
	defaultBackoffJitter  = 0.2
	defaultFetchWait      = 5 * time.Second
	defaultShutdownGrace  = 30 * time.Second
)

// Tuning constants that need no configuration.
const (
	ackTimeout          = 5 * time.Second        // confirming one ack / nak / term
	dlqPublishRetryFor  = time.Minute            // retrying a failing DLQ publish
	hardStopAfterGrace  = 5 * time.Second        // waiting for handlers that ignore ctx
	fetchErrorPause     = 500 * time.Millisecond // before pulling again after an error
	firstFailureMaxKept = 4096                   // bound on remembered first failures
)

// Msg is one delivery handed to a Handler. Handlers must not ack it: the runtime does,
// according to the returned error.
type Msg struct {
	Subject      string
	Data         []byte
	Headers      nats.Header
	Stream       string
	StreamSeq    uint64
	NumDelivered uint64    // 1 on the first delivery
	Timestamp    time.Time // when the message was stored
}

// Tenant is the tenant of an engram event, from its subject only: NATS permissions
// apply to subjects, so a publisher allowed only engram.turns.A.> cannot claim tenant
// B through a header or the body. Empty when the subject carries none.
func (m *Msg) Tenant() string {
	t, _ := tenantFromSubject(m.Subject)
	return t
}

// Handler processes one message. nil acks it; Permanent(err) dead-letters it;
// RetryAfter(d, err) redelivers after d; any other error redelivers after an exponential
// backoff, and dead-letters on the last allowed delivery. ctx is not cancelled by
// shutdown until the grace period has passed.
type Handler func(ctx context.Context, m *Msg) error

// WorkerConfig configures a worker: its durable consumer and its retry policy.
type WorkerConfig struct {
	// Stream to consume, e.g. TurnsStream. Required.
	Stream string
	// Durable is the durable consumer name, shared by every replica of the worker,
	// e.g. ExtractorConsumer. Required.
	Durable string
	// FilterSubject narrows the consumer; empty means the whole stream.
	FilterSubject string
	// Stage names the worker in dead letters (engram.dlq.<stage>.<tenant>).
	// Default: Durable.
	Stage string
	// Concurrency is how many handlers run at once; without TenantInFlight the worker
	// never holds more un-acked messages than that. Default 1. Micro-batching handlers that block until a
	// batch flushes want it large (e.g. 256).
	Concurrency int
	// MaxDeliver is the number of deliveries before a failing message is dead-lettered.
	// Default 5.
	MaxDeliver int
	// AckWait is how long JetStream waits for an ack before redelivering. The runtime
	// reports progress every AckWait/3 while a handler runs. Default 30s.
	AckWait time.Duration
	// MaxAckPending bounds un-acked messages across all replicas. Default 1000, and never
	// below Concurrency. With TenantInFlight it is also how many messages one worker
	// holds (running and parked), so it must exceed the largest flood to be passed.
	MaxAckPending int
	// InitialBackoff and MaxBackoff shape the Nak delay: InitialBackoff doubled per
	// delivery, capped at MaxBackoff. Defaults 1s and 5m.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// BackoffJitter is the randomization factor of the delay. 0 means
	// 0.2; negative disables jitter.
	BackoffJitter float64
	// FetchWait is how long one pull request waits for messages. Default 5s.
	FetchWait time.Duration
	// ShutdownGrace is how long in-flight handlers may run after ctx is cancelled before
	// their own context is cancelled. Default 30s.
	ShutdownGrace time.Duration
	// Validate, when set, checks each payload before the handler sees it; a failing
	// payload is poison and goes to the DLQ at once. DecodeTurnEvent-based
	// ValidateTurnPayload is the usual choice.
	Validate func(data []byte) error
	// IsOutage, when set, tells dependency outages from message faults for errors the
	// streams package cannot recognise itself (the database driver's connection errors,
	// a model endpoint's 5xx); see IsOutage for what it recognises. A handler error it
	// accepts holds the message in-process instead of redelivering it (see Worker.hold).
	IsOutage func(error) bool
	// OutageBackoff and MaxOutageBackoff shape the waits between in-process retries of a
	// message held through an outage, doubling from the first up to the second. Defaults
	// 500ms and 30s.
	OutageBackoff    time.Duration
	MaxOutageBackoff time.Duration
	// MaxMessageFaults is how many times a held message may fail with an outage error
	// while other messages succeed before it is taken for the fault and dead-lettered.
	// Default 3.
	MaxMessageFaults int
	// TenantInFlight, when positive, caps how many handlers of one tenant (from the
	// subject) run at once while other tenants have work in the worker. The worker then
	// fetches beyond its free handlers and parks what cannot run yet (see fairness.go),
	// so one tenant's flood cannot take every handler and the messages of other tenants
	// behind it are reached within a few pull requests.
	TenantInFlight int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (c WorkerConfig) withDefaults() (WorkerConfig, error) {
	if c.Stream == "" {
		return c, errors.New("worker config: Stream is required")
	}
	if c.Durable == "" {
		return c, errors.New("worker config: Durable is required")
	}
	if c.Stage == "" {
		c.Stage = c.Durable
	}
	if err := ValidateID("worker config: Stage", c.Stage); err != nil {
		return c, err
	}
	if c.Concurrency <= 0 {
		c.Concurrency = defaultConcurrency
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = defaultMaxDeliver
	}
	if c.AckWait <= 0 {
		c.AckWait = defaultAckWait
	}
	if c.MaxAckPending <= 0 {
		c.MaxAckPending = defaultMaxAckPending
	}
	c.MaxAckPending = max(c.MaxAckPending, c.Concurrency)
	if c.InitialBackoff <= 0 {
		c.InitialBackoff = defaultInitialBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = defaultMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.InitialBackoff)
	switch {
	case c.BackoffJitter == 0:
		c.BackoffJitter = defaultBackoffJitter
	case c.BackoffJitter < 0:
		c.BackoffJitter = 0
	case c.BackoffJitter >= 1:
		return c, fmt.Errorf("worker config: BackoffJitter %v must be below 1", c.BackoffJitter)
	}
	if c.FetchWait <= 0 {
		c.FetchWait = defaultFetchWait
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = defaultShutdownGrace
	}
	if c.OutageBackoff <= 0 {
		c.OutageBackoff = defaultOutageBackoff
	}
	if c.MaxOutageBackoff <= 0 {
		c.MaxOutageBackoff = defaultMaxOutageBackoff
	}
	c.MaxOutageBackoff = max(c.MaxOutageBackoff, c.OutageBackoff)
	if c.MaxMessageFaults <= 0 {
		c.MaxMessageFaults = defaultMaxMessageFaults
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// consumerConfig is the durable consumer configuration the worker creates or updates.
// The consumer has no delivery limit: JetStream would silently stop redelivering a
// message after MaxDeliver deliveries, and deliveries also pile up without any fault of
// the message (a worker killed or a NATS server restarted while it was in flight). The
// runtime enforces MaxDeliver on message faults itself and dead-letters, visibly.
func (c WorkerConfig) consumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       c.Durable,
		Description:   "engram worker " + c.Stage,
		FilterSubject: c.FilterSubject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: c.MaxAckPending,
	}
}

// Stats is a snapshot of a worker's counters.
type Stats struct {
	Delivered    int64 // messages handed to the runtime
	Acked        int64 // confirmed acks
	Nacked       int64 // redeliveries requested
	DeadLettered int64 // messages written to the DLQ and terminated
	Poison       int64 // of DeadLettered, payloads that failed Validate
	Panics       int64 // handler panics recovered
	AckErrors    int64 // ack / nak / term / DLQ calls that failed
	Held         int64 // in-process retries of messages held through a dependency outage
	Parked       int64 // messages that waited in the worker for a handler of their tenant
}

type counters struct {
	delivered, acked, nacked, deadLettered, poison, panics, ackErrors, held, parked atomic.Int64
}

// Worker runs a Handler on a durable pull consumer. Create with NewWorker; Run once.
type Worker struct {
	js  jetstream.JetStream
	cfg WorkerConfig
	h   Handler
	log *slog.Logger
	c   counters

	mu        sync.Mutex
	inflight  map[jetstream.Msg]struct{} // for progress reports
	firstFail map[uint64]time.Time       // stream seq → first failure seen here

	// Outage state (under mu): messages held, when a dependency last failed and when a
	// message last succeeded, and probes made since (see fetchGate).
	holding        int
	lastOutageFail time.Time
	lastSuccess    time.Time
	probes         int

	// Scheduling state (under mu, see fairness.go).
	tenants map[string]*tenantWork // tenants with messages running or parked
	parked  map[uint64]*parked     // stream seq → parked message
	busy    int                    // handlers running
	wake    chan struct{}          // see signal

	run    runEnv                           // set by Run before the first fetch
	stream atomic.Pointer[jetstream.Stream] // for reading parked messages back
}

// runEnv is what handlers started by the scheduler need: ctx ends at shutdown, hctx
// (the handlers' own) outlives it by the grace period.
type runEnv struct {
	ctx, hctx context.Context
	wg        *sync.WaitGroup
}

// NewWorker validates cfg and returns a worker; nothing touches the server until Run.
func NewWorker(js jetstream.JetStream, cfg WorkerConfig, h Handler) (*Worker, error) {
	if h == nil {
		return nil, errors.New("worker config: nil handler")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Worker{
		js:        js,
		cfg:       cfg,
		h:         h,
		log:       cfg.Logger.With("stream", cfg.Stream, "consumer", cfg.Durable),
		inflight:  map[jetstream.Msg]struct{}{},
		firstFail: map[uint64]time.Time{},

		tenants: map[string]*tenantWork{},
		parked:  map[uint64]*parked{},
		wake:    make(chan struct{}, 1),
	}, nil
}

// RunWorker is NewWorker followed by Run.
func RunWorker(ctx context.Context, js jetstream.JetStream, cfg WorkerConfig, h Handler) error {
	w, err := NewWorker(js, cfg, h)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

// Stats returns a snapshot of the worker's counters.
func (w *Worker) Stats() Stats {
	return Stats{
		Delivered:    w.c.delivered.Load(),
		Acked:        w.c.acked.Load(),
		Nacked:       w.c.nacked.Load(),
		DeadLettered: w.c.deadLettered.Load(),
		Poison:       w.c.poison.Load(),
		Panics:       w.c.panics.Load(),
		AckErrors:    w.c.ackErrors.Load(),
		Held:         w.c.held.Load(),
		Parked:       w.c.parked.Load(),
	}
}

// Run creates or updates the durable consumer and processes messages until ctx is
// cancelled. Then it stops pulling, lets in-flight handlers finish (and be acked) within
// ShutdownGrace, and returns nil. Messages fetched but not yet handled (parked, see
// fairness.go) are handed back with a Nak at once.
func (w *Worker) Run(ctx context.Context) error {
	cfg := w.cfg
	cons, err := w.createConsumer(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("creating consumer %s on %s: %w", cfg.Durable, cfg.Stream, err)
	}
	w.log.Info("worker started", "concurrency", cfg.Concurrency, "max_deliver", cfg.MaxDeliver, "ack_wait", cfg.AckWait)

	// Handlers outlive ctx by up to the grace period so in-flight work can finish.
	hctx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	var wg sync.WaitGroup
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go w.reportProgress(stopProgress, progressDone)

	w.mu.Lock()
	w.run = runEnv{ctx: ctx, hctx: hctx, wg: &wg}
	w.mu.Unlock()
	runErr := w.pull(ctx, cons)
	w.requeueParked()

	w.log.Info("worker draining", "in_flight", w.inFlight())
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.ShutdownGrace):
		w.log.Warn("shutdown grace expired; cancelling handlers", "in_flight", w.inFlight(), "grace", cfg.ShutdownGrace)
		cancelHandlers()
		select {
		case <-done:
		case <-time.After(hardStopAfterGrace):
			runErr = errors.Join(runErr, fmt.Errorf("worker %s: %d handlers ignored cancellation", cfg.Durable, w.inFlight()))
		}
	}
	close(stopProgress)
	<-progressDone
	w.log.Info("worker stopped", "stats", w.Stats())
	return runErr
}

// pull is the fetch loop. Without a tenant cap it asks for exactly as many messages as
// there are free handlers, so nothing waits un-acked in the worker; with one it also
// fetches what it may park (see fairness.go). It returns when ctx is done.
func (w *Worker) pull(ctx context.Context, cons jetstream.Consumer) error {
	for {
		n, ok := w.waitRoom(ctx)
		if !ok {
			return nil
		}
		allow := -1
		if k, wait := w.fetchGate(max(n, 1)); wait > 0 {
			n, allow = min(n, k), 1
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil
			}
			if w.dispatch(1) > 0 {
				continue // a parked message is the probe
			}
		}
		if n == 0 {
			continue
		}
		err := w.fetch(ctx, cons, n, allow)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, nats.ErrConnectionClosed) {
				return fmt.Errorf("pulling from %s/%s: %w", w.cfg.Stream, w.cfg.Durable, err)
			}
			w.log.Warn("pull failed", "err", err)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) {
				if c, cerr := w.js.CreateOrUpdateConsumer(ctx, w.cfg.Stream, w.cfg.consumerConfig()); cerr == nil {
					cons = c
				}
			}
			select {
			case <-time.After(fetchErrorPause):
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// fetch runs one pull request for n messages, admitting each as it arrives; at most
// allow of them (negative: no limit) start a handler during an outage probe.
func (w *Worker) fetch(ctx context.Context, cons jetstream.Consumer, n, allow int) error {
	fctx, cancel := context.WithTimeout(ctx, w.cfg.FetchWait)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		return err
	}
	for jm := range batch.Messages() {
		w.c.delivered.Add(1)
		started := w.admit(jm, allow)
		if allow > 0 {
			allow -= started
		}
	}
	err = batch.Error()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = nil // the pull's own expiry
	}
	return err
}

func (w *Worker) track(jm jetstream.Msg) {
	w.mu.Lock()
	w.inflight[jm] = struct{}{}
	w.mu.Unlock()
}

func (w *Worker) untrack(jm jetstream.Msg) {
	w.mu.Lock()
	delete(w.inflight, jm)
	w.mu.Unlock()
}

func (w *Worker) inFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.inflight)
}

// reportProgress tells JetStream every AckWait/3 that each in-flight or parked message
// is still being worked on, so slow handlers (LLM calls, batch waits) and messages
// waiting for one are not redelivered.
func (w *Worker) reportProgress(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(max(w.cfg.AckWait/3, 10*time.Millisecond))
	defer t.Stop()
	var msgs []jetstream.Msg
	var replies []string
	nc := w.js.Conn()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		msgs = msgs[:0]
		w.mu.Lock()
		for m := range w.inflight {
			msgs = append(msgs, m)
		}
		w.mu.Unlock()
		for _, m := range msgs {
			// Fails harmlessly for a message acked since the snapshot.
			if err := m.InProgress(); err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
				w.log.Debug("progress report failed", "err", err)
			}
		}
		// Parked messages too: they are held un-acked like running ones. One started
		// since the snapshot gets one report too many, which is harmless.
		replies = w.parkedReplies(replies[:0])
		for _, r := range replies {
			if err := nc.Publish(r, ackBodyProgress); err != nil {
				w.log.Debug("progress report failed", "err", err)
				break
			}
		}
	}
}

// process runs the handler for one delivery and settles the message. ctx ends at
// shutdown; hctx, the handler's, outlives it by the grace period.
func (w *Worker) process(ctx, hctx context.Context, jm jetstream.Msg) {
	meta, err := jm.Metadata()
	if err != nil {
		// Not a JetStream delivery; nothing sensible to do but let it time out.
		w.log.Error("message without metadata", "subject", jm.Subject(), "err", err)
		w.c.ackErrors.Add(1)
		return
	}
	m := &Msg{
		Subject:      jm.Subject(),
		Data:         jm.Data(),
		Headers:      jm.Headers(),
		Stream:       meta.Stream,
		StreamSeq:    meta.Sequence.Stream,
		NumDelivered: meta.NumDelivered,
		Timestamp:    meta.Timestamp,
	}
	log := w.log.With("subject", m.Subject, "seq", m.StreamSeq, "delivery", m.NumDelivered)
	if w.cfg.Validate != nil {
		if err := w.cfg.Validate(m.Data); err != nil {
			now := time.Now()
			log.Warn("poison message", "err", err)
			if w.deadLetter(hctx, log, jm, m, fmt.Errorf("poison: %w", err), now, now) {
				w.c.poison.Add(1)
			}
			return
		}
	}
	if limit := uint64(max(crashLoopFactor*w.cfg.MaxDeliver, crashLoopMin)); m.NumDelivered > limit {
		now := time.Now()
		log.Warn("delivered too often without being settled", "limit", limit)
		w.deadLetter(hctx, log, jm, m, fmt.Errorf("delivered %d times without being settled (the worker died on it?)", m.NumDelivered), now, now)
		return
	}
	err = w.invoke(hctx, log, m)
	if w.isOutage(err) {
		w.noteOutageFailure()
		err = w.hold(ctx, hctx, log, m, err)
	}
	w.settle(hctx, log, jm, m, err)
}

// invoke calls the handler, turning a panic into an error.
func (w *Worker) invoke(ctx context.Context, log *slog.Logger, m *Msg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			w.c.panics.Add(1)
			log.Error("handler panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return w.h(ctx, m)
}

func (w *Worker) settle(hctx context.Context, log *slog.Logger, jm jetstream.Msg, m *Msg, err error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(hctx), ackTimeout)
	defer cancel()
	if err == nil {
		w.noteSuccess()
		w.forgetFailure(m.StreamSeq)
		if aerr := jm.DoubleAck(actx); aerr != nil {
			// The work is done; a redelivery will be handled idempotently.
			w.c.ackErrors.Add(1)
			log.Warn("ack failed", "err", aerr)
			return
		}
		w.c.acked.Add(1)
		return
	}
	now := time.Now()
	first := w.noteFailure(m, now)
	switch {
	case IsPermanent(err):
		log.Warn("permanent failure", "err", err)
		w.deadLetter(hctx, log, jm, m, err, first, now)
		return
	case m.NumDelivered >= uint64(w.cfg.MaxDeliver) && !w.isOutage(err):
		// An outage error here means the worker is shutting down while holding the
		// message: it is redelivered, never dead-lettered for it.
		log.Warn("giving up", "err", err, "max_deliver", w.cfg.MaxDeliver)
		w.deadLetter(hctx, log, jm, m, err, first, now)
		return
	}
	delay, ok := retryDelay(err)
	if !ok {
		delay = w.backoff(m.NumDelivered)
	}
	log.Warn("handler failed; retrying", "err", err, "delay", delay)
	if nerr := jm.NakWithDelay(delay); nerr != nil {
		w.c.ackErrors.Add(1)
		log.Warn("nak failed; message will be redelivered after ack wait", "err", nerr)
		return
	}
	w.c.nacked.Add(1)
}

// backoff is the Nak delay after the given delivery: consumer BackOff only applies to
// ack timeouts, so the runtime computes it (InitialBackoff·2^(delivery-1), capped).
func (w *Worker) backoff(delivery uint64) time.Duration {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     w.cfg.InitialBackoff,
		RandomizationFactor: w.cfg.BackoffJitter,
		Multiplier:          2,
		MaxInterval:         w.cfg.MaxBackoff,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	d := b.InitialInterval
	for i := uint64(0); i < max(delivery, 1) && i < 64; i++ {
		d = b.NextBackOff()
	}
	return min(d, w.cfg.MaxBackoff)
}

// noteFailure records the first failure of a sequence seen by this worker and returns
// it; a failure first seen elsewhere falls back to the message's store time.
func (w *Worker) noteFailure(m *Msg, now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.firstFail[m.StreamSeq]; ok {
		return t
	}
	first := now
	if m.NumDelivered > 1 && !m.Timestamp.IsZero() {
		first = m.Timestamp
	}
	if len(w.firstFail) >= firstFailureMaxKept {
		// Left behind by messages that later succeeded on another replica: drop the
		// old ones, or everything, rather than grow without bound.
		cut := now.Add(-time.Hour)
		for seq, t := range w.firstFail {
			if t.Before(cut) {
				delete(w.firstFail, seq)
			}
		}
		if len(w.firstFail) >= firstFailureMaxKept {
			clear(w.firstFail)
		}
	}
	w.firstFail[m.StreamSeq] = first
	return first
}

func (w *Worker) forgetFailure(seq uint64) {
	w.mu.Lock()
	delete(w.firstFail, seq)
	w.mu.Unlock()
}

// deadLetter writes the message to the DLQ and, once JetStream acked that, terminates
// the original. It reports whether both happened.
func (w *Worker) deadLetter(hctx context.Context, log *slog.Logger, jm jetstream.Msg, m *Msg, cause error, first, last time.Time) bool {
	d := deadLetter{
		Stage: w.cfg.Stage, Subject: m.Subject, Stream: m.Stream, Seq: m.StreamSeq,
		Headers: m.Headers, Data: m.Data, Err: cause, Attempts: m.NumDelivered,
		First: first, Last: last,
	}
	// The DLQ may be briefly unavailable; progress reports keep the original alive
	// while we retry, since a Nak on the last delivery would lose it.
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxElapsedTime = dlqPublishRetryFor
	err := backoff.Retry(func() error {
		return publishDeadLetter(hctx, w.js, d)
	}, backoff.WithContext(b, hctx))
	if err != nil {
		w.c.ackErrors.Add(1)
		log.Error("dead-lettering failed; message left un-acked", "err", err, "cause", cause)
		return false
	}
	w.forgetFailure(m.StreamSeq)
	actx, cancel := context.WithTimeout(context.WithoutCancel(hctx), ackTimeout)
	defer cancel()
	if err := w.termSync(actx, jm, cause); err != nil {
		// Already in the DLQ; a redelivery would dead-letter it again under the same
		// DLQ msg id, which JetStream deduplicates.
		w.c.ackErrors.Add(1)
		log.Warn("term after dead-lettering failed", "err", err)
	}
	w.c.deadLettered.Add(1)
	log.Info("dead-lettered", "stage", w.cfg.Stage, "err", cause)
	return true
}

// termSync terminates a message. Term has no confirmed variant in nats.go, so flush
// the connection: the server has then processed the term.
func (w *Worker) termSync(ctx context.Context, jm jetstream.Msg, cause error) error {
	if err := jm.TermWithReason(headerValue(cause.Error(), 256)); err != nil {
		return err
	}
	return w.js.Conn().FlushWithContext(ctx)
}
