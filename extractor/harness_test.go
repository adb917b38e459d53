package extractor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

const (
	tenant    = "acme"
	user      = "u1"
	fakeModel = "fake-model"
)

// cst is the users' offset: dates must resolve in it, not in UTC.
var cst = time.FixedZone("CST", 8*3600)

// base is Monday 2025-03-10 09:00 in CST.
func base() time.Time { return time.Date(2025, 3, 10, 9, 0, 0, 0, cst) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// harness is a pipeline over a fresh PostgreSQL database and JetStream server.
type harness struct {
	t     *testing.T
	store *memory.Store
	js    jetstream.JetStream
	fake  *fakeopenai.Server // nil with the offline extractor
	llm   *extractor.LLMExtractor
	p     *extractor.Pipeline
	seq   atomic.Uint64
}

type harnessOpts struct {
	offline    bool          // the offline extractor instead of the LLM one
	batchQuiet time.Duration // default 300ms
	chat       llm.ChatConfig
	llmCfg     extractor.LLMConfig
	turnEmb    extractor.TurnEmbedder // nil: no turn vectors
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, store: pgtest.Store(t)}
	srv := natstest.Start(t)
	_, h.js = srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), h.js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var ext extractor.Extractor
	if o.offline {
		ext = extractor.NewOffline()
	} else {
		h.fake = fakeopenai.New(t)
		h.llm = newLLM(t, h.fake, o.chat, o.llmCfg)
		ext = h.llm
	}
	h.p, err = extractor.NewPipeline(extractor.PipelineConfig{
		Store: h.store, Publisher: h.js, Extractor: ext, Redactor: red,
		BatchQuiet: o.batchQuiet, TurnEmbedder: o.turnEmb, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// newLLM is an LLM extractor talking to fake, with test-sized retry timings.
func newLLM(t *testing.T, fake *fakeopenai.Server, cc llm.ChatConfig, cfg extractor.LLMConfig) *extractor.LLMExtractor {
	t.Helper()
	cc.BaseURL, cc.Model = fake.URL(), fakeModel
	if cc.InitialBackoff == 0 {
		cc.InitialBackoff, cc.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	}
	chat, err := llm.NewChat(cc, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	e, err := extractor.NewLLMExtractor(chat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// turn builds a turn of session s, minute minutes after base.
func turn(id, s string, role memory.Role, minute int, content string) memory.Turn {
	return memory.Turn{TurnID: id, UserID: user, SessionID: s, Role: role, Content: content,
		OccurredAt: base().Add(time.Duration(minute) * time.Minute)}
}

func userTurn(id, s string, minute int, content string) memory.Turn {
	return turn(id, s, memory.RoleUser, minute, content)
}

func assistantTurn(id, s string, minute int, content string) memory.Turn {
	return turn(id, s, memory.RoleAssistant, minute, content)
}

// msg is the delivery of a turn as the worker runtime hands it to a handler.
func (h *harness) msg(tr memory.Turn, delivery uint64) *streams.Msg {
	h.t.Helper()
	data, err := json.Marshal(streams.TurnEvent{V: streams.TurnEventVersion, Tenant: tenant, Turn: tr})
	if err != nil {
		h.t.Fatal(err)
	}
	subj, _ := streams.TurnSubject(tenant, tr.UserID)
	return &streams.Msg{Subject: subj, Data: data, Stream: streams.TurnsStream, StreamSeq: h.seq.Add(1), NumDelivered: delivery}
}

// handleAll delivers turns concurrently, as a worker with free slots does, and returns
// each handler's result in input order.
func (h *harness) handleAll(turns ...memory.Turn) []error {
	h.t.Helper()
	ctx := testCtx(h.t)
	errs := make([]error, len(turns))
	var wg sync.WaitGroup
	base := h.p.Stats().TurnsReceived
	for i, tr := range turns {
		m := h.msg(tr, 1)
		wg.Go(func() { errs[i] = h.p.Handle(ctx, m) })
		// Handlers start in stream order, as the TURNS worker starts them: each one has
		// announced its turn before the next starts, so a batch never flushes for want
		// of a goroutine the scheduler has not run yet (what batches then hold follows
		// the pipeline's rules, not the machine's load).
		for h.p.Stats().TurnsReceived < base+int64(i)+1 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	wg.Wait()
	return errs
}

// mustHandle is handleAll that fails the test on any error.
func (h *harness) mustHandle(turns ...memory.Turn) {
	h.t.Helper()
	for i, err := range h.handleAll(turns...) {
		if err != nil {
			h.t.Fatalf("handling turn %s: %v", turns[i].TurnID, err)
		}
	}
}

// publishTurns puts turns on TURNS, as ingest does.
func (h *harness) publishTurns(turns ...memory.Turn) {
	h.t.Helper()
	for _, tr := range turns {
		if _, err := streams.PublishTurn(testCtx(h.t), h.js, streams.TurnEvent{Tenant: tenant, Turn: tr}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// startWorker runs the pipeline as the TURNS worker until the test ends.
func (h *harness) startWorker(cfg streams.WorkerConfig) *streams.Worker {
	h.t.Helper()
	cfg.InitialBackoff, cfg.MaxBackoff, cfg.BackoffJitter = 20*time.Millisecond, 200*time.Millisecond, -1
	cfg.FetchWait, cfg.ShutdownGrace, cfg.Logger = 500*time.Millisecond, 10*time.Second, quietLogger()
	w, err := streams.NewWorker(h.js, h.p.WorkerConfig(cfg), h.p.Handle)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("worker: %v", err)
		}
	})
	return w
}

// candidates reads everything on CANDIDATES, in stream order.
func (h *harness) candidates() []memory.Candidate {
	h.t.Helper()
	ctx := testCtx(h.t)
	s, err := h.js.Stream(ctx, streams.CandidatesStream)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []memory.Candidate
	if info.State.Msgs == 0 {
		return nil
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		raw, err := s.GetMsg(ctx, seq)
		if err != nil {
			h.t.Fatal(err)
		}
		ev, err := streams.DecodeCandidateEvent(raw.Data)
		if err != nil {
			h.t.Fatal(err)
		}
		if got, want := raw.Header.Get(streams.HeaderMsgID), tenant+":"+ev.Candidate.ID; got != want {
			h.t.Errorf("candidate msg id %q, want %q", got, want)
		}
		out = append(out, ev.Candidate)
	}
	return out
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// promptTurn is a turn as the prompt shows it.
type promptTurn struct {
	ID         string `json:"id"`
	Role       string `json:"role"`
	OccurredAt string `json:"occurred_at"`
	Content    string `json:"content"`
}

// newTurnsOf reads the NEW turns out of an extraction request's user prompt.
func newTurnsOf(t testing.TB, req openai.ChatCompletionRequest) []promptTurn {
	t.Helper()
	var prompt string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			prompt = m.Content
			break
		}
	}
	_, section, ok := strings.Cut(prompt, "NEW turns")
	if !ok {
		t.Errorf("prompt without a NEW turns section:\n%s", prompt)
		return nil
	}
	var out []promptTurn
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var pt promptTurn
		if err := json.Unmarshal([]byte(line), &pt); err != nil {
			t.Errorf("prompt turn %q: %v", line, err)
			continue
		}
		out = append(out, pt)
	}
	return out
}

// mem is one memory of a scripted reply.
type mem struct {
	Type          string   `json:"type"`
	Category      string   `json:"category"`
	Key           *string  `json:"key"`
	Content       string   `json:"content"`
	Importance    float64  `json:"importance"`
	Confidence    float64  `json:"confidence"`
	SourceTurnIDs []string `json:"source_turn_ids"`
	ValidFrom     string   `json:"valid_from"`
	ExpireAt      *string  `json:"expire_at"`
	Speaker       string   `json:"speaker"`
}

func ptr[T any](v T) *T { return &v }

// reply renders a scripted extraction reply.
func reply(ms ...mem) string {
	if ms == nil {
		ms = []mem{}
	}
	b, err := json.Marshal(map[string]any{"memories": ms})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// echoUserTurns is a fake model: one preference memory per NEW user turn.
func echoUserTurns(t testing.TB) func(openai.ChatCompletionRequest) fakeopenai.Reply {
	return func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		var ms []mem
		for _, pt := range newTurnsOf(t, req) {
			if pt.Role != "user" {
				continue
			}
			ms = append(ms, mem{Type: "semantic", Category: "preference", Content: fmt.Sprintf("The user said: %s", pt.Content),
				Importance: 0.6, Confidence: 0.9, SourceTurnIDs: []string{pt.ID}, ValidFrom: pt.OccurredAt, Speaker: "user"})
		}
		return fakeopenai.Reply{Content: reply(ms...)}
	}
}
