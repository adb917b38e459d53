package extractor_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
	openai "github.com/sashabaranov/go-openai"
)

// TestLLMPipelinePublishes runs turns through the real worker: a scripted extraction is
// parsed, validated and published with deterministic ids.
func TestLLMPipelinePublishes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.fake.QueueChat(fakeopenai.Reply{Content: reply(
		mem{Type: "semantic", Category: "constraint", Key: ptr("allergy.walnut"), Content: "The user is allergic to walnuts.",
			Importance: 0.9, Confidence: 0.95, SourceTurnIDs: []string{"u1"}, ValidFrom: "2025-03-10T09:00:00+08:00", Speaker: "user"},
		mem{Type: "episodic", Category: "event", Content: "用户 2025-03-11 下午三点要去看牙医。", Importance: 0.5, Confidence: 0.9,
			SourceTurnIDs: []string{"u2"}, ValidFrom: "2025-03-11", ExpireAt: ptr("2025-03-12T00:00:00+08:00"), Speaker: "user"},
	)})
	turns := []memory.Turn{
		userTurn("u1", "s1", 0, "I'm allergic to walnuts, please remember that."),
		assistantTurn("a1", "s1", 1, "Sure."),
		userTurn("u2", "s1", 2, "明天下午三点我要去看牙医，到时候提醒我一下"),
	}
	h.publishTurns(turns...)
	w := h.startWorker(streams.WorkerConfig{})
	waitFor(t, 20*time.Second, "acks", func() bool { return w.Stats().Acked == 3 })

	if n := h.fake.ChatCalls(); n != 1 {
		t.Fatalf("%d LLM calls, want 1", n)
	}
	req := h.fake.ChatRequests()[0]
	if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil {
		t.Errorf("request without a JSON schema: %+v", req.ResponseFormat)
	}
	if req.Model != fakeModel || !strings.Contains(req.Messages[0].Content, "memory extractor") {
		t.Errorf("model %q, system prompt %q", req.Model, req.Messages[0].Content)
	}
	got := newTurnsOf(t, req)
	// The gate kept the assistant's "Sure." from the model; the rest carry their absolute time.
	want := []promptTurn{
		{ID: "u1", Role: "user", OccurredAt: "2025-03-10T09:00:00+08:00", Content: turns[0].Content},
		{ID: "u2", Role: "user", OccurredAt: "2025-03-10T09:02:00+08:00", Content: turns[2].Content},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompt turns\n got %+v\nwant %+v", got, want)
	}

	cands := h.candidates()
	if len(cands) != 2 {
		t.Fatalf("%d candidates, want 2: %+v", len(cands), cands)
	}
	exp := time.Date(2025, 3, 12, 0, 0, 0, 0, cst)
	wantCands := []memory.Candidate{
		{ID: extractor.CandidateID([]string{"u1"}, 0, "llm", "1.0.0"), Tenant: tenant, UserID: user, SessionID: "s1",
			Scope: memory.ScopeUser, Type: memory.Semantic, Category: memory.CatConstraint, Key: "allergy.walnut",
			Content: "The user is allergic to walnuts.", Importance: 0.9, Confidence: 0.95, SourceTurnIDs: []string{"u1"},
			ValidFrom: base(), Source: memory.SourceUser, Trusted: true, Extractor: "llm", ExtractorVersion: "1.0.0", Model: fakeModel},
		{ID: extractor.CandidateID([]string{"u2"}, 0, "llm", "1.0.0"), Tenant: tenant, UserID: user, SessionID: "s1",
			Scope: memory.ScopeUser, Type: memory.Episodic, Category: memory.CatEvent,
			Content: "用户 2025-03-11 下午三点要去看牙医。", Importance: 0.5, Confidence: 0.9, SourceTurnIDs: []string{"u2"},
			ValidFrom: time.Date(2025, 3, 11, 0, 0, 0, 0, cst), ExpireAt: &exp, Source: memory.SourceUser, Trusted: true,
			Extractor: "llm", ExtractorVersion: "1.0.0", Model: fakeModel},
	}
	for i, c := range cands {
		if c.CreatedAt.IsZero() || c.CreatedAt.After(time.Now()) {
			t.Errorf("candidate %d created at %v", i, c.CreatedAt)
		}
		w := wantCands[i]
		if !c.ValidFrom.Equal(w.ValidFrom) || (c.ExpireAt == nil) != (w.ExpireAt == nil) || (c.ExpireAt != nil && !c.ExpireAt.Equal(*w.ExpireAt)) {
			t.Errorf("candidate %d valid from %v expire %v, want %v %v", i, c.ValidFrom, c.ExpireAt, w.ValidFrom, w.ExpireAt)
		}
		c.CreatedAt, c.ValidFrom, c.ExpireAt, c.Metadata = time.Time{}, time.Time{}, nil, nil
		w.ValidFrom, w.ExpireAt = time.Time{}, nil
		if !reflect.DeepEqual(c, w) {
			t.Errorf("candidate %d\n got %+v\nwant %+v", i, c, w)
		}
	}
	st := h.p.Stats()
	if st.TurnsStored != 3 || st.TurnsSkipped != 1 || st.Batches != 1 || st.LLMCalls != 1 || st.CandidatesPublished != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestLLMPipelineOutcomes covers what a batch's extraction can end in, per turn handler.
