package streams

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// createConsumer creates or updates the worker's durable consumer, retrying while
// JetStream cannot answer yet (a cluster electing the stream's or the consumer's
// leader, a node restarting): the request times out or JetStream says it is
// unavailable. A refusal of the configuration itself (a 4xx API error) is returned.
func (w *Worker) createConsumer(ctx context.Context) (jetstream.Consumer, error) {
	wait := 250 * time.Millisecond
	for {
		cons, err := w.js.CreateOrUpdateConsumer(ctx, w.cfg.Stream, w.cfg.consumerConfig())
		if err == nil || ctx.Err() != nil {
			return cons, err
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.Code >= 400 && apiErr.Code < 500 {
			return nil, err
		}
		w.log.Warn("creating the consumer failed; retrying", "error", err, "wait", wait)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
