// Package metrics exposes engram's Prometheus metrics at /metrics. Most families are
// read at scrape time from the Stats() snapshots the components already keep (worker
// runtime, extractor pipeline) and from JetStream consumer and stream info; the rest
// are observed where they happen (model calls, resolver decisions, the HTTP edge) or
// refreshed by a paced periodic census (memories by status and type per tenant: the
// largest tenants each, the others summed).
//
// Conventions: names carry their unit (_seconds, _total, _messages); labels are
// bounded sets (route patterns, stages, models, decision kinds, the largest tenants), never a
// user, session, memory or turn id, and never content.
package metrics

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Latency buckets: HTTP and retrieval work is milliseconds, model calls are seconds.
var (
	fastBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	slowBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 60, 120}
)

// Metrics is one process's registry and the families engram records into it.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	turns          *prometheus.CounterVec
	retrievalDur   *prometheus.HistogramVec
	retrievalCount *prometheus.HistogramVec
	modelCalls     map[string]modelFamilies // "llm", "embedding"
	decisions      *prometheus.CounterVec
	resolveDur     *prometheus.HistogramVec
	resolveErrors  prometheus.Counter
	depChecks      *prometheus.CounterVec

	memories      *prometheus.GaugeVec
	embedded      *prometheus.GaugeVec
	tenantSeries  int // tenants with series of their own in the memory gauges (LimitTenants)
	gaugeUpdated  prometheus.Gauge
	lastRunDur    *prometheus.GaugeVec
	lastRunStart  *prometheus.GaugeVec
	lastRunOwners *prometheus.GaugeVec

	mu      sync.Mutex
	workers map[string]func() streams.Stats // stage → snapshot
	extract func() extractor.Stats
}

type modelFamilies struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	tokens   *prometheus.CounterVec
}

// New makes the registry with Go runtime and process collectors and every engram family.
func New(logger *slog.Logger) *Metrics {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto{reg}
	m := &Metrics{
		reg:          reg,
		tenantSeries: DefaultTenantSeries,
		log:          logger.With("component", "metrics"),
		httpRequests: f.counterVec("engram_http_requests_total",
			"HTTP requests answered, by route pattern and status code.", "route", "code"),
		httpDuration: f.histogramVec("engram_http_request_duration_seconds",
			"HTTP request latency by route pattern.", fastBuckets, "route"),
		turns: f.counterVec("engram_turns_received_total",
			"Turns received through the API by outcome: accepted, duplicate, rejected, failed (not acknowledged by JetStream).", "outcome"),
		retrievalDur: f.histogramVec("engram_retrieval_duration_seconds",
			"Search and context latency (op search or context) by outcome.", fastBuckets, "op", "outcome"),
		retrievalCount: f.histogramVec("engram_retrieval_results",
			"Memories returned per search or context call.", []float64{0, 1, 2, 5, 10, 20, 50, 100}, "op"),
		modelCalls: map[string]modelFamilies{
			"llm":       f.model("llm", "chat completion"),
			"embedding": f.model("embedding", "embeddings request"),
		},
		decisions: f.counterVec("engram_resolver_decisions_total",
			"Candidates resolved, by decision kind (add, confirm, update, supersede, pending, promote, noop).", "kind"),
		resolveDur: f.histogramVec("engram_resolver_duration_seconds",
			"Time to resolve one candidate, by decision kind.", fastBuckets, "kind"),
		resolveErrors: f.counter("engram_resolver_errors_total",
			"Candidates whose resolution failed (retried or dead-lettered by the worker)."),
		depChecks: f.counterVec("engram_dependency_check_failures_total",
			"Failed readiness checks by dependency and kind (unreachable, timeout, error).", "dependency", "kind"),
		memories: f.gaugeVec("engram_memories",
			"Memories by tenant, status and type (refreshed periodically).", "tenant", "status", "type"),
		embedded: f.gaugeVec("engram_memories_embedded",
			"Active memories with a vector of an embedding model, by tenant (re-embedding coverage).", "tenant", "model"),
		gaugeUpdated: f.gauge("engram_memories_refreshed_timestamp_seconds",
			"When engram_memories was last refreshed (Unix time)."),
		lastRunDur: f.gaugeVec("engram_consolidation_last_run_duration_seconds",
			"Duration of the most recent finished nightly consolidation run, by its status.", "status"),
		lastRunStart: f.gaugeVec("engram_consolidation_last_run_start_timestamp_seconds",
			"Start of the most recent nightly consolidation run (Unix time), by its status (running, completed, failed, interrupted).", "status"),
		lastRunOwners: f.gaugeVec("engram_consolidation_last_run_owners",
			"Owners of the most recent nightly consolidation run, by state (total, done, skipped).", "state"),
		workers: map[string]func() streams.Stats{},
	}
	reg.MustRegister(statsCollector{m})
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorLog: slogPrinter{m.log}})
}

