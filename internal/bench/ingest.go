package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/streams"
)

// Defaults of IngestConfig.
const (
	DefaultIngestTurns       = 20000
	DefaultIngestBatch       = 100
	DefaultIngestConcurrency = 4
	// IngestTarget is the HTTP/raw throughput ratio the ingest path should reach.
	IngestTarget = 0.25
)

// IngestConfig configures RunIngest. Zero fields take the defaults.
type IngestConfig struct {
	Turns       int // turns sent through each path; default 20000
	Batch       int // turns per request (and per raw publish batch); default 100, at most 1000
	Concurrency int // concurrent HTTP clients (and raw publishers); default 4
	Logger      *slog.Logger
	Progress    io.Writer // progress lines, about once a second; nil for none
	// Keep leaves the benchmark's turns in TURNS. By default they are purged
	// afterwards (they belong to a throw-away tenant "bench-<random>").
	Keep bool
}

// IngestPhase is the measurement of one publishing path.
type IngestPhase struct {
	Count      int     `json:"count"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	BatchP50Ms float64 `json:"batch_p50_ms"`
	BatchP99Ms float64 `json:"batch_p99_ms"`
}

// IngestResult compares POST /v1/turns (HTTP, validation, redaction, durable
// ack) with raw JetStream async publishing of the same payloads.
type IngestResult struct {
	Turns           int         `json:"turns"`
	Batch           int         `json:"batch"`
	Concurrency     int         `json:"concurrency"`
	Tenant          string      `json:"tenant"`
	AvgPayloadBytes int         `json:"avg_payload_bytes"`
	HTTP            IngestPhase `json:"http"`
	Raw             IngestPhase `json:"raw"`
	Ratio           float64     `json:"ratio"` // HTTP turns/s ÷ raw msgs/s
	Target          float64     `json:"target"`
	Pass            bool        `json:"pass"`
}

func (c IngestConfig) withDefaults() (IngestConfig, error) {
	if c.Turns <= 0 {
		c.Turns = DefaultIngestTurns
	}
	if c.Batch <= 0 {
		c.Batch = DefaultIngestBatch
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultIngestConcurrency
	}
	if limit := ingest.DefaultLimits().MaxBatch; c.Batch > limit {
		return c, fmt.Errorf("batch %d exceeds the API's limit of %d turns", c.Batch, limit)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c, nil
}

// RunIngest measures ingest throughput on js, which must already have the
// TURNS stream (streams.EnsureTopology). It serves the real API (token
// middleware, validation, redaction, publish and wait for every PubAck) on a
// loopback listener and sends cfg.Turns turns in batches from cfg.Concurrency
// clients; then it publishes the same event payloads, under new turn ids so
// that deduplication does not short-cut them, with raw async publishes from as
// many goroutines, batch by batch, waiting for every ack. The turns go to a
// fresh tenant; run it against a development server, since workers consuming
// TURNS would process them.
func RunIngest(ctx context.Context, js jetstream.JetStream, cfg IngestConfig) (IngestResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest bench: %w", err)
	}
	stream, err := js.Stream(ctx, streams.TurnsStream)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest bench: looking up stream %s (run the topology set-up first): %w",
			streams.TurnsStream, err)
	}
	tenant := "bench-" + strings.ReplaceAll(uuid.NewString()[:13], "-", "")
	res := IngestResult{Turns: cfg.Turns, Batch: cfg.Batch, Concurrency: cfg.Concurrency,
		Tenant: tenant, Target: IngestTarget}
	if !cfg.Keep {
		defer func() {
			// Purge even when ctx has ended, or the turns outlive the benchmark.
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			subj := streams.TurnSubjectPrefix + streams.EncodeToken(tenant) + ".*"
			if err := stream.Purge(pctx, jetstream.WithPurgeSubject(subj)); err != nil {
				cfg.Logger.Warn("ingest bench: purging the benchmark's turns", "subject", subj, "err", err)
			}
		}()
	}

	srv, err := startBenchServer(js, tenant, cfg.Logger)
	if err != nil {
		return res, fmt.Errorf("ingest bench: %w", err)
	}
	defer srv.close()

	// One warm-up batch per client opens the connections and warms the stream.
	warm := genBenchBodies(cfg.Concurrency*cfg.Batch, cfg.Batch, 1)
	bodies := genBenchBodies(cfg.Turns, cfg.Batch, 2)
	postWarm := func(ctx context.Context, i int) error { return srv.post(ctx, warm.bodies[i]) }
	if _, err := runBatches(ctx, cfg.Concurrency, warm.bodies, nil, postWarm); err != nil {
		return res, fmt.Errorf("ingest bench: warm-up: %w", err)
	}

	fmt.Fprintf(cfg.Progress, "http: %d turns in batches of %d from %d clients to POST /v1/turns\n",
		cfg.Turns, cfg.Batch, cfg.Concurrency)
	post := func(ctx context.Context, i int) error { return srv.post(ctx, bodies.bodies[i]) }
	res.HTTP, err = runIngestPhase(ctx, cfg, "http", bodies.bodies, bodies.sizes, post)
	if err != nil {
		return res, fmt.Errorf("ingest bench: HTTP phase: %w", err)
	}

	msgs, avg, err := rawMessages(bodies.bodies, tenant)
	if err != nil {
		return res, fmt.Errorf("ingest bench: building raw payloads: %w", err)
	}
	res.AvgPayloadBytes = avg
	raw := func(ctx context.Context, i int) error { return publishRaw(ctx, js, msgs[i]) }
	fmt.Fprintf(cfg.Progress, "raw: the same %d payloads with async publish, %d publishers\n", cfg.Turns, cfg.Concurrency)
	res.Raw, err = runIngestPhase(ctx, cfg, "raw", msgs, bodies.sizes, raw)
	if err != nil {
		return res, fmt.Errorf("ingest bench: raw phase: %w", err)
	}
	if res.Raw.PerSecond > 0 {
		res.Ratio = res.HTTP.PerSecond / res.Raw.PerSecond
	}
	res.Pass = res.Ratio >= IngestTarget
	return res, nil
}

// runIngestPhase times one path over all batches, reporting progress.
func runIngestPhase[B any](ctx context.Context, cfg IngestConfig, name string, batches []B, sizes []int,
	send func(context.Context, int) error) (IngestPhase, error) {
	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				n := done.Load()
				fmt.Fprintf(cfg.Progress, "  %s: %d/%d (%.0f/s)\n", name, n, cfg.Turns,
					float64(n)/time.Since(start).Seconds())
			}
		}
	}()
	lat, err := runBatches(ctx, cfg.Concurrency, batches, func(i int) { done.Add(int64(sizes[i])) }, send)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		return IngestPhase{}, err
	}
	p := IngestPhase{Count: cfg.Turns, Seconds: elapsed.Seconds(),
		PerSecond:  float64(cfg.Turns) / elapsed.Seconds(),
		BatchP50Ms: ms(percentile(lat, 0.50)), BatchP99Ms: ms(percentile(lat, 0.99))}
	fmt.Fprintf(cfg.Progress, "  %s: %d in %.2fs = %.0f/s\n", name, p.Count, p.Seconds, p.PerSecond)
	return p, nil
}

// runBatches sends batches 0..len-1 from n goroutines and returns each batch's
// latency. The first error stops the run.
func runBatches[B any](ctx context.Context, n int, batches []B, onDone func(int),
	send func(context.Context, int) error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lat := make([]time.Duration, len(batches))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				if err := send(ctx, i); err != nil {
					cancel(fmt.Errorf("batch %d: %w", i, err))
					return
				}
				lat[i] = time.Since(t0)
				if onDone != nil {
					onDone(i)
				}
			}
		}()
	}
feed:
	for i := range batches {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return lat, nil
}

func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchServer is the API on a loopback listener with a one-off token.
type benchServer struct {
	url    string
	token  string
	srv    *http.Server
	client *http.Client
}

func startBenchServer(js jetstream.JetStream, tenant string, log *slog.Logger) (*benchServer, error) {
	h, token, err := turnsEdge(js, tenant, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	s := &benchServer{
		url:   "http://" + ln.Addr().String() + "/v1/turns",
		token: token,
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 64, DisableCompression: true}},
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("ingest bench: serving", "err", err)
		}
	}()
	return s, nil
}

// turnsEdge is the production HTTP edge over the write service on js, with one fresh
// token for tenant: the one place the benchmark builds it.
func turnsEdge(js jetstream.JetStream, tenant string, logger *slog.Logger) (http.Handler, string, error) {
	tok, err := httpapi.NewToken()
	if err != nil {
		return nil, "", err
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenant, Name: "bench", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		return nil, "", fmt.Errorf("registering the benchmark token: %w", err)
	}
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: logger})
	if err != nil {
		return nil, "", fmt.Errorf("building the write service: %w", err)
	}
	return httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: logger}), tok, nil
}

// turnsAnswer is POST /v1/turns' answer as a client reads it (its JSON, not the
// server's Go type).
type turnsAnswer struct {
	Results []struct {
		Index     int             `json:"index"`
		TurnID    string          `json:"turn_id"`
		Status    string          `json:"status"`
		Error     json.RawMessage `json:"error"`
		Retryable bool            `json:"retryable"`
	} `json:"results"`
	Accepted   int            `json:"accepted"`
	Duplicates int            `json:"duplicates"`
	Rejected   int            `json:"rejected"`
	Failed     int            `json:"failed"`
	Error      *httpapi.Error `json:"error"`
}

func (s *benchServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.client.CloseIdleConnections()
}

// post sends one batch body and insists that every turn was accepted.
func (s *benchServer) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tr turnsAnswer
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		return fmt.Errorf("status %d, decoding response: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusAccepted || tr.Accepted != len(tr.Results) {
		detail := ""
		if tr.Error != nil {
			detail = ": " + tr.Error.Code + ": " + tr.Error.Message
		}
		return fmt.Errorf("status %d, %d of %d accepted%s", resp.StatusCode, tr.Accepted, len(tr.Results), detail)
	}
	return nil
}

// benchBodies are request bodies {"turns":[...]} and how many turns each holds.
type benchBodies struct {
	bodies [][]byte
	sizes  []int
}

// benchWireTurn is a turn event v1 as a client sends it.
type benchWireTurn struct {
	TurnID     string         `json:"turn_id"`
	UserID     string         `json:"user_id"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id"`
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	OccurredAt time.Time      `json:"occurred_at"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

var benchPhrases = []string{
	"I prefer meetings after 10am and never on Fridays.",
	"Can you book the usual table for four at the Sichuan place?",
	"My daughter is allergic to peanuts, keep that in mind for recipes.",
	"The deploy failed again with exit code 137, probably out of memory.",
	"我下周要去上海出差，帮我订周二早上的高铁。",
	"Remember that the quarterly report is due on the last Thursday of the month.",
	"Use metric units, my home is in Bremen.",
	"Last time the pip install worked only after upgrading setuptools.",
	"Summarise the thread and draft a polite reply declining the invitation.",
	"我喜欢喝乌龙茶，不加糖。",
}

// genBenchBodies builds deterministic, realistic batches (a few hundred bytes of
// mixed English and Chinese content, some with metadata, one in fifty holding
// a secret for the redactor to find) with fresh UUIDv7 turn ids.
func genBenchBodies(turns, batch int, seed uint64) benchBodies {
	rng := rand.New(rand.NewPCG(seed, 0x656e6772616d))
	base := time.Now().UTC().Add(-time.Hour)
	var out benchBodies
	for start := 0; start < turns; start += batch {
		n := min(batch, turns-start)
		ts := make([]benchWireTurn, n)
		for j := range ts {
			i := start + j
			var sb strings.Builder
			for k := 1 + rng.IntN(6); k > 0; k-- {
				sb.WriteString(benchPhrases[rng.IntN(len(benchPhrases))])
				sb.WriteByte(' ')
			}
			if i%50 == 0 {
				sb.WriteString("my key is sk-proj-Xq7Lm2Pz9Rt4Kw8Nv3Bc6Hd1Fg5Js0Ay2Ue7Oi4")
			}
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			ts[j] = benchWireTurn{
				TurnID:     uuid.Must(uuid.NewV7()).String(),
				UserID:     fmt.Sprintf("user-%03d", i%200),
				AgentID:    "bench-agent",
				SessionID:  fmt.Sprintf("session-%03d-%d", i%200, i/1000),
				Role:       role,
				Content:    strings.TrimSpace(sb.String()),
				OccurredAt: base.Add(time.Duration(i) * time.Millisecond),
			}
			if i%4 == 0 {
				ts[j].Metadata = map[string]any{"channel": "web", "lang": "en", "turn": i}
			}
		}
		b, err := json.Marshal(map[string]any{"turns": ts})
		if err != nil {
			panic(fmt.Sprintf("encoding generated turns: %v", err)) // plain structs cannot fail
		}
		out.bodies = append(out.bodies, b)
		out.sizes = append(out.sizes, n)
	}
	return out
}

// rawMessages turns each request body into the messages the API publishes for
// it (same decoding, redaction and envelope), under new turn ids.
func rawMessages(bodies [][]byte, tenant string) ([][]*nats.Msg, int, error) {
	red, err := redact.New(redact.Config{})
	if err != nil {
		return nil, 0, fmt.Errorf("building the redactor: %w", err)
	}
	out := make([][]*nats.Msg, len(bodies))
	total, count := 0, 0
	for bi, body := range bodies {
		trs, ferr := ingest.DecodeTurns(body, ingest.DefaultLimits(), time.Now())
		if ferr != nil {
			return nil, 0, ferr
		}
		for _, tr := range trs {
			if tr.Err != nil {
				return nil, 0, tr.Err
			}
			t := tr.Turn
			t.Tenant = tenant
			t.TurnID = uuid.Must(uuid.NewV7()).String()
			red.Turn(&t)
			ev := streams.TurnEvent{V: streams.TurnEventVersion, Tenant: tenant, Turn: t}
			subj, err := ev.Subject()
			if err != nil {
				return nil, 0, err
			}
			data, err := json.Marshal(ev)
			if err != nil {
				return nil, 0, fmt.Errorf("encoding turn event: %w", err)
			}
			m := nats.NewMsg(subj)
			m.Data = data
			m.Header.Set(streams.HeaderMsgID, ev.MsgID())
			m.Header.Set(streams.HeaderTenant, tenant)
			m.Header.Set(streams.HeaderEvent, streams.TurnEventType)
			out[bi] = append(out[bi], m)
			total += len(data)
			count++
		}
	}
	return out, total / max(count, 1), nil
}

// publishRaw publishes one batch asynchronously and waits for every ack, as
// streams.PublishTurns does for the API.
func publishRaw(ctx context.Context, js jetstream.JetStream, msgs []*nats.Msg) error {
	futs := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m)
		if err != nil {
			return fmt.Errorf("publishing: %w", err)
		}
		futs[i] = f
	}
	for _, f := range futs {
		select {
		case ack := <-f.Ok():
			if ack.Duplicate {
				return errors.New("raw publish was deduplicated: turn ids collided")
			}
		case err := <-f.Err():
			return fmt.Errorf("waiting for ack: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
