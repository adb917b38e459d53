package metrics

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/streams"
)

var (
	workerMessagesDesc = prometheus.NewDesc("engram_worker_messages_total",
		"Messages handled by a worker runtime, by stage (extract, resolve) and result (delivered, acked, nacked, dead_lettered, poison, panic, ack_error).",
		[]string{"stage", "result"}, nil)
	extractorTurnsDesc = prometheus.NewDesc("engram_extractor_turns_total",
		"Turns the extractor handled, by result: stored (new), redelivered (already stored), gated_out (kept from the extractor by the gate).",
		[]string{"result"}, nil)
	extractorBatchesDesc = prometheus.NewDesc("engram_extractor_batches_total",
		"Micro-batches the extractor processed, by result: processed, extracted (handed to the extractor).",
		[]string{"result"}, nil)
	extractorCandidatesDesc = prometheus.NewDesc("engram_extractor_candidates_total",
		"Candidates by result: published, duplicate (of published, already in CANDIDATES), dropped_secret, invalid.",
		[]string{"result"}, nil)
	extractorTurnEmbedDesc = prometheus.NewDesc("engram_extractor_turn_embeddings_total",
		"Turn vectors written (result stored) and batches whose vectors failed (result failed).",
		[]string{"result"}, nil)
)

// statsCollector turns the components' Stats() snapshots into counters at scrape time.
type statsCollector struct{ m *Metrics }

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{workerMessagesDesc, extractorTurnsDesc, extractorBatchesDesc,
		extractorCandidatesDesc, extractorTurnEmbedDesc} {
		ch <- d
	}
}

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	workers := make(map[string]func() streams.Stats, len(c.m.workers))
	for k, v := range c.m.workers {
		workers[k] = v
	}
	extract := c.m.extract
	c.m.mu.Unlock()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for stage, stats := range workers {
		s := stats()
		counter(workerMessagesDesc, s.Delivered, stage, "delivered")
		counter(workerMessagesDesc, s.Acked, stage, "acked")
		counter(workerMessagesDesc, s.Nacked, stage, "nacked")
		counter(workerMessagesDesc, s.DeadLettered, stage, "dead_lettered")
		counter(workerMessagesDesc, s.Poison, stage, "poison")
		counter(workerMessagesDesc, s.Panics, stage, "panic")
		counter(workerMessagesDesc, s.AckErrors, stage, "ack_error")
	}
	if extract != nil {
		s := extract()
		counter(extractorTurnsDesc, s.TurnsStored, "stored")
		counter(extractorTurnsDesc, s.TurnsRedelivered, "redelivered")
		counter(extractorTurnsDesc, s.TurnsSkipped, "gated_out")
		counter(extractorBatchesDesc, s.Batches, "processed")
		counter(extractorBatchesDesc, s.Extractions, "extracted")
		counter(extractorCandidatesDesc, s.CandidatesPublished, "published")
		counter(extractorCandidatesDesc, s.CandidatesDuplicate, "duplicate")
		counter(extractorCandidatesDesc, s.CandidatesDropped, "dropped_secret")
		counter(extractorCandidatesDesc, s.CandidatesInvalid, "invalid")
		counter(extractorTurnEmbedDesc, s.TurnsEmbedded, "stored")
		counter(extractorTurnEmbedDesc, s.TurnEmbedFailures, "failed")
	}
}

var (
	consumerPendingDesc = prometheus.NewDesc("engram_jetstream_consumer_pending_messages",
		"Messages not yet delivered to a durable consumer (its lag).", []string{"stream", "consumer"}, nil)
	consumerAckPendingDesc = prometheus.NewDesc("engram_jetstream_consumer_ack_pending_messages",
		"Messages delivered to a durable consumer and not yet acknowledged.", []string{"stream", "consumer"}, nil)
	consumerRedeliveredDesc = prometheus.NewDesc("engram_jetstream_consumer_redelivered_messages",
		"Messages of a durable consumer being redelivered.", []string{"stream", "consumer"}, nil)
	streamMessagesDesc = prometheus.NewDesc("engram_jetstream_stream_messages",
		"Messages stored in a stream.", []string{"stream"}, nil)
	dlqDepthDesc = prometheus.NewDesc("engram_dlq_messages",
		"Dead letters waiting in the DLQ stream, by stage.", []string{"stage"}, nil)
	jsUpDesc = prometheus.NewDesc("engram_jetstream_up",
		"1 when the last scrape could read JetStream stream and consumer info, else 0.", nil, nil)
)

// dlqStages are the worker stages that dead-letter (extractor.ExtractorStage and the
// resolver's "resolve").
var dlqStages = []string{extractor.ExtractorStage, "resolve"}

// jsCollector reads consumer lag and DLQ depth from JetStream at scrape time.
type jsCollector struct {
	js      jetstream.JetStream
	log     *slog.Logger
	timeout time.Duration
}

func (c *jsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{consumerPendingDesc, consumerAckPendingDesc, consumerRedeliveredDesc,
		streamMessagesDesc, dlqDepthDesc, jsUpDesc} {
		ch <- d
	}
}

func (c *jsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	up := 1.0
	for _, s := range []struct{ stream, consumer string }{
		{streams.TurnsStream, streams.ExtractorConsumer},
		{streams.CandidatesStream, streams.ResolverConsumer},
	} {
		cons, err := c.js.Consumer(ctx, s.stream, s.consumer)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue // no worker has created it yet
		}
		var info *jetstream.ConsumerInfo
		if err == nil {
			info, err = cons.Info(ctx)
		}
		if err != nil {
			c.log.Debug("reading consumer info for metrics", "stream", s.stream, "consumer", s.consumer, "error", err)
			up = 0
			continue
		}
		gauge(consumerPendingDesc, float64(info.NumPending), s.stream, s.consumer)
		gauge(consumerAckPendingDesc, float64(info.NumAckPending), s.stream, s.consumer)
		gauge(consumerRedeliveredDesc, float64(info.NumRedelivered), s.stream, s.consumer)
	}
	for _, name := range []string{streams.TurnsStream, streams.CandidatesStream, streams.DLQStream} {
		st, err := c.js.Stream(ctx, name)
		var info *jetstream.StreamInfo
		if err == nil {
			info, err = st.Info(ctx)
		}
		if err != nil {
			c.log.Debug("reading stream info for metrics", "stream", name, "error", err)
			up = 0
			continue
		}
		gauge(streamMessagesDesc, float64(info.State.Msgs), name)
		if name != streams.DLQStream {
			continue
		}
		dlq := streams.NewDLQ(c.js)
		for _, stage := range dlqStages {
			n, err := dlq.Depth(ctx, stage)
			if err != nil {
				up = 0
				continue
			}
			gauge(dlqDepthDesc, float64(n), stage)
		}
	}
	gauge(jsUpDesc, up)
}
