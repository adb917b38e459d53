package streams

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Tuning of the per-tenant in-flight cap (WorkerConfig.TenantInFlight).
const (
	deferMinDelay    = 50 * time.Millisecond
	deferMaxDelay    = 30 * time.Second
	deferralsMaxKept = 1 << 17 // bound on remembered deferral counts
)

// admit reports whether a fetched message may start a handler now, counting it in its
// tenant's in-flight number if so. Without TenantInFlight every message is admitted.
func (w *Worker) admit(tenant string) bool {
	if w.cfg.TenantInFlight <= 0 {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tenantInFlight[tenant] >= w.cfg.TenantInFlight {
		return false
	}
	w.tenantInFlight[tenant]++
	return true
}

// release undoes admit once the message is settled.
func (w *Worker) release(tenant string) {
	if w.cfg.TenantInFlight <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tenantInFlight[tenant]--; w.tenantInFlight[tenant] <= 0 {
		delete(w.tenantInFlight, tenant)
	}
}

// deferMsg hands a message of a tenant at its in-flight cap back to JetStream for later
// without running the handler, so the pull loop can reach the other tenants' messages
// behind a flood. The delay grows with how much of that tenant is waiting (its deferred
// messages per allowed handler, times the average handler time: about when a slot of
// the tenant frees up for it), so a flood is not re-fetched in a tight loop. The
// deferral is remembered and does not count as a failed delivery (see deliveries).
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
	delay := min(max(avg*time.Duration(1+waiting/max(w.cfg.TenantInFlight, 1)), deferMinDelay), deferMaxDelay)
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