func TestLLMPipelineOutcomes(t *testing.T) {
	t.Parallel()
	signal := userTurn("u1", "s1", 0, "以后开会别安排在周五下午")
	tests := []struct {
		name          string
		replies       []fakeopenai.Reply
		wantCalls     int
		wantPermanent bool
		wantErr       bool
		wantCands     int
		wantInSecond  string // text the second request must contain
	}{
		{name: "empty list is an answer", replies: []fakeopenai.Reply{{Content: `{"memories": []}`}}, wantCalls: 1},
		{name: "corrected after one retry",
			replies: []fakeopenai.Reply{
				{Content: `{"memories": [{"type": "semantic"`},
				{Content: reply(mem{Type: "semantic", Category: "constraint", Key: ptr("meeting.avoid_time"), Content: "用户希望会议不要安排在周五下午。",
					Importance: 0.8, Confidence: 0.9, SourceTurnIDs: []string{"u1"}, ValidFrom: "2025-03-10T09:00:00+08:00", Speaker: "user"})},
			},
			wantCalls: 2, wantCands: 1, wantInSecond: "not valid JSON"},
		{name: "malformed twice is an invalid reply (the worker decides)",
			replies:   []fakeopenai.Reply{{Content: "Sure! Here are the memories: none"}, {Content: `{"memories": [`}},
			wantCalls: 2, wantErr: true, wantInSecond: "not valid JSON"},
		{name: "foreign source id twice is an invalid reply",
			replies: []fakeopenai.Reply{
				{Content: reply(mem{Type: "semantic", Category: "fact", Content: "x", Importance: 0.5, Confidence: 0.5, SourceTurnIDs: []string{"zz"}, ValidFrom: "2025-03-10", Speaker: "user"})},
				{Content: reply(mem{Type: "semantic", Category: "fact", Content: "x", Importance: 0.5, Confidence: 0.5, SourceTurnIDs: []string{"zz"}, ValidFrom: "2025-03-10", Speaker: "user"})},
			},
			wantCalls: 2, wantErr: true, wantInSecond: `"zz" is not the id of a NEW turn`},
		{name: "bad request is permanent without retry",
			replies:   []fakeopenai.Reply{{Status: 401, Content: "invalid api key"}},
			wantCalls: 1, wantErr: true, wantPermanent: true},
		{name: "server errors are retried by the worker",
			replies:   []fakeopenai.Reply{{Status: 503}, {Status: 503}, {Status: 503}},
			wantCalls: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{chat: llmChatRetries(2)})
			h.fake.QueueChat(tt.replies...)
			err := h.handleAll(signal)[0]
			if (err != nil) != tt.wantErr || streams.IsPermanent(err) != tt.wantPermanent {
				t.Fatalf("err %v (permanent %v), want error %v permanent %v", err, streams.IsPermanent(err), tt.wantErr, tt.wantPermanent)
			}
			if n := h.fake.ChatCalls(); n != tt.wantCalls {
				t.Errorf("%d LLM calls, want %d", n, tt.wantCalls)
			}
			if tt.wantInSecond != "" {
				second := h.fake.ChatRequests()[1].Messages
				last := second[len(second)-1]
				if last.Role != "user" || !strings.Contains(last.Content, tt.wantInSecond) {
					t.Errorf("corrective message %q does not contain %q", last.Content, tt.wantInSecond)
				}
				if prev := second[len(second)-2]; prev.Role != "assistant" || prev.Content != tt.replies[0].Content {
					t.Errorf("the invalid reply is not echoed: %+v", prev)
				}
			}
			if n := len(h.candidates()); n != tt.wantCands {
				t.Errorf("%d candidates, want %d", n, tt.wantCands)
			}
		})
	}
}

