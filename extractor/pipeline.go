package extractor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Defaults for PipelineConfig.
const (
	DefaultBatchMax = 8
	// DefaultBatchQuiet is the quiet window of an extractor that calls a model, where
	// gathering a session's turns into one call saves calls. An extractor that calls
	// none gets no window (see BatchWindow).
	DefaultBatchQuiet = 300 * time.Millisecond
	// DefaultSettle is the quiet window of an extractor that calls no model: just long
	// enough for the handlers of turns delivered together (a request's turns, started
	// one after another by the worker) to register, so that each turn is extracted after
	// the turns before it are stored, as its window wants them.
	DefaultSettle      = 5 * time.Millisecond
	DefaultWindowTurns = 12
	// DefaultMaxTransactions bounds the pipeline's transactions at once: half the
	// default connection pool (16), which the resolver shares in a worker process.
	DefaultMaxTransactions = 8
)

// BatchWindow is the micro-batch quiet window a pipeline uses for ex: configured when
// positive; none when negative; when zero, DefaultBatchQuiet for an extractor that calls
// a model (it implements LLMCallCounter) and DefaultSettle for one that does not, since
// waiting saves nothing there and only delays every memory (300 ms were 300 of the
// 320 ms from a turn to its memory being searchable).
func BatchWindow(configured time.Duration, ex Extractor) time.Duration {
	switch {
	case configured > 0:
		return configured
	case configured < 0:
		return 0
	case !callsModel(ex):
		return DefaultSettle
	}
	return DefaultBatchQuiet
}

// callsModel reports an extractor that calls a model.
func callsModel(ex Extractor) bool {
	_, ok := ex.(LLMCallCounter)
	return ok
}

