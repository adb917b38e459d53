package streams

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Scheduling between tenants (WorkerConfig.TenantInFlight).
//
// A worker with a tenant cap fetches past what it can run and PARKS the surplus: each
// parked message is a light handle (stream sequence, subject, reply subject, metadata)
// in a per-tenant FIFO, kept alive with progress reports ("+WPI" on its reply subject)
// like a running one. When a handler frees, the tenant with the fewest running handlers
// among those below their cap runs its oldest parked message, read back from the stream
// by its sequence: a parked message keeps no payload, so a flood of large turns does not
// sit in memory, and one erased from the stream while parked is not run. So another tenant's turn behind a flood is
// fetched within a few pull requests and runs at the next free handler.
//
// Why not hand the surplus back with NakWithDelay (the first design): a nak'd message
// stays in the consumer's pending set, and JetStream serves due redeliveries before new
// messages, so a flood larger than the worker can re-defer within the delay keeps
// coming back ahead of everything published after it. Why not one consumer per tenant:
// it needs a discovery consumer, consumers created and deleted as tenants come and go,
// and a cap split across them; one consumer with an in-process scheduler needs none.
//
// A worker parks up to MaxAckPending messages; with several replicas one may so take a
// backlog the others would have shared, which only costs throughput, never a message.
//
// Nothing parked is acked, so a crash loses nothing (it is redelivered after AckWait);
// shutdown naks the parked messages for immediate redelivery. A park is not a delivery:
// the message's NumDelivered stays what JetStream counted when it was fetched.
//
// minFetchBatch is the least a capped worker asks for in one pull request.
const minFetchBatch = 64

// JetStream acknowledgement protocol bodies, for messages acked through their reply
// subject (parked ones, see loadedMsg).
var (
	ackBodyAck      = []byte("+ACK")
	ackBodyNak      = []byte("-NAK")
	ackBodyProgress = []byte("+WPI")
	ackBodyTerm     = []byte("+TERM")
)

// parked is a fetched message waiting for a handler of its tenant.
type parked struct {
	seq     uint64
	tenant  string
	reply   string
	meta    *jetstream.MsgMetadata
	jm      jetstream.Msg // the delivery with its payload while admit decides; then nil
	waiting bool          // still in its tenant's queue
}

// tenantWork is one tenant's share of the worker (under Worker.mu).
type tenantWork struct {
	queue   []*parked // parked, oldest first
	running int
}

// capacity is how many messages the worker holds un-acked: running and parked.
// Without a tenant cap it parks nothing beyond a fetch in progress.
func (c WorkerConfig) capacity() int {
	if c.TenantInFlight <= 0 {
		return c.Concurrency
	}
	return max(c.MaxAckPending, c.Concurrency)
}

// fetchBatch is the most one pull request asks for.
func (c WorkerConfig) fetchBatch() int {
	if c.TenantInFlight <= 0 {
		return c.Concurrency
	}
	return max(c.Concurrency, minFetchBatch)
}

// limitLocked is how many handlers a tenant may run: TenantInFlight, or, for a tenant
// alone in the worker, all but an eighth of the handlers, so a tenant alone is not
// slowed and the eighth kept free takes another tenant's first message at once (which
// brings the cap back). w.mu must be held.
func (w *Worker) limitLocked() int {
	c := w.cfg
	if c.TenantInFlight <= 0 {
		return c.Concurrency
	}
	if len(w.tenants) <= 1 {
		return max(c.TenantInFlight, c.Concurrency-max(c.Concurrency/8, 1))
	}
	return c.TenantInFlight
}

