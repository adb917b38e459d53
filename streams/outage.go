package streams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for the outage hold (WorkerConfig.OutageBackoff and friends).
const (
	defaultOutageBackoff    = 500 * time.Millisecond
	defaultMaxOutageBackoff = 30 * time.Second
	defaultMaxMessageFaults = 3
	// crashLoopFactor × MaxDeliver deliveries without the runtime settling a message
	// (the process died on it each time) dead-letter it: the consumer itself has no
	// delivery limit, see consumerConfig.
	crashLoopFactor = 4
	// crashLoopMin is the least such number: parked messages handed back at shutdown
	// (see fairness.go) count a delivery each without having run.
	crashLoopMin = 100
)

// outageError marks a failure of a dependency rather than of the message.
type outageError struct{ err error }

func (e *outageError) Error() string { return "dependency unavailable: " + e.err.Error() }
func (e *outageError) Unwrap() error { return e.err }

// Outage wraps err to tell the runtime that a dependency (database, model endpoint, a
// stream) is unavailable: the message is held and retried in-process, without using up
// its deliveries, for as long as the outage lasts. Outage(nil) is nil.
func Outage(err error) error {
	if err == nil {
		return nil
	}
	return &outageError{err: err}
}

// IsOutage reports whether err says a dependency is unavailable rather than the message
// being at fault: errors marked with Outage, NATS/JetStream unavailability (timeouts, no
// responders, a closed or reconnecting connection), network failures (refused, reset,
// broken connections, dial errors, I/O timeouts) and deadlines. Permanent errors and
// cancellation are never outages. WorkerConfig.IsOutage adds what a handler's own
// dependencies report (the database driver's or the model client's classes).
func IsOutage(err error) bool {
	if err == nil || IsPermanent(err) || errors.Is(err, context.Canceled) {
		return false
	}
	var o *outageError
	if errors.As(err, &o) {
		return true
	}
	for _, target := range []error{
		nats.ErrTimeout, nats.ErrNoResponders, nats.ErrConnectionClosed, nats.ErrConnectionReconnecting,
		nats.ErrDisconnected, nats.ErrNoServers, jetstream.ErrNoStreamResponse, jetstream.ErrJetStreamNotEnabled,
		context.DeadlineExceeded, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNABORTED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.Code == 503 {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// isOutage is IsOutage plus the configured classifier.
func (w *Worker) isOutage(err error) bool {
	if err == nil || IsPermanent(err) || errors.Is(err, context.Canceled) {
		return false
	}
	return IsOutage(err) || (w.cfg.IsOutage != nil && w.cfg.IsOutage(err))
}

// hold keeps a message whose handler failed on a dependency outage and calls the handler
// again with capped exponential backoff until it succeeds, fails in another way, or the
// worker shuts down (ctx). It returns the error to settle the message with.
//
// Why hold rather than Nak with a delay: JetStream counts every redelivery, so an outage
// longer than the retry budget would dead-letter every message in flight. Held, a message
// keeps its delivery count: the progress reports (InProgress) keep it from timing out.
// While any message is held and nothing has succeeded since, the pull loop fetches only
// one message per probe interval (see fetchGate), so consumption pauses.
//
// A message that keeps failing while other messages succeed is not suffering an outage:
// after MaxMessageFaults such failures it is dead-lettered (a reply that stays invalid for
// this message only, a query that always times out on this content).
func (w *Worker) hold(ctx, hctx context.Context, log *slog.Logger, m *Msg, err error) error {
	w.outageBegin()
	defer w.outageEnd()
	faults := 0
	for attempt := 0; ; attempt++ {
		w.c.held.Add(1)
		acked := w.c.acked.Load()
		delay := w.outageDelay(attempt)
		if d, ok := retryDelay(err); ok { // a server's Retry-After
			delay = max(delay, d)
		}
		log.Warn("dependency unavailable; holding the message", "err", err, "attempt", attempt+1, "delay", delay)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return fmt.Errorf("shutting down while holding the message: %w", err)
		}
		err = w.invoke(hctx, log, m)
		if err == nil {
			w.noteSuccess()
			return nil
		}
		if !w.isOutage(err) {
			return err
		}
		w.noteOutageFailure()
		if w.c.acked.Load() > acked {
			if faults++; faults >= w.cfg.MaxMessageFaults {
				return Permanent(fmt.Errorf("failed %d times while other messages succeeded: %w", faults, err))
			}
		}
	}
}

// outageDelay is the hold's wait before retry attempt+1.
func (w *Worker) outageDelay(attempt int) time.Duration {
	d := w.cfg.OutageBackoff
	for i := 0; i < attempt && d < w.cfg.MaxOutageBackoff; i++ {
		d *= 2
	}
	return min(d, w.cfg.MaxOutageBackoff)
}

func (w *Worker) outageBegin() {
	w.mu.Lock()
	w.holding++
	w.lastOutageFail = time.Now()
	w.mu.Unlock()
	w.signal()
}

func (w *Worker) outageEnd() {
	w.mu.Lock()
	w.holding--
	w.mu.Unlock()
}

func (w *Worker) noteOutageFailure() {
	w.mu.Lock()
	w.lastOutageFail = time.Now()
	w.mu.Unlock()
	w.signal()
}

func (w *Worker) noteSuccess() {
	w.mu.Lock()
	w.lastSuccess = time.Now()
	w.probes = 0
	w.mu.Unlock()
}

// fetchGate reports how many messages the pull loop may fetch now (0 < n ≤ want) and,
// during an outage, how long to wait first: while messages are held and the latest event
// is a dependency failure, one message per probe interval (growing like the hold's
// backoff), so a dependency that is down is not hammered with the whole backlog, and one
// that is back (a success) reopens the flow at once.
func (w *Worker) fetchGate(want int) (int, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flowingLocked() {
		return want, 0
	}
	d := w.outageDelay(w.probes)
	w.probes++
	return 1, d
}

// flowingLocked reports whether no outage pauses consumption: no message is held, or
// one succeeded after the latest dependency failure. w.mu must be held.
func (w *Worker) flowingLocked() bool {
	return w.holding == 0 || w.lastSuccess.After(w.lastOutageFail)
}