// PipelineConfig configures the TURNS consumer. Zero values take the documented defaults.
type PipelineConfig struct {
	// Store keeps the turns (written first, idempotently) and serves the session window.
	// Required.
	Store *memory.Store
	// Publisher publishes candidates to CANDIDATES (a jetstream.JetStream). Required.
	Publisher streams.Publisher
	// Extractor proposes candidates: NewOffline() or NewLLMExtractor. Required.
	Extractor Extractor
	// Redactor scrubs turns published straight onto NATS before they are stored, and
	// candidate content; candidates that are essentially a secret are dropped.
	// Required: a memory store must never keep a credential.
	Redactor *redact.Redactor
	// Gate skips chit-chat before extraction. Default NewGate().
	Gate *Gate
	// BatchMax flushes a session's micro-batch once it holds this many turns. Default 8.
	// Handlers block while their batch fills, so the worker's Concurrency must be at
	// least BatchMax × the sessions batching at once (DefaultWorkerConcurrency, 256).
	BatchMax int
	// BatchQuiet flushes a session's micro-batch after this long without a new turn.
	// Zero: BatchWindow's choice (300ms with a model, 5ms without); negative: none.
	// Config() holds the window in use (0 for none). Without a window a batch is
	// processed as soon as no turn of its session is still being stored and the
	// session's previous batch is done; the turns arriving meanwhile form the next one.
	BatchQuiet time.Duration
	// WindowTurns is how many earlier turns of the session are given as context.
	// Default 12.
	WindowTurns int
	// MaxTransactions bounds the pipeline's database transactions at once (storing
	// turns, reading windows, writing turn vectors). Default 8. Up to Concurrency
	// handlers store turns at once; unbounded, a backlog of them takes every pooled
	// connection and the resolver sharing the pool waits behind them, so no memory is
	// written while the turns pile up.
	MaxTransactions int
	// TurnEmbedder, when set, embeds each stored turn's content so the turns layer can be
	// searched by vector. Optional: nil stores no turn vectors. Best effort: a failure is
	// logged and counted, never fails the batch (the turn stays stored, extracted and
	// keyword-searchable, just without a vector), because an embedding outage must not
	// hold back extraction; a redelivered turn is embedded again.
	TurnEmbedder TurnEmbedder
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// TurnEmbedder embeds turn content for the turns layer's vector side; llm.Embedder
// satisfies it.
type TurnEmbedder interface {
	// Model names the model; it keys the stored vectors.
	Model() string
	// Embed returns one vector per text, in input order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Stats is a snapshot of a pipeline's counters.
type Stats struct {
	TurnsReceived       int64 // deliveries handled (redeliveries included)
	TurnsStored         int64 // turns newly written to the turns table
	TurnsRedelivered    int64 // turns that were already stored (extraction re-runs for them)
	TurnsSkipped        int64 // turns the gate kept from the extractor
	Batches             int64 // micro-batches processed
	Extractions         int64 // extractor calls: per batch with a model, per turn without (those with a turn past the gate)
	LLMCalls            int64 // chat completions made by the extractor (0 for the offline one)
	CandidatesPublished int64 // candidates acknowledged by CANDIDATES (duplicates included)
	CandidatesDuplicate int64 // of those, ones the stream already had (a redelivery)
	CandidatesDropped   int64 // candidates dropped as essentially a secret
	CandidatesInvalid   int64 // candidates dropped as malformed (an extractor bug)
	TurnsEmbedded       int64 // turn vectors written (redeliveries rewrite theirs)
	TurnEmbedFailures   int64 // batches whose turn vectors could not be made or stored
}

// LLMCallCounter is implemented by extractors that call a model; the pipeline reports
// the count in Stats.LLMCalls.
type LLMCallCounter interface {
	LLMCalls() int64
}

type pipelineCounters struct {
	received, stored, redelivered, skipped, batches, extractions atomic.Int64
	published, duplicate, dropped, invalid                       atomic.Int64
	embedded, embedFailures                                      atomic.Int64
}

// Pipeline is the TURNS consumer: it stores each turn, gathers a session's turns into
// micro-batches, gates, extracts, applies source trust and redaction, and publishes the
// candidates. Handle is its streams.Handler. It is safe for concurrent use.
type Pipeline struct {
	cfg         PipelineConfig
	log         *slog.Logger
	c           pipelineCounters
	placeholder *regexp.Regexp // a redaction placeholder, as redact.Placeholder writes it
	// perTurn extracts each turn of a batch on its own, with the turns before it as its
	// window: an extractor that calls no model then gives the same candidates however
	// the turns happened to be batched (see candidatesPerTurn).
	perTurn bool
	txSlots chan struct{} // a token per transaction in progress (MaxTransactions)

	mu      sync.Mutex
	pending map[sessionKey]*microBatch // batches still accepting turns
	// running is, per session, the last batch closed and not yet done: the next batch
	// of the session runs only after it, so a session's candidates are published in
	// conversation order.
	running map[sessionKey]*microBatch
	// arriving holds, per session, the turns whose handlers are between receiving them
	// and adding them to a batch (storing a turn takes a database round trip): a batch
	// waits for them rather than flushing without a turn that came with it, which would
	// separate a tool's failure, its fix and its retry into batches that each see only
	// part of the story; and a batch that closed full waits, before it reads its windows,
	// for those earlier in the conversation than its own turns (see awaitEarlier).
	arriving map[sessionKey][]arrival
	// departed is closed, and dropped, whenever a turn of the session stops arriving.
	departed map[sessionKey]chan struct{}
}

// arrival is a turn being stored: its place in the conversation.
type arrival struct {
	at  time.Time
	seq uint64
}

// before reports whether a comes before q in conversation order.
func (a arrival) before(q queuedTurn) bool {
	return conversationOrder(queuedTurn{turn: memory.Turn{OccurredAt: a.at}, seq: a.seq}, q) < 0
}

// conversationOrder orders turns by when they were said, then by stream sequence.
func conversationOrder(a, b queuedTurn) int {
	if c := a.turn.OccurredAt.Compare(b.turn.OccurredAt); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// maxArrivalWait bounds how long a quiet batch waits for a turn of its session that is
// still being stored.
const maxArrivalWait = 2 * time.Second

type sessionKey struct{ tenant, user, session string }

// microBatch is one session's turns waiting to be processed together. Every handler
// whose turn is in it waits on done and returns err.
type microBatch struct {
	key    sessionKey
	turns  []queuedTurn
	timer  *time.Timer // the quiet window, or the wait for a turn still being stored; may be nil
	opened time.Time
	due    bool        // the quiet window has passed (always, without one); guarded by Pipeline.mu
	prev   *microBatch // the session's batch that must be done first; guarded by Pipeline.mu

	ctx    context.Context // cancelled once no handler waits any more
	cancel context.CancelFunc
	live   int  // handlers still waiting; guarded by Pipeline.mu
	closed bool // no longer accepting turns; guarded by Pipeline.mu

	done chan struct{}
	err  error // valid once done is closed
}

type queuedTurn struct {
	turn memory.Turn
	seq  uint64 // stream sequence: orders turns with the same occurred_at
}

// NewPipeline validates cfg and returns a pipeline.
func NewPipeline(cfg PipelineConfig) (*Pipeline, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("extractor pipeline: Store is required")
	case cfg.Publisher == nil:
		return nil, errors.New("extractor pipeline: Publisher is required")
	case cfg.Extractor == nil:
		return nil, errors.New("extractor pipeline: Extractor is required")
	case cfg.Redactor == nil:
		return nil, errors.New("extractor pipeline: Redactor is required")
	}
	if cfg.Gate == nil {
		cfg.Gate = NewGate()
	}
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = DefaultBatchMax
	}
	cfg.BatchQuiet = BatchWindow(cfg.BatchQuiet, cfg.Extractor)
	if cfg.WindowTurns <= 0 {
		cfg.WindowTurns = DefaultWindowTurns
	}
	if cfg.MaxTransactions <= 0 {
		cfg.MaxTransactions = DefaultMaxTransactions
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Pipeline{
		cfg:         cfg,
		log:         cfg.Logger.With("component", "extractor.pipeline", "extractor", cfg.Extractor.Name()),
		pending:     map[sessionKey]*microBatch{},
		running:     map[sessionKey]*microBatch{},
		arriving:    map[sessionKey][]arrival{},
		departed:    map[sessionKey]chan struct{}{},
		placeholder: placeholderPattern(),
		perTurn:     !callsModel(cfg.Extractor),
		txSlots:     make(chan struct{}, cfg.MaxTransactions),
	}, nil
}

// inTx is Store.InTx within MaxTransactions.
func (p *Pipeline) inTx(ctx context.Context, tenant string, fn func(*memory.Tx) error) error {
	select {
	case p.txSlots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for a database slot: %w", ctx.Err())
	}
	defer func() { <-p.txSlots }()
	return p.cfg.Store.InTx(ctx, tenant, fn)
}

// placeholderPattern matches any redact.Placeholder, derived from it to stay in step.
func placeholderPattern() *regexp.Regexp {
	sample := redact.Placeholder("k")
	i := strings.Index(sample, "k")
	return regexp.MustCompile(regexp.QuoteMeta(sample[:i]) + `[A-Za-z0-9_]+` + regexp.QuoteMeta(sample[i+1:]))
}

// Config returns the configuration with defaults applied.
func (p *Pipeline) Config() PipelineConfig { return p.cfg }

// Stats returns a snapshot of the counters.
func (p *Pipeline) Stats() Stats {
	s := Stats{
		TurnsReceived:       p.c.received.Load(),
		TurnsStored:         p.c.stored.Load(),
		TurnsRedelivered:    p.c.redelivered.Load(),
		TurnsSkipped:        p.c.skipped.Load(),
		Batches:             p.c.batches.Load(),
		Extractions:         p.c.extractions.Load(),
		CandidatesPublished: p.c.published.Load(),
		CandidatesDuplicate: p.c.duplicate.Load(),
		CandidatesDropped:   p.c.dropped.Load(),
		CandidatesInvalid:   p.c.invalid.Load(),
		TurnsEmbedded:       p.c.embedded.Load(),
		TurnEmbedFailures:   p.c.embedFailures.Load(),
	}
	if lc, ok := p.cfg.Extractor.(LLMCallCounter); ok {
		s.LLMCalls = lc.LLMCalls()
	}
	return s
}

// Handle is the streams.Handler for TURNS. It stores the turn (durably, before anything
// else), adds it to its session's micro-batch and blocks until that batch has been
// extracted and its candidates acknowledged by CANDIDATES; it returns the batch's result,
// so every turn of a batch is acked, retried or dead-lettered together.
//
// A redelivered turn that is already stored is extracted again: candidate ids are
// deterministic, so CANDIDATES (within its duplicate window) and the resolver's ledger
// (beyond it) drop the repeats. That is what makes a crash between storing and
// publishing lose nothing.
func (p *Pipeline) Handle(ctx context.Context, m *streams.Msg) error {
	ev, err := streams.DecodeTurnEvent(m.Data)
	if err == nil {
		// The subject is what NATS authorised, and what erasure deletes by: a body
		// naming another tenant or user than its subject is forged (and would outlive
		// that user's erasure). Compared with the subject the body is published on, so
		// the user token's escaping is the publisher's.
		if want, serr := ev.Subject(); serr != nil {
			err = fmt.Errorf("turn %s: %w", ev.Turn.TurnID, serr)
		} else if want != m.Subject {
			err = fmt.Errorf("turn %s names tenant %q and user %q (subject %s) but arrived on subject %s",
				ev.Turn.TurnID, ev.Tenant, ev.Turn.UserID, want, m.Subject)
		}
	}
	if err != nil {
		p.c.received.Add(1)
		return streams.Permanent(err)
	}
	turn := ev.Turn
	turn.Tenant = ev.Tenant
	streams.DefaultTurnTimes(&turn, m.Timestamp)
	// Ingest redacts every turn it publishes; a turn published straight onto NATS is
	// redacted here, before it is stored. A turn redacted already comes out unchanged,
	// so its content hash, and InsertTurn's idempotency, hold for redeliveries.
	if kinds := p.cfg.Redactor.Turn(&turn); len(kinds) > 0 {
		p.log.Info("redacted secrets from a turn published onto NATS", "tenant", turn.Tenant, "turn_id", turn.TurnID, "kinds", kinds)
		// Placeholders may be longer than what they replace.
		if fe := memory.CheckTurn("turn", turn); fe != nil {
			p.c.received.Add(1)
			return streams.Permanent(fmt.Errorf("turn %s once redacted: %w", turn.TurnID, fe))
		}
	}
	key := sessionKey{turn.Tenant, turn.UserID, turn.SessionID}
	arr := arrival{at: turn.OccurredAt, seq: m.StreamSeq}
	p.mu.Lock()
	p.arriving[key] = append(p.arriving[key], arr)
	// Counted once the turn is arriving: a caller that sees the count knows a batch of the
	// session will wait for this turn (its tests launch handlers in stream order so).
	p.c.received.Add(1)
	p.mu.Unlock()
	queued := false
	defer func() {
		if !queued { // enqueue counts the arrival off itself
			p.mu.Lock()
			p.arrivedLocked(key, arr)
			p.mu.Unlock()
		}
	}()
	var inserted bool
	err = p.inTx(ctx, ev.Tenant, func(tx *memory.Tx) error {
		var err error
		inserted, err = tx.InsertTurn(ctx, turn)
		return err
	})
	if err != nil {
		err = fmt.Errorf("storing turn %s of tenant %s: %w", turn.TurnID, ev.Tenant, err)
		if errors.Is(err, memory.ErrInvalid) {
			return streams.Permanent(err)
		}
		return err
	}
	if inserted {
		p.c.stored.Add(1)
	} else {
		p.c.redelivered.Add(1)
	}

	b, leave := p.enqueue(ctx, turn, m.StreamSeq)
	queued = true
	defer leave()
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the batch of session %s: %w", turn.SessionID, ctx.Err())
	}
}

// enqueue adds turn to its session's open batch (opening one if needed) and registers the
// caller as a waiter. leave must be called once the caller stops waiting.
func (p *Pipeline) enqueue(ctx context.Context, turn memory.Turn, seq uint64) (*microBatch, func()) {
	key := sessionKey{turn.Tenant, turn.UserID, turn.SessionID}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.departLocked(key, arrival{at: turn.OccurredAt, seq: seq}) // without arrivedLocked's re-check: it follows below
	b := p.pending[key]
	if b == nil {
		// The batch outlives any one handler's context; it is cancelled only when every
		// handler waiting for it has given up.
		bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		b = &microBatch{key: key, ctx: bctx, cancel: cancel, done: make(chan struct{}), opened: time.Now()}
		p.pending[key] = b
	}
	// A duplicate delivery of a turn already waiting here just waits along with it.
	if !slices.ContainsFunc(b.turns, func(q queuedTurn) bool { return q.turn.TurnID == turn.TurnID }) {
		b.turns = append(b.turns, queuedTurn{turn: turn, seq: seq})
	}
	b.live++
	stop := context.AfterFunc(ctx, func() { p.abandon(b) })
	if q := p.cfg.BatchQuiet; q > 0 && len(b.turns) < p.cfg.BatchMax {
		// Every new turn restarts the quiet window.
		b.due = false
		p.armLocked(b, q)
	} else {
		b.due = true
	}
	p.tryCloseLocked(b)
	// A waiter that leaves before its context's AfterFunc has run (it saw ctx.Done first)
	// counts itself off here: stopping the AfterFunc alone would leave the batch waited
	// for by nobody and processed anyway.
	return b, func() {
		if stop() {
			p.abandon(b)
		}
	}
}

// departLocked takes arr off key's arriving turns and wakes whoever waits on them.
// p.mu must be held.
func (p *Pipeline) departLocked(key sessionKey, arr arrival) {
	list := p.arriving[key]
	if i := slices.Index(list, arr); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(p.arriving, key)
	} else {
		p.arriving[key] = list
	}
	if ch := p.departed[key]; ch != nil {
		close(ch)
		delete(p.departed, key)
	}
}