func llmChatRetries(n int) llm.ChatConfig { return llm.ChatConfig{MaxRetries: n} }

// TestInvalidReplyRecovers: a model answering invalid JSON (twice, so even the
// corrective retry fails) and then recovering costs the turn nothing: the worker holds
// it, extracts it again and acks it; nothing reaches the DLQ.
func TestInvalidReplyRecovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.fake.QueueChat(fakeopenai.Reply{Content: "not json"}, fakeopenai.Reply{Content: "still not json"})
	h.fake.SetChatFunc(echoUserTurns(t))
	h.publishTurns(userTurn("u1", "s1", 0, "Remember that I never drink coffee after 2pm."))
	w := h.startWorker(streams.WorkerConfig{MaxDeliver: 5})
	waitFor(t, 20*time.Second, "ack", func() bool { return w.Stats().Acked == 1 })
	if st := w.Stats(); st.DeadLettered != 0 || st.Held == 0 || st.Nacked != 0 {
		t.Fatalf("worker stats %+v: want the turn held, not redelivered or dead-lettered", st)
	}
	if n := len(h.candidates()); n != 1 {
		t.Fatalf("%d candidates, want 1", n)
	}
	if n := h.fake.ChatCalls(); n != 3 {
		t.Errorf("%d LLM calls, want 3 (invalid, corrective, valid)", n)
	}
}

// TestInvalidReplyForOneTurnIsDeadLettered: a reply that stays invalid for one turn while
// other turns are extracted is the turn's fault: it reaches the DLQ after the worker's
// bounded retries, the others are all stored.
func TestInvalidReplyForOneTurnIsDeadLettered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	echo := echoUserTurns(t)
	h.fake.SetChatFunc(func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "zanzibar") {
				return fakeopenai.Reply{Content: "not json"}
			}
		}
		return echo(req)
	})
	h.publishTurns(userTurn("bad", "s-bad", 0, "I would like to visit zanzibar."))
	w := h.startWorker(streams.WorkerConfig{MaxDeliver: 5, OutageBackoff: 10 * time.Millisecond, MaxOutageBackoff: 50 * time.Millisecond})
	waitFor(t, 20*time.Second, "bad turn held", func() bool { return w.Stats().Held >= 1 })
	for i := 0; w.Stats().DeadLettered == 0; i++ {
		if i > 500 {
			t.Fatal("the bad turn was never dead-lettered")
		}
		h.publishTurns(userTurn(fmt.Sprintf("ok%d", i), fmt.Sprintf("s%d", i), 0, "I prefer green tea in the morning."))
		time.Sleep(20 * time.Millisecond)
	}
	entries, err := streams.NewDLQ(h.js).List(testCtx(t), streams.DLQFilter{Stage: extractor.ExtractorStage})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Attempts != 1 || !strings.Contains(entries[0].Error, "while other messages succeeded") ||
		!strings.Contains(entries[0].Error, "corrective retry") {
		t.Fatalf("DLQ entries %+v", entries)
	}
}