// Registry is the underlying registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// WatchWorker reads a worker runtime's counters at every scrape, labelled by stage.
func (m *Metrics) WatchWorker(stage string, w interface{ Stats() streams.Stats }) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.workers[stage] = w.Stats
}

// WatchCounter exposes a monotonic count read at scrape time.
func (m *Metrics) WatchCounter(name, help string, read func() int64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
		func() float64 { return float64(read()) }))
}

// WatchExtractor reads the extractor pipeline's counters at every scrape.
func (m *Metrics) WatchExtractor(p interface{ Stats() extractor.Stats }) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.extract = p.Stats
}

// ModelObserver records the calls of a chat client (family "llm") or an embedder
// (family "embedding"): count, latency, errors by kind and tokens, by model.
func (m *Metrics) ModelObserver(family string) llm.Observer {
	f, ok := m.modelCalls[family]
	if !ok {
		panic("metrics: unknown model family " + strconv.Quote(family))
	}
	return func(c llm.Call) {
		outcome := "ok"
		if c.Err != nil {
			outcome = "error"
			f.errors.WithLabelValues(c.Model, llm.ErrorKind(c.Err)).Inc()
		}
		f.calls.WithLabelValues(c.Model, outcome).Inc()
		f.duration.WithLabelValues(c.Model).Observe(c.Duration.Seconds())
		if c.PromptTokens > 0 {
			f.tokens.WithLabelValues(c.Model, "prompt").Add(float64(c.PromptTokens))
		}
		if c.CompletionTokens > 0 {
			f.tokens.WithLabelValues(c.Model, "completion").Add(float64(c.CompletionTokens))
		}
	}
}

// ObserveDecision records one resolved candidate (consolidator.ObservedResolverHandler).
func (m *Metrics) ObserveDecision(d consolidator.Decision, took time.Duration, err error) {
	if err != nil {
		m.resolveErrors.Inc()
		return
	}
	kind := string(d.Kind)
	if kind == "" {
		kind = "unknown"
	}
	m.decisions.WithLabelValues(kind).Inc()
	m.resolveDur.WithLabelValues(kind).Observe(took.Seconds())
}

// DependencyCheckFailed counts a failed readiness check.
func (m *Metrics) DependencyCheckFailed(dependency, kind string) {
	m.depChecks.WithLabelValues(dependency, kind).Inc()
}

// Request implements httpapi.Observer.
func (m *Metrics) Request(route string, status int, took time.Duration) {
	m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(took.Seconds())
}

// Turns implements httpapi.Observer.
func (m *Metrics) Turns(res ingest.TurnsResult) {
	for outcome, n := range map[string]int{"accepted": res.Accepted, "duplicate": res.Duplicates,
		"rejected": res.Rejected, "failed": res.Failed} {
		if n > 0 {
			m.turns.WithLabelValues(outcome).Add(float64(n))
		}
	}
}

// Retrieval implements httpapi.Observer.
func (m *Metrics) Retrieval(op string, took time.Duration, results int, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.retrievalDur.WithLabelValues(op, outcome).Observe(took.Seconds())
	if err == nil {
		m.retrievalCount.WithLabelValues(op).Observe(float64(results))
	}
}

// WatchJetStream adds the consumer lag and DLQ depth families, read from JetStream at
// scrape time with a short timeout (a scrape never hangs on a NATS outage).
func (m *Metrics) WatchJetStream(js jetstream.JetStream) {
	m.reg.MustRegister(&jsCollector{js: js, log: m.log, timeout: 2 * time.Second})
}