// arrivedLocked takes arr off key's arriving turns and lets the session's open batch
// flush if it only waited for that turn. p.mu must be held.
func (p *Pipeline) arrivedLocked(key sessionKey, arr arrival) {
	p.departLocked(key, arr)
	if b := p.pending[key]; b != nil {
		p.tryCloseLocked(b)
	}
}

// armLocked (re)starts b's timer to re-check it after d. p.mu must be held.
func (p *Pipeline) armLocked(b *microBatch, d time.Duration) {
	if b.timer == nil {
		b.timer = time.AfterFunc(d, func() { p.timerFired(b) })
		return
	}
	b.timer.Reset(d)
}

// timerFired is the action of b's timer: the quiet window has passed, or the wait for a
// turn still being stored has run out.
func (p *Pipeline) timerFired(b *microBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.due = true
	p.tryCloseLocked(b)
}

// tryCloseLocked closes b and starts it when it may run: when it is full, or when its
// quiet window has passed, no turn of its session is still being stored (a batch waits
// for them rather than flushing without a turn that came with it, up to maxArrivalWait
// since it opened) and the session's previous batch is done (the turns arriving while it
// runs gather here: without a quiet window, that is what batches a busy session).
// p.mu must be held.
func (p *Pipeline) tryCloseLocked(b *microBatch) {
	if b.closed {
		return
	}
	if len(b.turns) < p.cfg.BatchMax {
		if !b.due {
			return // the quiet timer re-checks
		}
		if len(p.arriving[b.key]) > 0 {
			if wait := maxArrivalWait - time.Since(b.opened); wait > 0 {
				p.armLocked(b, wait) // the arrival re-checks sooner
				return
			}
		}
		if p.running[b.key] != nil {
			return // the running batch re-checks when it is done
		}
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	p.closeLocked(b)
	b.prev = p.running[b.key]
	p.running[b.key] = b
	go p.run(b)
}

// closeLocked stops b from accepting turns. p.mu must be held.
func (p *Pipeline) closeLocked(b *microBatch) {
	b.closed = true
	if p.pending[b.key] == b {
		delete(p.pending, b.key)
	}
}

// abandon runs when a waiter's context ends. When nobody waits any more, the batch's
// work is cancelled; an open batch is closed first so no new turn joins a dead batch.
func (p *Pipeline) abandon(b *microBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.live--
	if b.live > 0 {
		return
	}
	if !b.closed {
		if b.timer != nil {
			b.timer.Stop()
		}
		p.closeLocked(b)
		b.err = fmt.Errorf("batch of session %s abandoned: %w", b.key.session, context.Canceled)
		close(b.done)
	}
	b.cancel()
}

// run processes a closed batch, once the session's previous batch is done, and
// releases its waiters; then the session's next batch may start.
func (p *Pipeline) run(b *microBatch) {
	defer b.cancel()
	p.mu.Lock()
	turns := slices.Clone(b.turns)
	prev := b.prev
	p.mu.Unlock()
	if prev != nil {
		select {
		case <-prev.done:
		case <-b.ctx.Done(): // abandoned: process fails at once below
		}
	}
	p.awaitEarlier(b, turns)
	err := p.process(b.ctx, b.key, turns)
	if err != nil {
		p.log.Warn("batch failed", "tenant", b.key.tenant, "user", b.key.user, "session", b.key.session,
			"turns", len(turns), "permanent", streams.IsPermanent(err), "err", err)
	}
	b.err = err
	if prev != nil {
		<-prev.done // abandoned early: the session's next batch still waits for prev
	}
	close(b.done)
	p.mu.Lock()
	defer p.mu.Unlock()
	b.prev = nil
	if p.running[b.key] == b {
		delete(p.running, b.key)
	}
	if next := p.pending[b.key]; next != nil {
		p.tryCloseLocked(next)
	}
}

// awaitEarlier waits, up to maxArrivalWait since b opened, until no turn of b's session
// that comes before one of turns in the conversation is still being stored. A batch that
// closed full (or after waiting its longest) may be ahead of handlers that received
// earlier turns but took longer to store them; its windows would then miss those turns
// and its candidates would follow the machine's timing rather than the conversation.
func (p *Pipeline) awaitEarlier(b *microBatch, turns []queuedTurn) {
	if len(turns) == 0 {
		return
	}
	last := slices.MaxFunc(turns, conversationOrder)
	for {
		p.mu.Lock()
		earlier := slices.ContainsFunc(p.arriving[b.key], func(a arrival) bool { return a.before(last) })
		var ch chan struct{}
		if earlier {
			if ch = p.departed[b.key]; ch == nil {
				ch = make(chan struct{})
				p.departed[b.key] = ch
			}
		}
		p.mu.Unlock()
		wait := maxArrivalWait - time.Since(b.opened)
		if !earlier || wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return
		case <-b.ctx.Done():
			t.Stop()
			return
		}
	}
}