// TestMicroBatching: turns published together in a session make one batch and one call;
// two sessions make two; chit-chat makes none.
func TestMicroBatching(t *testing.T) {
	t.Parallel()
	burst := []memory.Turn{
		userTurn("b1", "s1", 0, "I prefer window seats on flights."),
		userTurn("b2", "s1", 1, "My manager is Alice Chen."),
		userTurn("b3", "s1", 2, "我对花生严重过敏"),
		userTurn("b4", "s1", 3, "以后周报用中文写"),
		userTurn("b5", "s1", 4, "We decided to ship the beta on April 2."),
	}
	tests := []struct {
		name        string
		turns       []memory.Turn
		wantCalls   int
		wantSkipped int64
		wantBatches int64
	}{
		{"burst of five in one session", burst, 1, 0, 1},
		{"two sessions", []memory.Turn{
			userTurn("x1", "s1", 0, "I prefer tea over coffee."), userTurn("x2", "s2", 0, "我住在苏州"),
			userTurn("x3", "s1", 1, "Remember my daughter's name is Mia."), userTurn("x4", "s2", 1, "以后别在早上九点前给我发消息"),
		}, 2, 0, 2},
		{"small talk only", []memory.Turn{
			userTurn("c1", "s1", 0, "hi"), assistantTurn("c2", "s1", 1, "Hello! How can I help?"),
			userTurn("c3", "s1", 2, "谢谢！"), userTurn("c4", "s1", 3, "好的 👍"), userTurn("c5", "s1", 4, "thanks, bye"),
		}, 0, 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{})
			h.fake.SetChatFunc(echoUserTurns(t))
			// Published before the worker starts, so one pull takes them all, as after a
			// burst; batching then depends only on the handlers, not on publish timing.
			h.publishTurns(tt.turns...)
			w := h.startWorker(streams.WorkerConfig{})
			waitFor(t, 20*time.Second, "acks", func() bool { return w.Stats().Acked == int64(len(tt.turns)) })
			st := h.p.Stats()
			if n := h.fake.ChatCalls(); n != tt.wantCalls || st.LLMCalls != int64(tt.wantCalls) {
				t.Errorf("%d LLM calls (stats %d), want %d", n, st.LLMCalls, tt.wantCalls)
			}
			if st.TurnsSkipped != tt.wantSkipped || st.Batches != tt.wantBatches {
				t.Errorf("stats %+v, want %d skipped in %d batches", st, tt.wantSkipped, tt.wantBatches)
			}
			if n := len(h.candidates()); n != len(tt.turns)-int(tt.wantSkipped) {
				t.Errorf("%d candidates", n)
			}
		})
	}
}

// TestRedeliveryRepublishesSameIDs: a redelivered turn (already stored) is extracted
// again, with the same candidate ids, which the stream drops as duplicates; this holds
// even when the turn first came in a larger batch.
func TestRedeliveryRepublishesSameIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		offline bool
	}{{"llm", false}, {"offline", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{offline: tt.offline})
			if !tt.offline {
				h.fake.SetChatFunc(echoUserTurns(t))
			}
			batch := []memory.Turn{
				userTurn("r1", "s1", 0, "I prefer aisle seats."),
				userTurn("r2", "s1", 1, "我对芒果过敏，记住这一点"),
				userTurn("r3", "s1", 2, "My name is Dana."),
			}
			h.mustHandle(batch...)
			first := h.candidates()
			if len(first) == 0 {
				t.Fatal("no candidates")
			}
			// The crash case: r2 was stored and extracted, but its ack was lost.
			if err := h.p.Handle(testCtx(t), h.msg(batch[1], 2)); err != nil {
				t.Fatal(err)
			}
			after := h.candidates()
			if len(after) != len(first) {
				t.Errorf("%d candidates after redelivery, want the same %d", len(after), len(first))
			}
			st := h.p.Stats()
			var fromR2 int64
			for _, c := range first {
				if slices.Equal(c.SourceTurnIDs, []string{"r2"}) {
					fromR2++
				}
			}
			if fromR2 == 0 || st.TurnsStored != 3 || st.TurnsRedelivered != 1 || st.CandidatesDuplicate != fromR2 {
				t.Errorf("stats %+v; %d candidates from r2", st, fromR2)
			}
		})
	}
}

