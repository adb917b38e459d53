package rebuild_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/internal/rebuild"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// harness is engram's live pipeline on the offline extractor (real PostgreSQL, real
// JetStream), plus what a rebuild with a faked LLM extractor needs.
type harness struct {
	store  *memory.Store
	js     jetstream.JetStream
	emb    *llm.HashEmbedder
	ingest *ingest.Service
	ops    *lifecycle.Ops
	life   *lifecycle.Lifecycle
	fake   *fakeopenai.Server
	red    *redact.Redactor
	// chatCalls counts extraction calls; onChat, when set, runs on each.
	chatCalls atomic.Int64
	onChat    atomic.Pointer[func(n int64)]
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newHarness(t *testing.T, ctx context.Context) *harness {
	t.Helper()
	h := &harness{store: pgtest.Store(t)}
	srv := natstest.Start(t)
	_, h.js = srv.Connect(t)
	if err := streams.EnsureTopology(ctx, h.js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	var err error
	if h.emb, err = llm.NewHashEmbedder(0); err != nil {
		t.Fatal(err)
	}
	if h.red, err = redact.New(redact.Config{}); err != nil {
		t.Fatal(err)
	}
	if h.ingest, err = ingest.NewService(ingest.Config{Redactor: h.red, Publisher: h.js}); err != nil {
		t.Fatal(err)
	}
	h.ops = lifecycle.NewOps(h.store, h.emb)
	h.life = lifecycle.NewLifecycle(h.store, h.js, nil, nil)
	live, err := extractor.NewPipeline(extractor.PipelineConfig{Store: h.store, Publisher: h.js,
		Extractor: extractor.NewOffline(), Redactor: h.red, BatchQuiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res := consolidator.NewResolver(h.store, h.emb, nil, consolidator.DefaultResolverConfig(), nil)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() {
		done <- extractor.RunExtractorWorker(wctx, h.js, live, streams.WorkerConfig{FetchWait: 100 * time.Millisecond})
	}()
	go func() {
		done <- consolidator.RunResolverWorker(wctx, h.js, res, consolidator.WorkerConfig{Concurrency: 4,
			FetchWait: 100 * time.Millisecond, ShutdownGrace: 5 * time.Second})
	}()
	t.Cleanup(func() {
		stop()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	})

	// The LLM extractor's fake model: one memory per new user turn, worded so that
	// it cannot be mistaken for the offline rules' output.
	h.fake = fakeopenai.New(t)
	h.fake.SetChatFunc(func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		n := h.chatCalls.Add(1)
		if f := h.onChat.Load(); f != nil {
			(*f)(n)
		}
		var ms []map[string]any
		for _, pt := range newTurns(t, req) {
			if pt.Role != "user" {
				continue
			}
			ms = append(ms, map[string]any{"type": "semantic", "category": "fact", "key": nil,
				"content": "LLM noted: " + pt.Content, "importance": 0.6, "confidence": 0.9,
				"source_turn_ids": []string{pt.ID}, "valid_from": pt.OccurredAt, "expire_at": nil, "speaker": "user"})
		}
		if ms == nil {
			ms = []map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"memories": ms})
		return fakeopenai.Reply{Content: string(b)}
	})
	return h
}

type promptTurn struct {
	ID         string `json:"id"`
	Role       string `json:"role"`
	OccurredAt string `json:"occurred_at"`
	Content    string `json:"content"`
}

// newTurns reads the NEW turns out of an extraction prompt.
func newTurns(t *testing.T, req openai.ChatCompletionRequest) []promptTurn {
	var prompt string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			prompt = m.Content
			break
		}
	}
	_, section, ok := strings.Cut(prompt, "NEW turns")
	if !ok {
		t.Errorf("prompt without a NEW turns section")
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

// rebuilder is a rebuild with the LLM extractor on the fake model.
func (h *harness) rebuilder(t *testing.T) *rebuild.Rebuilder {
	t.Helper()
	return h.rebuilderWith(t, nil)
}

// hookResolver is the real resolver, with hook run before its first call.
type hookResolver struct {
	rebuild.Resolver
	once sync.Once
	hook func()
}

func (h *hookResolver) ResolveLocked(ctx context.Context, tx *memory.Tx, c memory.Candidate) (consolidator.Decision, error) {
	h.once.Do(h.hook)
	return h.Resolver.ResolveLocked(ctx, tx, c)
}

// rebuilderWith is rebuilder with hook (when not nil) run inside the first owner's
// locked transaction, before its first resolution.
func (h *harness) rebuilderWith(t *testing.T, hook func()) *rebuild.Rebuilder {
	t.Helper()
	chat, err := llm.NewChat(llm.ChatConfig{BaseURL: h.fake.URL(), Model: "fake-extractor", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := extractor.NewLLMExtractor(chat, extractor.LLMConfig{Redactor: h.red})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := extractor.NewPipeline(extractor.PipelineConfig{Store: h.store, Publisher: h.js, Extractor: ex, Redactor: h.red})
	if err != nil {
		t.Fatal(err)
	}
	var res rebuild.Resolver = consolidator.NewResolver(h.store, h.emb, nil, consolidator.DefaultResolverConfig(), nil)
	if hook != nil {
		res = &hookResolver{Resolver: res, hook: hook}
	}
	rb, err := rebuild.New(rebuild.Config{Store: h.store, Extractor: ep, Resolver: res,
		ExtractorID: ex.Name() + "/" + ex.Version() + "/" + ex.Model(), BatchMax: ep.Config().BatchMax})
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

var t0 = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

// conversation is a few users' sessions, in the words of this test only.
func conversation(users ...string) []map[string]any {
	lines := []string{
		"I prefer green tea to coffee in the mornings.",
		"ok",
		"My brother Tomas works as a carpenter in Gdansk.",
		"I am allergic to walnuts, so keep them out of recipes.",
		"I usually cycle to the office on Tuesdays.",
		"My favourite board game is Carcassonne.",
	}
	var out []map[string]any
	for ui, u := range users {
		for i, l := range lines {
			sess := "s1"
			if i >= 3 {
				sess = "s2"
			}
			at := t0.Add(time.Duration(ui)*time.Minute + time.Duration(i)*time.Hour)
			out = append(out, map[string]any{"turn_id": fmt.Sprintf("%s-t%d", u, i), "user_id": u, "session_id": sess,
				"role": "user", "content": l, "occurred_at": at})
			out = append(out, map[string]any{"turn_id": fmt.Sprintf("%s-a%d", u, i), "user_id": u, "session_id": sess,
				"role": "assistant", "content": "Noted.", "occurred_at": at.Add(time.Second)})
		}
	}
	return out
}

func (h *harness) addTurns(t *testing.T, ctx context.Context, tenant string, turns []map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.ingest.Ingest(ctx, tenant, body)
	if err != nil || res.Accepted != len(turns) {
		t.Fatalf("ingest: %+v %v", res, err)
	}
	h.drain(t, ctx)
}

// drain waits until both workers have processed everything published so far.
func (h *harness) drain(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, sc := range [][2]string{{streams.TurnsStream, streams.ExtractorConsumer}, {streams.CandidatesStream, streams.ResolverConsumer}} {
		for {
			c, err := h.js.Consumer(ctx, sc[0], sc[1])
			if err == nil {
				info, err := c.Info(ctx)
				if err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Stream > 0 {
					break
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("draining %s: %v", sc[1], ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// active lists a user's active and pending memories as "status|content", sorted.
func (h *harness) active(t *testing.T, ctx context.Context, tenant, user string) []string {
	t.Helper()
	var out []string
	for _, m := range h.memories(t, ctx, tenant, user) {
		if m.Status == memory.StatusActive || m.Status == memory.StatusPending {
			out = append(out, string(m.Status)+"|"+m.Content)
		}
	}
	slices.Sort(out)
	return out
}

func (h *harness) memories(t *testing.T, ctx context.Context, tenant, user string) []memory.OwnerMemory {
	t.Helper()
	var ms []memory.OwnerMemory
	if err := h.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		ms, err = tx.OwnerMemories(ctx, user)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ms
}

// snapshot is every memory row of a tenant (id, version, status, confidence) and the
// count of versions, for "nothing changed" checks.
func snapshot(t *testing.T, h *harness, tenant string) string {
	t.Helper()
	return fmt.Sprint(
		pgtest.Count(t, h.store.Pool(), tenant, `SELECT count(*) FROM memory_versions`),
		pgtest.Count(t, h.store.Pool(), tenant, `SELECT count(*) FROM memories`),
		pgtest.Count(t, h.store.Pool(), tenant, `SELECT count(*) FROM applied_candidates`),
		pgtest.Count(t, h.store.Pool(), tenant, `SELECT coalesce(sum(version * 7 + confirm_count), 0) FROM memories`))
}

func find(t *testing.T, ms []memory.OwnerMemory, substr string) memory.OwnerMemory {
	t.Helper()
	for _, m := range ms {
		if strings.Contains(m.Content, substr) && m.Status == memory.StatusActive {
			return m
		}
	}
	t.Fatalf("no active memory with %q in %d memories", substr, len(ms))
	return memory.OwnerMemory{}
}

// TestRebuildOfflineToLLM: memories extracted live by the offline rules are rebuilt
// with the LLM extractor; explicit memories and corrections survive; the replaced
// memories stay in history; a dry run changes nothing; a second rebuild changes
// nothing; a second concurrent rebuild is refused.
func TestRebuildOfflineToLLM(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	const tenant = "rb1"
	h.addTurns(t, ctx, tenant, conversation("u1", "u2"))
	if _, err := h.ingest.Remember(ctx, tenant, "api:test", ingest.RememberRequest{UserID: "u1",
		Content: "The user's locker code changes every quarter.", Category: memory.CatFact}); err != nil {
		t.Fatal(err)
	}
	// An explicit memory of u2 that says exactly what the model will derive from one
	// of u2's turns: the rebuild must not confirm (change) it, nor duplicate it.
	restated := "LLM noted: My favourite board game is Carcassonne."
	if _, err := h.ingest.Remember(ctx, tenant, "api:test", ingest.RememberRequest{UserID: "u2",
		Content: restated, Category: memory.CatFact}); err != nil {
		t.Fatal(err)
	}
	h.drain(t, ctx)
	explicit := find(t, h.memories(t, ctx, tenant, "u2"), restated)
	before := h.memories(t, ctx, tenant, "u1")
	if len(before) < 4 {
		t.Fatalf("the offline rules made only %d memories of u1", len(before))
	}
	for _, m := range before {
		if strings.HasPrefix(m.Content, "LLM noted") {
			t.Fatalf("offline memory looks like the fake model's: %q", m.Content)
		}
	}
	// An explicit statement of what the rules had already derived confirms that
	// memory, which makes it the person's too: it is kept.
	brother := find(t, before, "brother is named")
	if _, err := h.ingest.Remember(ctx, tenant, "api:test", ingest.RememberRequest{UserID: "u1",
		Content: brother.Content, Category: brother.Category}); err != nil {
		t.Fatal(err)
	}
	h.drain(t, ctx)
	if m := find(t, h.memories(t, ctx, tenant, "u1"), "brother is named"); m.ID != brother.ID || m.ConfirmCount != 2 {
		t.Fatalf("the explicit restatement did not confirm %s: %+v", brother.ID, m.Memory)
	}
	board := find(t, before, "Carcassonne")
	if _, err := h.ops.Correct(ctx, tenant, board.ID, lifecycle.Correction{Content: "The user's favourite board game is Azul."}, "api:test"); err != nil {
		t.Fatal(err)
	}
	rb := h.rebuilder(t)

	// A dry run reports and changes nothing.
	snap := snapshot(t, h, tenant)
	dry, err := rb.Run(ctx, rebuild.Options{Tenant: tenant, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, h, tenant); got != snap {
		t.Fatalf("dry run changed the tenant: %s → %s", snap, got)
	}
	if dry.Owners != 2 || dry.Replaced != 2 || len(dry.OwnerReports) != 2 || len(dry.OwnerReports[0].Added) == 0 {
		t.Fatalf("dry run report %+v", dry)
	}

	// A rebuild that runs while another holds the tenant is refused at once.
	unlock, ok, err := h.store.TryLock(ctx, "engram-rebuild/"+tenant)
	if err != nil || !ok {
		t.Fatalf("taking the lock: %v %v", ok, err)
	}
	release := pgtest.Held(t, unlock)
	if _, err := rb.Run(ctx, rebuild.Options{Tenant: tenant}); !errors.Is(err, rebuild.ErrRunning) {
		t.Fatalf("concurrent rebuild: %v, want ErrRunning", err)
	}
	release()

	rep, err := rb.Run(ctx, rebuild.Options{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != "completed" || rep.Replaced != 2 || rep.Turns != 24 {
		t.Fatalf("report %+v", rep)
	}
	for _, u := range []string{"u1", "u2"} {
		got := h.active(t, ctx, tenant, u)
		var llmMade int
		for _, g := range got {
			if strings.HasPrefix(g, "active|LLM noted: ") {
				llmMade++
			}
		}
		// Every user turn but the chit-chat the gate keeps out yields the model's memory,
		// but for the board-game turns:
		want := 5 // u2's board-game turn restates u2's explicit memory, counted here once
		if u == "u1" {
			// u1's board-game turn is claimed by the correction, its brother turn by the
			// explicit restatement (and the other memory of that turn is kept as it was)
			want = 3
		}
		if llmMade != want {
			t.Errorf("%s: %d memories from the model, want %d: %q", u, llmMade, want, got)
		}
	}
	var copies int
	for _, m := range h.memories(t, ctx, tenant, "u2") {
		if m.Content == restated {
			copies++
			if m.ID != explicit.ID || m.ConfirmCount != explicit.ConfirmCount || m.Version != explicit.Version ||
				m.Status != memory.StatusActive {
				t.Errorf("the explicit memory changed: %+v, was %+v", m.Memory, explicit.Memory)
			}
		}
	}
	if copies != 1 {
		t.Errorf("%d memories say %q, want the explicit one only", copies, restated)
	}
	after := h.memories(t, ctx, tenant, "u1")
	if m := find(t, after, "locker code"); m.ID == uuid.Nil || m.Source != memory.SourceManual {
		t.Errorf("explicit memory %+v", m)
	}
	if m := find(t, after, "brother is named"); m.ID != brother.ID {
		t.Errorf("the memory an explicit statement confirmed is not kept: %+v", m)
	}
	find(t, after, "brother is a carpenter")
	if m := find(t, after, "Azul"); m.ID != board.ID {
		t.Errorf("the corrected memory is not kept as it was: %+v", m)
	}
	for _, m := range after {
		if strings.Contains(m.Content, "Carcassonne") && m.Status == memory.StatusActive {
			t.Errorf("the corrected turn was derived again: %q", m.Content)
		}
	}
	// The offline memories stay in history, closed by a rebuild version with the run id.
	var retired int
	for _, m := range after {
		if m.LastChange != memory.ChangeRebuild {
			if strings.HasPrefix(m.Content, "LLM noted") && m.Metadata["rebuild_run"] != rep.RunID.String() {
				t.Errorf("rebuilt memory without its run: %+v", m.Metadata)
			}
			continue
		}
		retired++
		if m.Status != memory.StatusSuperseded || m.ValidTo == nil {
			t.Errorf("retired memory %s is %s, valid_to %v", m.ID, m.Status, m.ValidTo)
		}
		var vs []memory.Version
		if err := h.store.InTx(ctx, tenant, func(tx *memory.Tx) error { vs, err = tx.Versions(ctx, m.ID); return err }); err != nil {
			t.Fatal(err)
		}
		if last := vs[len(vs)-1]; !strings.Contains(last.Reason, rep.RunID.String()) || last.Actor != "rebuild" {
			t.Errorf("rebuild version %+v", last)
		}
	}
	if retired == 0 {
		t.Error("no memory was retired by the rebuild")
	}

	// A second rebuild changes nothing.
	snap = snapshot(t, h, tenant)
	again, err := rb.Run(ctx, rebuild.Options{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if again.Replaced != 0 || again.Unchanged != 2 || again.Resumed {
		t.Errorf("second rebuild %+v", again)
	}
	if got := snapshot(t, h, tenant); got != snap {
		t.Errorf("second rebuild changed the tenant: %s → %s", snap, got)
	}
}

// TestRebuildInterruptedThenResumed: a rebuild killed in the middle of an owner (its
// context cancelled during a model call) and run again ends where one clean rebuild
// of the same data ends.
func TestRebuildInterruptedThenResumed(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	users := []string{"u1", "u2", "u3"}
	h.addTurns(t, ctx, "clean", conversation(users...))
	h.addTurns(t, ctx, "killed", conversation(users...))
	rb := h.rebuilder(t)
	if _, err := rb.Run(ctx, rebuild.Options{Tenant: "clean"}); err != nil {
		t.Fatal(err)
	}

	// Two batches (sessions) per owner: the fifth model call is in the third owner's
	// extraction... the cancel lands in the middle of an owner whatever the count.
	start := h.chatCalls.Load()
	kctx, kill := context.WithCancel(ctx)
	f := func(n int64) {
		if n-start == 3 {
			kill()
		}
	}
	h.onChat.Store(&f)
	rep, err := rb.Run(kctx, rebuild.Options{Tenant: "killed"})
	h.onChat.Store(nil)
	if err == nil || rep.Status != "interrupted" {
		t.Fatalf("killed run: %+v %v", rep, err)
	}
	if rep.Replaced != 1 {
		t.Errorf("the killed run finished %d owners, want 1", rep.Replaced)
	}
	resumed, err := rb.Run(ctx, rebuild.Options{Tenant: "killed"})
	if err != nil {
		t.Fatal(err)
	}
	if !resumed.Resumed || resumed.RunID != rep.RunID || resumed.OwnersSkipped != 1 || resumed.Replaced != 2 {
		t.Errorf("resumed run %+v (killed run %s)", resumed, rep.RunID)
	}
	for _, u := range users {
		if c, k := h.active(t, ctx, "clean", u), h.active(t, ctx, "killed", u); !slices.Equal(c, k) {
			t.Errorf("%s: clean %q, killed and resumed %q", u, c, k)
		}
	}
	if c, k := pgtest.Count(t, h.store.Pool(), "clean", `SELECT count(*) FROM memories`),
		pgtest.Count(t, h.store.Pool(), "killed", `SELECT count(*) FROM memories`); c != k {
		t.Errorf("memories: clean %d, killed and resumed %d", c, k)
	}
}

// TestRebuildNeverResurrects: an erased user stays erased, a hard-deleted memory is not
// derived again, and a deprecated one does not come back.
func TestRebuildNeverResurrects(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	const tenant = "rb3"
	h.addTurns(t, ctx, tenant, conversation("u1", "u2"))
	ms := h.memories(t, ctx, tenant, "u1")
	walnut := find(t, ms, "walnuts")
	if _, err := h.life.DeleteMemory(ctx, tenant, walnut.ID, "api:test"); err != nil {
		t.Fatal(err)
	}
	cycle := find(t, ms, "cycle")
	if _, err := h.ops.Deprecate(ctx, tenant, cycle.ID, "no longer true", "api:test"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.life.DeleteUser(ctx, tenant, "u2", "api:test"); err != nil {
		t.Fatal(err)
	}
	rep, err := h.rebuilder(t).Run(ctx, rebuild.Options{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Owners != 1 {
		t.Errorf("rebuild saw %d owners, want only u1", rep.Owners)
	}
	for _, q := range []string{`SELECT count(*) FROM memories WHERE user_id = 'u2'`, `SELECT count(*) FROM turns WHERE user_id = 'u2'`,
		`SELECT count(*) FROM owners WHERE user_id = 'u2'`} {
		if n := pgtest.Count(t, h.store.Pool(), tenant, q); n != 0 {
			t.Errorf("%s: %d", q, n)
		}
	}
	// Even a rebuild of the erased user by name finds nothing to bring back.
	if _, err := h.rebuilder(t).Run(ctx, rebuild.Options{Tenant: tenant, User: "u2"}); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.Count(t, h.store.Pool(), tenant, `SELECT count(*) FROM memories WHERE user_id = 'u2'`); n != 0 {
		t.Errorf("u2 has %d memories after a rebuild by name", n)
	}
	got := h.active(t, ctx, tenant, "u1")
	for _, g := range got {
		if strings.Contains(g, "walnuts") || strings.Contains(g, "cycle") {
			t.Errorf("rebuild brought back %q", g)
		}
	}
	if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "active|LLM noted: My brother Tomas") }) {
		t.Errorf("u1 was not rebuilt: %q", got)
	}
}

// TestRebuildBlocksOneOwnerOnly: while the rebuild holds one owner's lock, the live
// pipeline goes on for the others; a live turn of the owner being rebuilt is resolved
// after it, against the rebuilt memories.
func TestRebuildBlocksOneOwnerOnly(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	const tenant = "rb4"
	h.addTurns(t, ctx, tenant, conversation("u1", "u2"))
	hook := func() {
		// Inside u1's locked transaction: u2's live turn goes all the way through.
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		h.addTurns(t, dctx, tenant, []map[string]any{{"turn_id": "u2-live", "user_id": "u2", "session_id": "s3",
			"role": "user", "content": "I started learning the cello this spring.", "occurred_at": t0.Add(24 * time.Hour)}})
	}
	if _, err := h.rebuilderWith(t, hook).Run(ctx, rebuild.Options{Tenant: tenant, User: "u1"}); err != nil {
		t.Fatal(err)
	}
	if got := h.active(t, ctx, tenant, "u2"); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "cello") }) {
		t.Errorf("u2's live turn was not resolved during u1's rebuild: %q", got)
	}
	// A live turn of u1 after the rebuild joins the rebuilt memories.
	h.addTurns(t, ctx, tenant, []map[string]any{{"turn_id": "u1-live", "user_id": "u1", "session_id": "s3",
		"role": "user", "content": "I started learning the cello this spring.", "occurred_at": t0.Add(24 * time.Hour)}})
	got := h.active(t, ctx, tenant, "u1")
	if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "cello") }) ||
		!slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "active|LLM noted: ") }) {
		t.Errorf("u1 after the rebuild and a live turn: %q", got)
	}
}

// TestRebuildModelOutageFailsTheOwner: when the model fails during an owner's
// extraction, that owner keeps its memories, the others are rebuilt, and the next run
// resumes with the failed owner only.
func TestRebuildModelOutageFailsTheOwner(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	const tenant = "rb5"
	h.addTurns(t, ctx, tenant, conversation("u1", "u2"))
	offline := h.active(t, ctx, tenant, "u1")
	h.fake.QueueChat(fakeopenai.Reply{Status: 503, Content: "overloaded"})
	rb := h.rebuilder(t)
	rep, err := rb.Run(ctx, rebuild.Options{Tenant: tenant})
	if err == nil || rep.Status != "failed" || len(rep.Errors) != 1 || rep.Errors[0]["user_id"] != "u1" || rep.Replaced != 1 {
		t.Fatalf("run with a model outage: %+v %v", rep, err)
	}
	if got := h.active(t, ctx, tenant, "u1"); !slices.Equal(got, offline) {
		t.Errorf("u1's memories changed in a failed rebuild: %q, were %q", got, offline)
	}
	again, err := rb.Run(ctx, rebuild.Options{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Resumed || again.RunID != rep.RunID || again.OwnersSkipped != 1 || again.Replaced != 1 {
		t.Errorf("resumed run %+v", again)
	}
	if got := h.active(t, ctx, tenant, "u1"); slices.Equal(got, offline) {
		t.Errorf("u1 was not rebuilt by the resumed run: %q", got)
	}
}

// TestRebuildSince: only the turns since the given time are derived again; memories
// of earlier turns are kept as they are.
func TestRebuildSince(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t, ctx)
	const tenant = "rb6"
	h.addTurns(t, ctx, tenant, conversation("u1"))
	since := t0.Add(3 * time.Hour) // the second session
	rep, err := h.rebuilder(t).Run(ctx, rebuild.Options{Tenant: tenant, Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 6 || rep.Kept == 0 || rep.Replaced != 1 {
		t.Errorf("report %+v", rep)
	}
	for _, m := range h.memories(t, ctx, tenant, "u1") {
		if m.Status != memory.StatusActive {
			continue
		}
		// Turns 0-2 (and their replies) are the first session's.
		early := slices.ContainsFunc(m.TurnIDs, func(id string) bool { return id[len(id)-1] < '3' })
		if llmMade := strings.HasPrefix(m.Content, "LLM noted: "); llmMade == early {
			t.Errorf("memory %q from turns %v: rebuilt %v", m.Content, m.TurnIDs, llmMade)
		}
	}
	// A later run with another --since is another run, not a resumption.
	later := since.Add(time.Hour)
	again, err := h.rebuilder(t).Run(ctx, rebuild.Options{Tenant: tenant, Since: &later})
	if err != nil || again.Resumed || again.RunID == rep.RunID || again.Replaced != 0 {
		t.Errorf("second run %+v %v", again, err)
	}
}