// process is one batch's work: window, gate, extraction, trust, redaction, ids, publish.
func (p *Pipeline) process(ctx context.Context, key sessionKey, queued []queuedTurn) error {
	p.c.batches.Add(1)
	// Handlers finish in any order; extraction wants conversation order.
	slices.SortStableFunc(queued, conversationOrder)
	p.embedTurns(ctx, key, queued)
	cands, err := p.candidates(ctx, key, queued)
	if err != nil || len(cands) == 0 {
		return err
	}
	return p.publish(ctx, key, cands)
}

// ExtractTurns is a micro-batch's work without the stream: turns (stored already, of
// one session, in conversation order, at most Config().BatchMax of them as the live
// batches hold) get their session window, the gate, the extractor, source trust,
// redaction and candidate ids, and the candidates come back instead of being
// published. A rebuild from the turn log uses it, so that it extracts exactly as the
// live pipeline does. Turn vectors are not written.
func (p *Pipeline) ExtractTurns(ctx context.Context, turns []memory.Turn) ([]memory.Candidate, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	t0 := turns[0]
	key := sessionKey{t0.Tenant, t0.UserID, t0.SessionID}
	queued := make([]queuedTurn, len(turns))
	for i, t := range turns {
		if t.Tenant != key.tenant || t.UserID != key.user || t.SessionID != key.session {
			return nil, fmt.Errorf("%w: turn %s is not of session %s/%s/%s", memory.ErrInvalid, t.TurnID, key.tenant, key.user, key.session)
		}
		queued[i] = queuedTurn{turn: t, seq: uint64(i)}
	}
	p.c.batches.Add(1)
	return p.candidates(ctx, key, queued)
}