// TestOfflineEndToEnd covers the offline extractor through the pipeline: assistant
// claims and their confirmation, relative dates, and secrets.
func TestOfflineEndToEnd(t *testing.T) {
	t.Parallel()
	const claim = "我们提供开发者社区免费高级版，年费 199 元"
	ghToken := "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
	tests := []struct {
		name    string
		batches [][]memory.Turn // handled one after another
		check   func(t *testing.T, cands []memory.Candidate, st extractor.Stats)
	}{
		{name: "unconfirmed assistant claim is untrusted",
			batches: [][]memory.Turn{{
				userTurn("h1", "s1", 0, "你们有针对开发者的优惠吗？"),
				assistantTurn("h2", "s1", 1, claim),
			}},
			check: func(t *testing.T, cands []memory.Candidate, _ extractor.Stats) {
				c := only(t, cands, func(c memory.Candidate) bool { return strings.Contains(c.Content, "199") })
				if c.Trusted || c.Source != memory.SourceAssistant || !slices.Equal(c.SourceTurnIDs, []string{"h2"}) {
					t.Errorf("claim candidate %+v", c)
				}
			}},
		// Each turn is extracted with what came before it, so a claim and its
		// confirmation give the same candidates in one batch as in two: the claim,
		// untrusted, then the confirmation's trusted re-proposal of it.
		{name: "claim confirmed in the same batch",
			batches: [][]memory.Turn{{
				assistantTurn("h2", "s1", 1, claim),
				userTurn("h3", "s1", 2, "对"),
			}},
			check: checkConfirmedClaim},
		{name: "claim confirmed in a later batch",
			batches: [][]memory.Turn{
				{assistantTurn("h2", "s1", 1, claim)},
				{userTurn("h3", "s1", 2, "对")},
			},
			check: checkConfirmedClaim},
		{name: "relative date resolved against occurred_at",
			batches: [][]memory.Turn{{userTurn("d1", "s1", 0, "我明天要去上海出差")}},
			check: func(t *testing.T, cands []memory.Candidate, _ extractor.Stats) {
				c := only(t, cands, func(memory.Candidate) bool { return true })
				if !strings.Contains(c.Content, "2025-03-11") {
					t.Errorf("content %q lacks the absolute date 2025-03-11", c.Content)
				}
			}},
		{name: "a secret never reaches a candidate",
			batches: [][]memory.Turn{{
				userTurn("k1", "s1", 0, "记住我的 GitHub token 是 "+ghToken),
				userTurn("k2", "s1", 1, "Remember that I deploy with the token "+ghToken+" and always on Fridays after the review."),
			}},
			check: func(t *testing.T, cands []memory.Candidate, st extractor.Stats) {
				for _, c := range cands {
					if strings.Contains(c.Content, ghToken) || strings.Contains(c.Content, "Ab1Cd2Ef3") {
						t.Errorf("secret in candidate %q", c.Content)
					}
				}
				// k1 is nothing but the secret: dropped. k2 says more: kept, redacted.
				if st.CandidatesDropped != 1 {
					t.Errorf("%d candidates dropped as a secret, want 1: %+v", st.CandidatesDropped, cands)
				}
				c := only(t, cands, func(memory.Candidate) bool { return true })
				if !slices.Equal(c.SourceTurnIDs, []string{"k2"}) || !strings.Contains(c.Content, "[REDACTED:github_token]") {
					t.Errorf("candidate %+v, want k2's, redacted", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{offline: true, batchQuiet: 50 * time.Millisecond})
			for _, b := range tt.batches {
				h.mustHandle(b...)
			}
			cands := h.candidates()
			for _, c := range cands {
				if c.Extractor != extractor.OfflineName || c.Model != "" || c.ID == "" || c.Tenant != tenant {
					t.Errorf("candidate identity %+v", c)
				}
			}
			tt.check(t, cands, h.p.Stats())
		})
	}
}

// checkConfirmedClaim wants the claim h2 once untrusted and once trusted with its
// confirmation h3.
func checkConfirmedClaim(t *testing.T, cands []memory.Candidate, _ extractor.Stats) {
	t.Helper()
	var trusted, untrusted []memory.Candidate
	for _, c := range cands {
		switch {
		case !strings.Contains(c.Content, "199"):
		case c.Trusted:
			trusted = append(trusted, c)
		default:
			untrusted = append(untrusted, c)
		}
	}
	if len(trusted) != 1 || !slices.Equal(trusted[0].SourceTurnIDs, []string{"h2", "h3"}) || trusted[0].Source != memory.SourceAssistant {
		t.Errorf("trusted claim candidates %+v (all %+v)", trusted, cands)
	}
	if len(untrusted) != 1 || !slices.Equal(untrusted[0].SourceTurnIDs, []string{"h2"}) {
		t.Errorf("untrusted claim candidates %+v (all %+v)", untrusted, cands)
	}
}

// only returns the single candidate matching f.
func only(t *testing.T, cands []memory.Candidate, f func(memory.Candidate) bool) memory.Candidate {
	t.Helper()
	var got []memory.Candidate
	for _, c := range cands {
		if f(c) {
			got = append(got, c)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d matching candidates, want 1: %+v", len(got), cands)
	}
	return got[0]
}

// TestAbandonedBatchIsNotProcessed: when every handler waiting for a batch gives up (the
// worker's shutdown grace expired), the batch is dropped rather than extracted for nobody;
// the turns stay stored and will be redelivered.
func TestAbandonedBatchIsNotProcessed(t *testing.T) {
	t.Parallel()
	// A long quiet period: the batch must not flush between the turn being stored and
	// the cancellation below, however slow a loaded CI machine is. (A handler that saw its
	// cancellation before its AfterFunc ran once left the batch to be processed anyway.)
	const quiet = 3 * time.Second
	h := newHarness(t, harnessOpts{batchQuiet: quiet})
	h.fake.SetChatFunc(echoUserTurns(t))
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- h.p.Handle(ctx, h.msg(userTurn("z1", "s1", 0, "I prefer green tea."), 1)) }()
	waitFor(t, 10*time.Second, "the turn stored", func() bool { return h.p.Stats().TurnsStored == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the handler's cancellation", err)
	}
	time.Sleep(quiet + 500*time.Millisecond) // past BatchQuiet: the abandoned batch's timer is stopped
	if n := h.fake.ChatCalls(); n != 0 {
		t.Errorf("%d LLM calls for an abandoned batch", n)
	}
	if st := h.p.Stats(); st.TurnsStored != 1 || st.Batches != 0 {
		t.Errorf("stats %+v", st)
	}
	// The redelivery is processed normally.
	if err := h.p.Handle(testCtx(t), h.msg(userTurn("z1", "s1", 0, "I prefer green tea."), 2)); err != nil {
		t.Fatal(err)
	}
	if n := len(h.candidates()); n != 1 {
		t.Errorf("%d candidates after redelivery, want 1", n)
	}
}

// TestForgedTenantRefused: a turn whose body names another tenant than the subject it
// was published on (which is what NATS authorised) is dead-lettered, never stored.
func TestForgedTenantRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	m := h.msg(userTurn("f1", "s1", 0, "I prefer green tea."), 1)
	m.Subject, _ = streams.TurnSubject("other-tenant", "u1")
	err := h.p.Handle(testCtx(t), m)
	if !streams.IsPermanent(err) {
		t.Fatalf("err %v, want a permanent error", err)
	}
	if st := h.p.Stats(); st.TurnsStored != 0 {
		t.Fatalf("a forged turn was stored: %+v", st)
	}
}

// modelExtractor is an extractor that says it calls a model (it counts LLM calls).
type modelExtractor struct{ extractor.Extractor }

func (modelExtractor) LLMCalls() int64 { return 0 }

// TestBatchWindow is the window policy: the quiet window is for extractors that call a
// model, where it saves calls; without one a turn is extracted as soon as it is stored.
func TestBatchWindow(t *testing.T) {
	t.Parallel()
	offline := extractor.NewOffline()
	model := modelExtractor{offline}
	tests := []struct {
		name       string
		configured time.Duration
		ex         extractor.Extractor
		want       time.Duration
	}{
		{"offline default: a settle", 0, offline, extractor.DefaultSettle},
		{"model default: 300ms", 0, model, extractor.DefaultBatchQuiet},
		{"offline configured", 50 * time.Millisecond, offline, 50 * time.Millisecond},
		{"model configured", time.Second, model, time.Second},
		{"offline off", -1, offline, 0},
		{"model off", -1, model, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := extractor.BatchWindow(tt.configured, tt.ex); got != tt.want {
				t.Errorf("BatchWindow(%s) = %s, want %s", tt.configured, got, tt.want)
			}
		})
	}
}

