package extractor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

func llmBatch() extractor.Batch {
	return extractor.Batch{
		Tenant: tenant, UserID: user, AgentID: "agent-1", SessionID: "s1",
		Window: []memory.Turn{userTurn("w1", "s1", -10, "I'm planning the Q2 offsite.")},
		New: []memory.Turn{
			userTurn("n1", "s1", 0, "Book it for next Friday, and remember I'm vegetarian."),
			assistantTurn("n2", "s1", 1, "Our premium plan costs $49 per month and includes offsite planning."),
			userTurn("n3", "s1", 2, "I'll be in Berlin until tomorrow."),
		},
	}
}

// TestLLMExtractValidation: replies are mapped, normalised and validated; an invalid reply
// gets exactly one corrective retry.
func TestLLMExtractValidation(t *testing.T) {
	t.Parallel()
	veg := mem{Type: "semantic", Category: "constraint", Key: ptr("food.diet"), Content: "The user is vegetarian.",
		Importance: 0.8, Confidence: 0.9, SourceTurnIDs: []string{"n1"}, ValidFrom: "2025-03-10T09:00:00+08:00", Speaker: "user"}
	bad := func(f func(*mem)) mem { m := veg; f(&m); return m }
	tests := []struct {
		name      string
		replies   []string
		cfg       extractor.LLMConfig
		wantCalls int
		wantErr   string // substring of a permanent error; "" for success
		check     func(t *testing.T, cands []memory.Candidate)
	}{
		{name: "normalised",
			replies: []string{reply(
				bad(func(m *mem) { m.Key = ptr(" Food.Diet "); m.Type = "Semantic" }),
				veg, // a repeat is dropped
				mem{Type: "episodic", Category: "event", Content: "The user is in Berlin until tomorrow.", Importance: 0.4,
					Confidence: 0.9, SourceTurnIDs: []string{"n3"}, ValidFrom: "2025-03-10", ExpireAt: ptr("2025-03-12"), Speaker: "user"},
				mem{Type: "semantic", Category: "fact", Content: "The assistant stated that the premium plan costs $49 per month.",
					Importance: 0.4, Confidence: 0.6, SourceTurnIDs: []string{"n3", "n2", "n2"}, ValidFrom: "2025-03-10T09:01:00+08:00", Speaker: "assistant"},
			)},
			wantCalls: 1,
			check: func(t *testing.T, cands []memory.Candidate) {
				if len(cands) != 3 {
					t.Fatalf("%d candidates: %+v", len(cands), cands)
				}
				if c := cands[0]; c.Key != "food.diet" || c.Type != memory.Semantic || c.Source != memory.SourceUser || !c.Trusted ||
					c.Extractor != "llm" || c.ExtractorVersion != "1.0.0" || c.Model != fakeModel || c.AgentID != "agent-1" || c.ID != "" {
					t.Errorf("first %+v", c)
				}
				trip := cands[1]
				if !strings.Contains(trip.Content, "tomorrow (2025-03-11)") {
					t.Errorf("relative date left unresolved: %q", trip.Content)
				}
				if want := time.Date(2025, 3, 10, 0, 0, 0, 0, cst); !trip.ValidFrom.Equal(want) || trip.ExpireAt == nil ||
					!trip.ExpireAt.Equal(time.Date(2025, 3, 12, 0, 0, 0, 0, cst)) {
					t.Errorf("trip valid %v expire %v", trip.ValidFrom, trip.ExpireAt)
				}
				if c := cands[2]; c.Trusted || c.Source != memory.SourceAssistant || !slices.Equal(c.SourceTurnIDs, []string{"n2", "n3"}) {
					t.Errorf("claim %+v", c)
				}
			}},
		{name: "fenced JSON", replies: []string{"```json\n" + reply(veg) + "\n```"}, wantCalls: 1,
			check: func(t *testing.T, cands []memory.Candidate) {
				if len(cands) != 1 {
					t.Errorf("%d candidates", len(cands))
				}
			}},
		{name: "assistant words attributed to the user are corrected",
			replies: []string{
				reply(mem{Type: "semantic", Category: "fact", Content: "The premium plan costs $49 per month.", Importance: 0.4,
					Confidence: 0.6, SourceTurnIDs: []string{"n2"}, ValidFrom: "2025-03-10", Speaker: "user"}),
				reply(mem{Type: "semantic", Category: "fact", Content: "The assistant stated that the premium plan costs $49 per month.",
					Importance: 0.4, Confidence: 0.6, SourceTurnIDs: []string{"n2"}, ValidFrom: "2025-03-10", Speaker: "assistant"}),
			},
			wantCalls: 2,
			check: func(t *testing.T, cands []memory.Candidate) {
				if len(cands) != 1 || cands[0].Source != memory.SourceAssistant || cands[0].Trusted {
					t.Errorf("candidates %+v", cands)
				}
			}},
		{name: "out of range twice", wantCalls: 2, wantErr: "importance: 1.5 is outside [0, 1]",
			replies: []string{reply(bad(func(m *mem) { m.Importance = 1.5 })), reply(bad(func(m *mem) { m.Importance = 1.5 }))}},
		{name: "unknown enum twice", wantCalls: 2, wantErr: `category: "hobby" is not a known category`,
			replies: []string{reply(bad(func(m *mem) { m.Category = "hobby" })), reply(bad(func(m *mem) { m.Category = "hobby" }))}},
		{name: "bad date twice", wantCalls: 2, wantErr: "valid_from",
			replies: []string{reply(bad(func(m *mem) { m.ValidFrom = "next Friday" })), reply(bad(func(m *mem) { m.ValidFrom = "10/03/2025" }))}},
		{name: "expiry before start twice", wantCalls: 2, wantErr: "is not after valid_from",
			replies: []string{reply(bad(func(m *mem) { m.ExpireAt = ptr("2025-03-01") })), reply(bad(func(m *mem) { m.ExpireAt = ptr("2025-03-01") }))}},
		{name: "content too long twice", wantCalls: 2, wantErr: "more than 1000",
			replies: []string{reply(bad(func(m *mem) { m.Content = strings.Repeat("长", 1001) })), reply(bad(func(m *mem) { m.Content = strings.Repeat("长", 1001) }))}},
		{name: "missing memories twice", wantCalls: 2, wantErr: `no "memories" array`,
			replies: []string{`{"items": []}`, `{}`}},
		{name: "most important kept", cfg: extractor.LLMConfig{MaxMemories: 2}, wantCalls: 1,
			replies: []string{reply(
				bad(func(m *mem) { m.Content, m.Importance = "A", 0.2 }),
				bad(func(m *mem) { m.Content, m.Importance = "B", 0.9 }),
				bad(func(m *mem) { m.Content, m.Importance = "C", 0.5 }),
			)},
			check: func(t *testing.T, cands []memory.Candidate) {
				if len(cands) != 2 || cands[0].Content != "B" || cands[1].Content != "C" {
					t.Errorf("candidates %+v", cands)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakeopenai.New(t)
			for _, r := range tt.replies {
				fake.QueueChat(fakeopenai.Reply{Content: r})
			}
			e := newLLM(t, fake, llm.ChatConfig{}, tt.cfg)
			cands, err := e.Extract(context.Background(), llmBatch())
			if got := fake.ChatCalls(); got != tt.wantCalls || e.LLMCalls() != int64(tt.wantCalls) {
				t.Errorf("%d calls (counted %d), want %d", got, e.LLMCalls(), tt.wantCalls)
			}
			if tt.wantErr != "" {
				// Not permanent: the worker decides whether the endpoint or the turn is at fault.
				if !errors.Is(err, llm.ErrInvalidReply) || streams.IsPermanent(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want an invalid-reply error containing %q", err, tt.wantErr)
				}
				// The corrective request carries the validation error.
				msgs := fake.ChatRequests()[1].Messages
				if last := msgs[len(msgs)-1].Content; !strings.Contains(last, "invalid") {
					t.Errorf("corrective message %q", last)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, cands)
		})
	}
}

// TestLLMRetryAfterHonoured: a 429 with Retry-After: 1 waits at least a second, inside the
// chat client, and then succeeds.
func TestLLMRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.QueueChat(fakeopenai.Reply{Status: 429, Headers: map[string]string{"Retry-After": "1"}, Content: "slow down"},
		fakeopenai.Reply{Content: reply()})
	e := newLLM(t, fake, llm.ChatConfig{}, extractor.LLMConfig{})
	start := time.Now()
	cands, err := e.Extract(context.Background(), llmBatch())
	if err != nil || len(cands) != 0 {
		t.Fatalf("cands %v, err %v", cands, err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, want at least the 1s Retry-After", d)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[1].Time.Sub(reqs[0].Time) < time.Second {
		t.Errorf("requests %d, want 2 at least 1s apart", len(reqs))
	}
	if e.LLMCalls() != 1 {
		t.Errorf("LLMCalls %d: HTTP retries are one call", e.LLMCalls())
	}
}

// TestLLMPrompt checks what the model is told: the rules, the context turns as context,
// the new turns with ids, roles and absolute times, and no secrets.
func TestLLMPrompt(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.QueueChat(fakeopenai.Reply{Content: reply()})
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := newLLM(t, fake, llm.ChatConfig{}, extractor.LLMConfig{Redactor: red})
	b := llmBatch()
	secret := "sk-" + "proj-" + "Xq7Lm2Pz9Rt4Vb8Nc3Kd6Hf1Jg5Ws0AeYuIoTrEwQzXcVbNm_Ab12"
	b.New[0].Content += " My OpenAI key is " + secret
	if _, err := e.Extract(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	req := fake.ChatRequests()[0]
	system, prompt := req.Messages[0].Content, req.Messages[1].Content
	for _, rule := range []string{"NEW turns", "CONTEXT", "occurred_at", "empty list", "hallucinate", "speaker \"assistant\"",
		"Never put passwords", "明天", "absolute date", "third person", "source_turn_ids"} {
		if !strings.Contains(system, rule) {
			t.Errorf("system prompt lacks %q", rule)
		}
	}
	if strings.Contains(prompt, secret) || !strings.Contains(prompt, "[REDACTED:") {
		t.Errorf("secret sent to the model:\n%s", prompt)
	}
	ctxPart, newPart, _ := strings.Cut(prompt, "NEW turns")
	if !strings.Contains(ctxPart, `"id":"w1"`) || strings.Contains(newPart, `"id":"w1"`) {
		t.Errorf("window turn not shown as context only:\n%s", prompt)
	}
	for _, want := range []string{`"id":"n1","role":"user","occurred_at":"2025-03-10T09:00:00+08:00","weekday":"Monday"`,
		`"id":"n2","role":"assistant"`, `"id":"n3"`} {
		if !strings.Contains(newPart, want) {
			t.Errorf("new turns lack %s:\n%s", want, newPart)
		}
	}
	if rf := req.ResponseFormat; rf == nil || rf.JSONSchema == nil || !rf.JSONSchema.Strict {
		t.Errorf("response format %+v", rf)
	}
}

// TestLLMSecretsInReplies: whatever the model writes, a secret does not reach CANDIDATES.
func TestLLMSecretsInReplies(t *testing.T) {
	t.Parallel()
	ghToken := "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
	m := func(content string) mem {
		return mem{Type: "semantic", Category: "fact", Content: content, Importance: 0.5, Confidence: 0.9,
			SourceTurnIDs: []string{"s1"}, ValidFrom: "2025-03-10T09:00:00+08:00", Speaker: "user"}
	}
	tests := []struct {
		name        string
		content     string
		wantContent string // "" when the candidate must be dropped
	}{
		{"only a secret", "The user's GitHub token is " + ghToken, ""},
		{"placeholder only", "用户的 GitHub token 是 [REDACTED:github_token]", ""},
		{"sentence around a secret", "The user deploys with the token " + ghToken + " every Friday after the code review.",
			"The user deploys with the token [REDACTED:github_token] every Friday after the code review."},
		// Mostly secret, but a clause beside it is worth keeping: only that clause is.
		{"clause beside the secrets", "The user's CI runs on Woodpecker, token " + ghToken + ", password hunter2hunter2",
			"The user's CI runs on Woodpecker"},
		{"chinese clause beside the secrets", "用户的报销卡是招商银行的，卡号 6225 8812 3456 7890，密码 918273",
			"用户的报销卡是招商银行的"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{batchQuiet: 50 * time.Millisecond})
			h.fake.QueueChat(fakeopenai.Reply{Content: reply(m(tt.content))})
			h.mustHandle(userTurn("s1", "s1", 0, "Remember: I deploy with the token "+ghToken+" every Friday."))
			cands := h.candidates()
			st := h.p.Stats()
			switch {
			case tt.wantContent == "" && (len(cands) != 0 || st.CandidatesDropped != 1):
				t.Errorf("candidates %+v, stats %+v; want it dropped", cands, st)
			case tt.wantContent != "" && (len(cands) != 1 || cands[0].Content != tt.wantContent):
				t.Errorf("candidates %+v, want content %q", cands, tt.wantContent)
			}
		})
	}
}

func TestNewLLMExtractorNeedsChat(t *testing.T) {
	t.Parallel()
	if _, err := extractor.NewLLMExtractor(nil, extractor.LLMConfig{}); err == nil {
		t.Fatal("no error for a nil chat client")
	}
	if _, err := extractor.NewPipeline(extractor.PipelineConfig{}); err == nil {
		t.Fatal("no error for an empty pipeline config")
	}
}