// waitRoom waits until the worker may hold more messages, or, during an outage, a
// parked message could be the next probe (see pull), and returns how many messages to
// ask for (0: only the probe); false when ctx ends first.
func (w *Worker) waitRoom(ctx context.Context) (int, bool) {
	for {
		w.mu.Lock()
		room := w.cfg.capacity() - w.busy - len(w.parked)
		probe := !w.flowingLocked() && len(w.parked) > 0 && w.busy < w.cfg.Concurrency
		w.mu.Unlock()
		if room > 0 || probe {
			return max(min(room, w.cfg.fetchBatch()), 0), true
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// signal wakes the pull loop: a handler finished, or an outage began.
func (w *Worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// admit queues a fetched message behind its tenant's and starts what may run, at most
// allow handlers (negative: no limit). It returns how many it started.
func (w *Worker) admit(jm jetstream.Msg, allow int) int {
	meta, err := jm.Metadata()
	if err != nil {
		// Not a JetStream delivery; nothing sensible to do but let it time out.
		w.log.Error("message without metadata", "subject", jm.Subject(), "err", err)
		w.c.ackErrors.Add(1)
		return 0
	}
	tenant, _ := tenantFromSubject(jm.Subject())
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.parked[meta.Sequence.Stream]; ok {
		// Redelivered while parked (a progress report came too late): the newer delivery
		// is the one JetStream waits for.
		p.reply, p.meta = jm.Reply(), meta
		return 0
	}
	p := &parked{seq: meta.Sequence.Stream, tenant: tenant, reply: jm.Reply(), meta: meta, jm: jm, waiting: true}
	tw := w.tenants[tenant]
	if tw == nil {
		tw = &tenantWork{}
		w.tenants[tenant] = tw
	}
	tw.queue = append(tw.queue, p)
	w.parked[p.seq] = p
	started := w.dispatchLocked(allow)
	if p.waiting {
		w.c.parked.Add(1)
		p.jm = nil // only the handle stays
	}
	return started
}

// dispatch starts parked messages on free handlers, at most allow (negative: no limit).
func (w *Worker) dispatch(allow int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dispatchLocked(allow)
}

// dispatchLocked starts parked messages while handlers are free: each time the oldest
// parked message of the tenant with the fewest running handlers among those below the
// limit. During an outage (see fetchGate) it starts none unless allowed explicitly (the
// pull loop's probe). w.mu must be held.
func (w *Worker) dispatchLocked(allow int) int {
	if w.run.ctx == nil || w.run.ctx.Err() != nil {
		return 0
	}
	if allow < 0 && !w.flowingLocked() {
		allow = 0
	}
	started := 0
	for w.busy < w.cfg.Concurrency && (allow < 0 || started < allow) {
		limit := w.limitLocked()
		var best *tenantWork
		for _, tw := range w.tenants {
			if len(tw.queue) == 0 || tw.running >= limit {
				continue
			}
			if best == nil || tw.running < best.running ||
				(tw.running == best.running && tw.queue[0].seq < best.queue[0].seq) {
				best = tw
			}
		}
		if best == nil {
			break
		}
		p := best.queue[0]
		best.queue[0] = nil
		best.queue = best.queue[1:]
		p.waiting = false
		delete(w.parked, p.seq)
		best.running++
		w.busy++
		started++
		w.run.wg.Add(1)
		go w.runParked(p)
	}
	return started
}

// runParked runs a message, read back from the stream if it was parked, and passes its
// handler on.
func (w *Worker) runParked(p *parked) {
	defer w.run.wg.Done()
	defer w.finish(p.tenant)
	jm := p.jm
	if jm == nil {
		lm := &loadedMsg{nc: w.js.Conn(), reply: p.reply, meta: p.meta}
		w.track(lm) // progress reports while loading
		ok := w.load(lm, p.seq)
		w.untrack(lm)
		if !ok {
			return
		}
		jm = lm
	}
	w.track(jm)
	w.process(w.run.ctx, w.run.hctx, jm)
	w.untrack(jm)
}

// finish gives a handler of tenant back and starts what may run next.
func (w *Worker) finish(tenant string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy--
	if tw := w.tenants[tenant]; tw != nil {
		if tw.running--; tw.running <= 0 && len(tw.queue) == 0 {
			delete(w.tenants, tenant)
		}
	}
	w.dispatchLocked(-1)
	w.signal()
}

// load reads a parked message's payload back from the stream by its sequence. A
// message no longer in the stream (erased with its user, or past the stream's age
// limit) has nothing left to do and is acked; a failing read is retried with the
// outage backoff until it works or the worker stops (then the message is nak'd).
func (w *Worker) load(lm *loadedMsg, seq uint64) bool {
	for attempt := 0; ; attempt++ {
		raw, err := w.getMsg(seq)
		if err == nil {
			lm.raw = raw
			return true
		}
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			w.log.Info("a parked message left the stream before it ran; acking it", "seq", seq)
			if err := lm.Ack(); err != nil {
				w.c.ackErrors.Add(1)
			}
			return false
		}
		delay := w.outageDelay(attempt)
		w.log.Warn("loading a parked message failed; retrying", "seq", seq, "err", err, "delay", delay)
		select {
		case <-time.After(delay):
		case <-w.run.ctx.Done():
			if err := lm.Nak(); err != nil {
				w.c.ackErrors.Add(1)
			}
			return false
		}
	}
}

func (w *Worker) getMsg(seq uint64) (*jetstream.RawStreamMsg, error) {
	ctx, cancel := context.WithTimeout(w.run.hctx, ackTimeout)
	defer cancel()
	s := w.stream.Load()
	if s == nil {
		st, err := w.js.Stream(ctx, w.cfg.Stream)
		if err != nil {
			return nil, fmt.Errorf("looking up stream %s: %w", w.cfg.Stream, err)
		}
		w.stream.CompareAndSwap(nil, &st)
		s = &st
	}
	raw, err := (*s).GetMsg(ctx, seq)
	if err != nil {
		return nil, fmt.Errorf("reading message %d of %s: %w", seq, w.cfg.Stream, err)
	}
	return raw, nil
}

// parkedReplies snapshots the reply subjects of the parked messages.
func (w *Worker) parkedReplies(into []string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.parked {
		into = append(into, p.reply)
	}
	return into
}

// requeueParked hands the parked messages back to JetStream at shutdown for immediate
// redelivery (to another replica, or this worker when it is back).
func (w *Worker) requeueParked() {
	w.mu.Lock()
	replies := make([]string, 0, len(w.parked))
	for _, p := range w.parked {
		replies = append(replies, p.reply)
	}
	clear(w.parked)
	for t, tw := range w.tenants {
		if tw.queue = nil; tw.running == 0 {
			delete(w.tenants, t)
		}
	}
	w.mu.Unlock()
	nc := w.js.Conn()
	for _, r := range replies {
		if err := nc.Publish(r, ackBodyNak); err != nil {
			w.c.ackErrors.Add(1)
		}
	}
	if len(replies) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
		defer cancel()
		if err := nc.FlushWithContext(ctx); err != nil {
			w.log.Warn("handing parked messages back: flush failed; they are redelivered after the ack wait", "err", err)
		}
	}
}

// loadedMsg is a parked message read back from the stream: acked through the reply
// subject of its delivery, with the JetStream acknowledgement protocol.
type loadedMsg struct {
	nc    *nats.Conn
	reply string
	meta  *jetstream.MsgMetadata
	raw   *jetstream.RawStreamMsg
	done  atomic.Bool
}

var _ jetstream.Msg = (*loadedMsg)(nil)

func (m *loadedMsg) Metadata() (*jetstream.MsgMetadata, error) { return m.meta, nil }
func (m *loadedMsg) Data() []byte                              { return m.raw.Data }
func (m *loadedMsg) Headers() nats.Header                      { return m.raw.Header }
func (m *loadedMsg) Subject() string                           { return m.raw.Subject }
func (m *loadedMsg) Reply() string                             { return m.reply }
func (m *loadedMsg) Ack() error                                { return m.settle(ackBodyAck) }
func (m *loadedMsg) Nak() error                                { return m.settle(ackBodyNak) }
func (m *loadedMsg) Term() error                               { return m.settle(ackBodyTerm) }

func (m *loadedMsg) NakWithDelay(d time.Duration) error {
	return m.settle(fmt.Appendf(nil, "%s {\"delay\": %d}", ackBodyNak, d.Nanoseconds()))
}

func (m *loadedMsg) TermWithReason(reason string) error {
	return m.settle(fmt.Appendf(nil, "%s %s", ackBodyTerm, reason))
}

func (m *loadedMsg) InProgress() error {
	if m.done.Load() {
		return jetstream.ErrMsgAlreadyAckd
	}
	return m.nc.Publish(m.reply, ackBodyProgress)
}

// DoubleAck acks and waits for the server's confirmation.
func (m *loadedMsg) DoubleAck(ctx context.Context) error {
	if m.done.Load() {
		return jetstream.ErrMsgAlreadyAckd
	}
	if _, err := m.nc.RequestWithContext(ctx, m.reply, ackBodyAck); err != nil {
		return fmt.Errorf("acking message %d: %w", m.meta.Sequence.Stream, err)
	}
	m.done.Store(true)
	return nil
}

func (m *loadedMsg) settle(body []byte) error {
	if m.done.Swap(true) {
		return jetstream.ErrMsgAlreadyAckd
	}
	return m.nc.Publish(m.reply, body)
}