// TestOfflineSameCandidatesHoweverBatched: the offline extractor's candidates for a
// conversation do not depend on how its turns were batched (which timing decides): all
// at once and concurrently, one by one, or split, the same candidates with the same ids
// are published. Turns handled concurrently get a quiet window of 50ms, so that every
// handler has registered its turn before the batch flushes however loaded the machine
// is; without one, batches follow the handlers' timing, which must not matter.
func TestOfflineSameCandidatesHoweverBatched(t *testing.T) {
	t.Parallel()
	tool := func(id string, minute int, status, errText, content string) memory.Turn {
		tr := turn(id, "s1", memory.RoleTool, minute, content)
		tr.Tool = &memory.ToolCall{Name: "deploy", Status: status, Error: errText}
		return tr
	}
	conv := []memory.Turn{
		userTurn("c1", "s1", 0, "I prefer aisle seats on long flights."),
		assistantTurn("c2", "s1", 1, "我们提供开发者社区免费高级版，年费 199 元"),
		userTurn("c3", "s1", 2, "对"),
		tool("c4", 3, "failure", "disk quota exceeded", "deploy failed"),
		assistantTurn("c5", "s1", 4, "I cleared the build cache and retried the deploy."),
		tool("c6", 5, "success", "", "deployed"),
		tool("c7", 6, "failure", "disk quota exceeded", "deploy failed"),
		tool("c8", 7, "success", "", "deployed"),
		userTurn("c9", "s1", 8, "以后周报用中文写"),
		userTurn("c10", "s1", 9, "My manager is Alice Chen."),
	}
	type key struct {
		id, content string
		trusted     bool
		sources     string
	}
	run := func(t *testing.T, quiet time.Duration, split ...int) []key {
		h := newHarness(t, harnessOpts{offline: true, batchQuiet: quiet})
		from := 0
		for _, to := range append(split, len(conv)) {
			h.mustHandle(conv[from:to]...)
			from = to
		}
		var out []key
		for _, c := range h.candidates() {
			out = append(out, key{c.ID, c.Content, c.Trusted, strings.Join(c.SourceTurnIDs, ",")})
		}
		slices.SortFunc(out, func(a, b key) int { return strings.Compare(a.id, b.id) })
		return out
	}
	oneByOne := make([]int, 0, len(conv)-1)
	for i := 1; i < len(conv); i++ {
		oneByOne = append(oneByOne, i)
	}
	want := run(t, -1, oneByOne...)
	if len(want) < 5 {
		t.Fatalf("only %d candidates: %+v", len(want), want)
	}
	tests := []struct {
		name  string
		quiet time.Duration
		split []int
	}{
		{"all at once", 50 * time.Millisecond, nil},
		{"split after the claim", 50 * time.Millisecond, []int{2}},
		{"split inside the recoveries", 50 * time.Millisecond, []int{4, 7}},
		{"one by one with the default settle", 0, oneByOne},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, tt.quiet, tt.split...); !reflect.DeepEqual(got, want) {
				t.Errorf("candidates\n%+v\nwant (one turn at a time)\n%+v", got, want)
			}
		})
	}
}