// candidates runs window, gate, extraction, trust, redaction and ids over queued, in
// order: the batch as a whole when the extractor calls a model (one call for the batch),
// each turn on its own otherwise (candidatesPerTurn).
func (p *Pipeline) candidates(ctx context.Context, key sessionKey, queued []queuedTurn) ([]memory.Candidate, error) {
	if p.perTurn {
		return p.candidatesPerTurn(ctx, key, queued)
	}
	batch := p.newBatch(key, queued)
	ids := make([]string, len(queued))
	for i, q := range queued {
		ids[i] = q.turn.TurnID
	}
	err := p.inTx(ctx, key.tenant, func(tx *memory.Tx) error {
		var err error
		batch.Window, err = tx.SessionWindow(ctx, key.user, key.session, batch.New[0].OccurredAt, p.cfg.WindowTurns, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the window of session %s: %w", key.session, err)
	}
	return p.extract(ctx, key, batch)
}

// candidatesPerTurn extracts each turn of queued as a batch of its own whose window is
// the WindowTurns turns of the session before it (stored ones, which include the turns
// of queued before it). A turn's candidates then depend only on the turn and what came
// before it, never on which turns shared its micro-batch, which timing decides: a claim
// confirmed by the next turn is re-proposed, trusted, by that turn, as when the two come
// in separate requests. Windows are read in one transaction.
func (p *Pipeline) candidatesPerTurn(ctx context.Context, key sessionKey, queued []queuedTurn) ([]memory.Candidate, error) {
	ids := make([]string, len(queued))
	for i, q := range queued {
		ids[i] = q.turn.TurnID
	}
	windows := make([][]memory.Turn, len(queued))
	err := p.inTx(ctx, key.tenant, func(tx *memory.Tx) error {
		for i, q := range queued {
			// The turn itself and the batch's later turns are not before it, even at the
			// same instant.
			w, err := tx.SessionWindow(ctx, key.user, key.session, q.turn.OccurredAt, p.cfg.WindowTurns, ids[i:])
			if err != nil {
				return err
			}
			windows[i] = w
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the windows of session %s: %w", key.session, err)
	}
	var out []memory.Candidate
	for i := range queued {
		batch := p.newBatch(key, queued[i:i+1])
		batch.Window = windows[i]
		cands, err := p.extract(ctx, key, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, cands...)
	}
	return out, nil
}

// newBatch is the Batch of queued's turns, without a window.
func (p *Pipeline) newBatch(key sessionKey, queued []queuedTurn) Batch {
	batch := Batch{Tenant: key.tenant, UserID: key.user, SessionID: key.session}
	for _, q := range queued {
		batch.New = append(batch.New, q.turn)
		if batch.AgentID == "" {
			batch.AgentID = q.turn.AgentID
		}
	}
	return batch
}

// extract runs gate, extraction, trust, redaction and ids over a batch with its window.
func (p *Pipeline) extract(ctx context.Context, key sessionKey, batch Batch) ([]memory.Candidate, error) {
	batch = batch.bounded(MaxExtractBytes) // the work per turn is bounded; the stored turn is whole

	// The gate judges every turn in context; only passing turns reach the extractor, and
	// with none, no model is called at all.
	verdicts := p.cfg.Gate.CheckBatch(batch)
	gated := batch
	gated.New = nil
	for i, v := range verdicts {
		if v.Pass {
			gated.New = append(gated.New, batch.New[i])
		}
	}
	p.c.skipped.Add(int64(len(batch.New) - len(gated.New)))
	if len(gated.New) == 0 {
		return nil, nil
	}
	p.c.extractions.Add(1)
	cands, err := p.cfg.Extractor.Extract(ctx, gated)
	if err != nil {
		return nil, fmt.Errorf("extracting from %d turns of session %s with %s: %w",
			len(gated.New), key.session, p.cfg.Extractor.Name(), err)
	}
	// Trust looks at the whole conversation, skipped turns included: whether the user's
	// direct reply to a claim confirmed it depends on every turn in between.
	return p.finish(batch, ApplyTrust(batch, cands)), nil
}

// embedTurns stores a vector for each of the batch's turns that has content, in one
// embedding call and one transaction per batch. It is best effort (see
// PipelineConfig.TurnEmbedder): failures are logged and counted, not returned.
func (p *Pipeline) embedTurns(ctx context.Context, key sessionKey, queued []queuedTurn) {
	if p.cfg.TurnEmbedder == nil {
		return
	}
	var turns []memory.Turn
	var texts []string
	for _, q := range queued {
		if strings.TrimSpace(q.turn.Content) == "" {
			continue
		}
		turns = append(turns, q.turn)
		texts = append(texts, q.turn.Content)
	}
	if len(texts) == 0 {
		return
	}
	model := p.cfg.TurnEmbedder.Model()
	fail := func(err error) {
		p.c.embedFailures.Add(1)
		p.log.Warn("turn vectors not stored; the turns stay keyword-searchable", "tenant", key.tenant,
			"session", key.session, "turns", len(texts), "model", model, "err", err)
	}
	vecs, err := p.cfg.TurnEmbedder.Embed(ctx, texts)
	if err != nil {
		fail(fmt.Errorf("embedding %d turns: %w", len(texts), err))
		return
	}
	if len(vecs) != len(texts) {
		fail(fmt.Errorf("embedding %d turns returned %d vectors", len(texts), len(vecs)))
		return
	}
	err = p.inTx(ctx, key.tenant, func(tx *memory.Tx) error {
		for i, tr := range turns {
			if len(vecs[i]) == 0 {
				continue
			}
			if err := tx.PutTurnEmbedding(ctx, tr.TurnID, tr.UserID, memory.Embedding{Model: model, Vector: vecs[i]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fail(err)
		return
	}
	p.c.embedded.Add(int64(len(turns)))
}

// finish attaches ownership, drops secrets and malformed candidates, redacts content and
// assigns ids and creation time.
func (p *Pipeline) finish(b Batch, cands []memory.Candidate) []memory.Candidate {
	out := cands[:0]
	for _, c := range cands {
		// A candidate belongs to the batch's owner whatever the extractor said.
		c.Tenant, c.UserID, c.SessionID = b.Tenant, b.UserID, b.SessionID
		if c.AgentID == "" {
			c.AgentID = b.AgentID
		}
		if c.Scope == "" {
			c.Scope = memory.ScopeUser
		}
		c.Extractor = cmp.Or(c.Extractor, p.cfg.Extractor.Name())
		c.ExtractorVersion = cmp.Or(c.ExtractorVersion, p.cfg.Extractor.Version())
		c.Model = cmp.Or(c.Model, p.cfg.Extractor.Model())
		secret := p.isSecret(c.Content)
		c.Content, _ = p.cfg.Redactor.Redact(c.Content)
		// Clauses that held a secret say nothing once it is gone ("card number
		// [REDACTED]"); the clauses beside them may hold what is worth keeping ("the salary
		// card is with X bank"). A sentence built around a secret keeps it redacted, unless
		// it is essentially the secret.
		rest := ""
		if p.placeholder.MatchString(c.Content) {
			rest = p.withoutSecretClauses(c.Content)
		}
		if secret && (rest == "" || p.isSecret(rest)) {
			p.c.dropped.Add(1)
			p.log.Info("candidate dropped: essentially a secret", "tenant", b.Tenant, "session", b.SessionID,
				"source_turns", c.SourceTurnIDs)
			continue
		}
		if rest != "" {
			c.Content = rest
		}
		out = append(out, c)
	}
	out = boundPerTurn(out, MaxCandidatesPerTurn)
	assignGroupIDs(out)
	now := time.Now().UTC()
	valid := out[:0]
	for _, c := range out {
		c.CreatedAt = now
		clampTimes(&c)
		if err := (streams.CandidateEvent{V: streams.CandidateEventVersion, Candidate: c}).Validate(); err != nil {
			// Retrying cannot fix it, and one bad candidate must not hold back the others.
			p.c.invalid.Add(1)
			p.log.Error("candidate dropped: malformed", "tenant", b.Tenant, "session", b.SessionID, "err", err)
			continue
		}
		valid = append(valid, c)
	}
	return valid
}

// isSecret reports content that is essentially a secret. Turns are usually redacted at
// ingest, so content may hold placeholders rather than secrets; IsSecret only judges live
// secrets, so each placeholder is swapped for a stand-in it recognises.
func (p *Pipeline) isSecret(content string) bool {
	content = p.placeholder.ReplaceAllLiteralString(content, secretStandIn)
	return p.cfg.Redactor.IsSecret(content)
}

// withoutSecretClauses is redacted content without its clauses that hold a placeholder,
// or "" when too little is left to be a statement.
func (p *Pipeline) withoutSecretClauses(content string) string {
	var kept []string
	for _, cl := range secretClauseSplit.Split(content, -1) {
		if cl = strings.TrimSpace(cl); cl != "" && !p.placeholder.MatchString(cl) {
			kept = append(kept, cl)
		}
	}
	sep := ", "
	if hasHan(content) {
		sep = "，"
	}
	rest := strings.Join(kept, sep)
	if utf8.RuneCountInString(rest) < 6 {
		return ""
	}
	return rest
}

// secretClauseSplit cuts content into clauses: at commas, semicolons and dashes.
var secretClauseSplit = regexp.MustCompile(`\s*(?:[,;，；、]|\s[—–-]{1,2}\s|——)\s*`)

// secretStandIn is a private-key block the redactor always recognises; IsSecret counts a
// finding's weight up to a cap, so which stand-in is used barely matters.
const secretStandIn = "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-----END PRIVATE KEY-----"

// MaxCandidatesPerTurn bounds the memories one turn may propose. A person states a
// handful of facts in a message; a long pasted log or a repeated line would otherwise
// become hundreds of candidates, each a resolver transaction, and let one tenant's long
// turns hold the pipeline (and store noise nobody asked to remember).
const MaxCandidatesPerTurn = 16

// boundPerTurn drops a candidate that repeats an earlier one of the same source turns
// (same type, key and content) and keeps at most limit candidates per source turns:
// facts, preferences and procedures first, then episodes, each in the extractor's order.
func boundPerTurn(cands []memory.Candidate, limit int) []memory.Candidate {
	type seenKey struct{ turns, typ, key, content string }
	seen := map[seenKey]bool{}
	kept := map[string]int{}
	deduped := cands[:0]
	for _, c := range cands {
		k := seenKey{strings.Join(c.SourceTurnIDs, "\x00"), string(c.Type), c.Key, strings.ToLower(strings.TrimSpace(c.Content))}
		if seen[k] {
			continue
		}
		seen[k] = true
		deduped = append(deduped, c)
	}
	keep := make([]bool, len(deduped))
	for pass := range 2 {
		for i, c := range deduped {
			if (c.Type == memory.Episodic) != (pass == 1) {
				continue
			}
			turns := strings.Join(c.SourceTurnIDs, "\x00")
			if kept[turns] < limit {
				kept[turns]++
				keep[i] = true
			}
		}
	}
	out := deduped[:0]
	for i, c := range deduped {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// assignGroupIDs is AssignIDs with the index counted among candidates that share the same
// source turns, so that a turn's candidates get the same ids whichever other turns shared
// its batch (a redelivered turn often arrives alone).
func assignGroupIDs(cands []memory.Candidate) {
	groups := map[string][]int{}
	var order []string
	for i, c := range cands {
		k := strings.Join(c.SourceTurnIDs, "\x00")
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		group := make([]memory.Candidate, len(idx))
		for j, i := range idx {
			group[j] = cands[i]
		}
		AssignIDs(group)
		for j, i := range idx {
			cands[i].ID = group[j].ID
		}
	}
}

// publish sends the candidates and waits for every PubAck: only then may the turns be
// acked. Any failure retries the whole batch; the stream drops what it already has.
func (p *Pipeline) publish(ctx context.Context, key sessionKey, cands []memory.Candidate) error {
	evs := make([]streams.CandidateEvent, len(cands))
	for i, c := range cands {
		evs[i] = streams.CandidateEvent{V: streams.CandidateEventVersion, Candidate: c}
	}
	res, err := streams.PublishCandidates(ctx, p.cfg.Publisher, evs)
	for _, r := range res {
		if r.Err == nil {
			p.c.published.Add(1)
			if r.Duplicate {
				p.c.duplicate.Add(1)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("publishing %d candidates of session %s: %w", len(cands), key.session, err)
	}
	p.log.Debug("candidates published", "tenant", key.tenant, "session", key.session, "count", len(cands))
	return nil
}
