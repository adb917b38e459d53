package streams

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Tuning of the per-tenant in-flight cap (WorkerConfig.TenantInFlight).
const (
	deferMinDelay = 50 * time.Millisecond
	deferMaxDelay = 10 * time.Second
	// queuePerSlot × TenantInFlight messages of a tenant at its cap wait in the worker
	// before further ones are deferred.
	queuePerSlot     = 4
	deferralsMaxKept = 1 << 17 // bound on remembered deferral counts
)

// Where place puts a fetched message.
const (
	placeRun      = iota // start a handler now
	placeQueued          // wait in the worker for one of its tenant's handlers
	placeDeferred        // hand back to JetStream for later (deferMsg)
)

// place decides what happens to a fetched message. Without TenantInFlight every message
// runs. Otherwise a tenant below its cap runs it (and counts it); a tenant at its cap
// keeps up to 4×TenantInFlight more waiting in the worker, to run as soon as one of its
// handlers finishes, so a tenant alone keeps its share busy without waiting for deferred
// messages to come back (queued messages are tracked: progress reports keep them
// alive); beyond that the message is deferred. Deciding and queueing under one lock
// with nextOrRelease means no message waits for a handler that has already left.
//
// The cap yields when it protects nobody: a message with nothing new behind it in the
// stream, while no other tenant has work in the worker, runs beyond it up to all but
// an eighth of the handlers, so a tenant alone is not slowed; the eighth kept free
// takes the next other tenant's message at once, which brings the cap back.
func (w *Worker) place(jm jetstream.Msg, tenant string) int {
	if w.cfg.TenantInFlight <= 0 {
		return placeRun
	}
	last := false
	if meta, err := jm.Metadata(); err == nil {
		last = meta.NumPending == 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.tenantInFlight[tenant] < w.cfg.TenantInFlight,
		last && w.tenantInFlight[tenant] < w.cfg.Concurrency-max(w.cfg.Concurrency/8, 1) && w.aloneLocked(tenant):
		w.tenantInFlight[tenant]++
		return placeRun
	case len(w.waiting[tenant]) < queuePerSlot*w.cfg.TenantInFlight:
		w.waiting[tenant] = append(w.waiting[tenant], jm)
		w.inflight[jm] = struct{}{} // tracked for progress reports
		return placeQueued
	}
	return placeDeferred
}

// nextOrRelease is what a tenant's handler does when its message is settled: take the
// tenant's next waiting message (nil when none, or when the worker is stopping), or
// give the tenant's place up.
func (w *Worker) nextOrRelease(ctx context.Context, tenant string) jetstream.Msg {
	if w.cfg.TenantInFlight <= 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if q := w.waiting[tenant]; len(q) > 0 && ctx.Err() == nil {
		jm := q[0]
		if q = q[1:]; len(q) == 0 {
			delete(w.waiting, tenant)
		} else {
			w.waiting[tenant] = q
		}
		return jm
	}
	if w.tenantInFlight[tenant]--; w.tenantInFlight[tenant] <= 0 {
		delete(w.tenantInFlight, tenant)
	}
	return nil
}

// deferMsg hands a message of a tenant at its in-flight cap back to JetStream for later
// without running the handler, so the pull loop can reach the other tenants' messages
// behind a flood. The delay grows with how much of that tenant is waiting (its deferred
// messages per handler, times the average handler time), so a flood is not re-fetched
// in a tight loop. The deferral is remembered and does not count as a failed delivery (see deliveries).
func (w *Worker) deferMsg(jm jetstream.Msg, tenant string) {
	seq := uint64(0)
	if meta, err := jm.Metadata(); err == nil {
		seq = meta.Sequence.Stream
	}
	w.mu.Lock()
	if len(w.deferrals) >= deferralsMaxKept {
		clear(w.deferrals)
	}
	if _, again := w.deferrals[seq]; !again {
		w.tenantDeferred[tenant]++
	}
	w.deferrals[seq]++
	waiting := w.tenantDeferred[tenant]
	w.mu.Unlock()
	avg := time.Duration(w.avgHandle.Load())
	// Per handler of the whole worker, not of the tenant's share: once the look-ahead
	// has found no other tenant the cap yields (see place) and all handlers take it.
	delay := min(max(avg*time.Duration(1+waiting/w.cfg.Concurrency), deferMinDelay), deferMaxDelay)
	w.c.deferred.Add(1)
	if err := jm.NakWithDelay(delay); err != nil {
		w.c.ackErrors.Add(1)
		w.log.Debug("deferring a message failed; it is redelivered after the ack wait", "err", err)
	}
}

// deliveries is how many times a message reached a handler: JetStream's count less the
// deferrals this worker made of it.
func (w *Worker) deliveries(seq, numDelivered uint64) uint64 {
	w.mu.Lock()
	d := w.deferrals[seq]
	w.mu.Unlock()
	if d >= numDelivered {
		return 1
	}
	return numDelivered - d
}

// forgetDeferrals drops a settled message's deferral count.
func (w *Worker) forgetDeferrals(seq uint64, tenant string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.deferrals[seq]; !ok {
		return
	}
	delete(w.deferrals, seq)
	if w.tenantDeferred[tenant]--; w.tenantDeferred[tenant] <= 0 {
		delete(w.tenantDeferred, tenant)
	}
}

// noteHandleTime folds one handler run into the moving average deferMsg uses.
func (w *Worker) noteHandleTime(d time.Duration) {
	for {
		old := w.avgHandle.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)/8
		}
		if w.avgHandle.CompareAndSwap(old, next) {
			return
		}
	}
}

// requeueWaiting hands the messages still waiting at shutdown back to JetStream for
// immediate redelivery (to another replica, or this worker when it is back).
func (w *Worker) requeueWaiting() {
	w.mu.Lock()
	var msgs []jetstream.Msg
	for t, q := range w.waiting {
		msgs = append(msgs, q...)
		delete(w.waiting, t)
	}
	w.mu.Unlock()
	for _, jm := range msgs {
		w.untrack(jm)
		if err := jm.Nak(); err != nil {
			w.c.ackErrors.Add(1)
		}
	}
}

// aloneLocked reports whether no tenant but tenant has messages running, waiting or
// deferred in the worker. w.mu must be held.
func (w *Worker) aloneLocked(tenant string) bool {
	for _, m := range []map[string]int{w.tenantInFlight, w.tenantDeferred} {
		for t := range m {
			if t != tenant {
				return false
			}
		}
	}
	for t := range w.waiting {
		if t != tenant {
			return false
		}
	}
	return true
}