// RunMemoryGauge refreshes the memories and consolidation families every interval
// until ctx ends, from the store's census of memories (shared with the process's
// coverage tracker: one taken within half an interval is reused).
func (m *Metrics) RunMemoryGauge(ctx context.Context, store *memory.Store, interval time.Duration) error {
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := m.refreshMemoryGauge(ctx, store, interval/2); err != nil && ctx.Err() == nil {
			m.log.Warn("refreshing the memory gauges failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RefreshMemoryGauge counts the memories and reads the latest consolidation run once.
func (m *Metrics) RefreshMemoryGauge(ctx context.Context, store *memory.Store) error {
	return m.refreshMemoryGauge(ctx, store, 0)
}

func (m *Metrics) refreshMemoryGauge(ctx context.Context, store *memory.Store, maxAge time.Duration) error {
	// A census is paced (memory.Pace), so it may take a while on a large database; the
	// bound is for a database that stopped answering.
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	var errs []error
	census, err := store.RecentCensus(ctx, maxAge, memory.Pace{})
	if err != nil {
		errs = append(errs, err)
	} else {
		m.setMemoryGauges(census)
	}
	runs, err := store.ConsolidationRuns(ctx, 1)
	if err != nil {
		errs = append(errs, err)
	} else if len(runs) == 1 {
		r := runs[0]
		m.lastRunStart.Reset()
		m.lastRunDur.Reset()
		m.lastRunStart.WithLabelValues(r.Status).Set(float64(r.StartedAt.UnixNano()) / 1e9)
		if r.FinishedAt != nil {
			m.lastRunDur.WithLabelValues(r.Status).Set(r.FinishedAt.Sub(r.StartedAt).Seconds())
		}
		m.lastRunOwners.WithLabelValues("total").Set(float64(r.Owners))
		m.lastRunOwners.WithLabelValues("done").Set(float64(r.OwnersDone))
		m.lastRunOwners.WithLabelValues("skipped").Set(float64(r.OwnersSkipped))
	}
	if len(errs) == 0 {
		m.gaugeUpdated.SetToCurrentTime()
	}
	return errors.Join(errs...)
}

// DefaultTenantSeries is how many tenants get series of their own in the memory
// gauges unless LimitTenants says otherwise.
const DefaultTenantSeries = 100

// OtherTenants is the tenant label of the memory gauges' sum over the tenants beyond
// the limit: no tenant can be named so (memory.CheckTenant).
const OtherTenants = "(others)"

// LimitTenants gives the n tenants with the most memories series of their own in the
// memory gauges and sums the others under OtherTenants (0: every tenant summed). A
// series per tenant of a service of 86,000 tenants was 190,000 series a scrape.
func (m *Metrics) LimitTenants(n int) { m.tenantSeries = max(n, 0) }

// setMemoryGauges sets the memory gauges from a census.
func (m *Metrics) setMemoryGauges(c memory.Census) {
	totals := map[string]int64{}
	for _, x := range c.Counts {
		totals[x.Tenant] += x.Count
	}
	tenants := slices.Collect(maps.Keys(totals))
	slices.SortFunc(tenants, func(a, b string) int {
		if d := cmp.Compare(totals[b], totals[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	own := map[string]bool{}
	for _, t := range tenants[:min(m.tenantSeries, len(tenants))] {
		own[t] = true
	}
	label := func(tenant string) string {
		if own[tenant] {
			return tenant
		}
		return OtherTenants
	}
	counts := map[[3]string]int64{}
	for _, x := range c.Counts {
		counts[[3]string{label(x.Tenant), x.Status, x.Type}] += x.Count
	}
	embedded := map[[2]string]int64{}
	for _, x := range c.Embedded() {
		embedded[[2]string{label(x.Tenant), x.Model}] += x.Count
	}
	m.memories.Reset()
	m.embedded.Reset()
	for k, n := range counts {
		m.memories.WithLabelValues(k[0], k[1], k[2]).Set(float64(n))
	}
	for k, n := range embedded {
		m.embedded.WithLabelValues(k[0], k[1]).Set(float64(n))
	}
}

// promauto registers families on a registry as they are made.
type promauto struct{ reg *prometheus.Registry }

func (p promauto) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	p.reg.MustRegister(c)
	return c
}

func (p promauto) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(c)
	return c
}

func (p promauto) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	p.reg.MustRegister(g)
	return g
}

func (p promauto) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(g)
	return g
}

func (p promauto) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.reg.MustRegister(h)
	return h
}

func (p promauto) model(family, what string) modelFamilies {
	prefix := "engram_" + family + "_"
	return modelFamilies{
		calls: p.counterVec(prefix+"calls_total",
			"Calls ("+what+"s, retries included in one call) by model and outcome.", "model", "outcome"),
		duration: p.histogramVec(prefix+"call_duration_seconds",
			"Latency of one "+what+", retries included, by model.", slowBuckets, "model"),
		errors: p.counterVec(prefix+"errors_total",
			"Failed calls by model and kind (unreachable, timeout, rate_limited, server, client, canceled, invalid_reply, other).", "model", "kind"),
		tokens: p.counterVec(prefix+"tokens_total",
			"Tokens reported by the server, by model and direction (prompt, completion).", "model", "direction"),
	}
}

// slogPrinter adapts promhttp's error log to slog.
type slogPrinter struct{ log *slog.Logger }

func (s slogPrinter) Println(v ...any) { s.log.Warn("serving metrics", "error", slogJoin(v)) }

func slogJoin(v []any) string {
	out := ""
	for i, x := range v {
		if i > 0 {
			out += " "
		}
		if err, ok := x.(error); ok {
			out += err.Error()
			continue
		}
		if s, ok := x.(string); ok {
			out += s
		}
	}
	return out
}
