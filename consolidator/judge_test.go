package consolidator_test

import (
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// judgeSetup gives a resolver whose judge is a chat model behind the fake server;
// reply computes the model's verdict from the memories it was shown.
func judgeSetup(t *testing.T, reply func(memories []map[string]any) consolidator.Verdict) (testDB, *consolidator.Resolver, *fakeopenai.Server) {
	t.Helper()
	fake := fakeopenai.New(t)
	fake.SetChatFunc(func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		var in struct {
			Memories []map[string]any `json:"memories"`
		}
		if err := json.Unmarshal([]byte(req.Messages[len(req.Messages)-1].Content), &in); err != nil {
			return fakeopenai.Reply{Content: "not json"}
		}
		b, _ := json.Marshal(reply(in.Memories))
		return fakeopenai.Reply{Content: string(b)}
	})
	chat, err := llm.NewChat(llm.ChatConfig{BaseURL: fake.URL(), Model: "judge", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestDB(t)
	return s, consolidator.NewResolver(s.Store, hashEmbedder(t), consolidator.NewLLMJudge(chat), consolidator.ResolverConfig{}, nil), fake
}

func TestJudgeCalledOnceWhenANeighbourIsClose(t *testing.T) {
	t.Parallel()
	s, r, fake := judgeSetup(t, func(ms []map[string]any) consolidator.Verdict {
		return consolidator.Verdict{Decision: "confirm", Target: ms[0]["id"].(string), Reason: "same preference"}
	})
	d1 := resolve(t, r, cand("u1", "The user drinks green tea every afternoon."), consolidator.KindAdd)
	if n := fake.ChatCalls(); n != 0 {
		t.Fatalf("%d judge calls for a first memory, want 0", n)
	}
	// Rules alone would call this a different fact (few shared words); the judge
	// knows it is the same habit.
	d2 := resolve(t, r, cand("u1", "Every afternoon the user has a cup of green tea."), consolidator.KindConfirm)
	if d2.MemoryID != d1.MemoryID || d2.By != "judge" {
		t.Fatalf("decision %+v", d2)
	}
	if n := fake.ChatCalls(); n != 1 {
		t.Fatalf("%d judge calls, want 1", n)
	}
	// Nothing near: no call.
	resolve(t, r, cand("u1", "用户的妹妹在伦敦读书"), consolidator.KindAdd)
	if n := fake.ChatCalls(); n != 1 {
		t.Fatalf("%d judge calls after an unrelated candidate, want still 1", n)
	}
	if got := detail(t, s, d1.MemoryID).Memory.ConfirmCount; got != 2 {
		t.Fatalf("confirm count %d, want 2", got)
	}
	// A redelivery is answered from the ledger, without asking again.
	c := cand("u1", "The user drinks green tea every afternoon, without sugar.")
	resolve(t, r, c, consolidator.KindConfirm)
	if d := resolve(t, r, c, consolidator.KindConfirm); !d.Replayed || fake.ChatCalls() != 2 {
		t.Fatalf("redelivery: %+v, %d calls", d, fake.ChatCalls())
	}
}

func TestJudgeUpdateUsesMergedContent(t *testing.T) {
	t.Parallel()
	merged := "The user is allergic to peanuts and carries an EpiPen."
	s, r, _ := judgeSetup(t, func(ms []map[string]any) consolidator.Verdict {
		return consolidator.Verdict{Decision: "update", Target: ms[0]["id"].(string), MergedContent: merged, Reason: "more detail"}
	})
	d1 := resolve(t, r, cand("u1", "The user is allergic to peanuts.", withKey("allergy.peanut")), consolidator.KindAdd)
	resolve(t, r, cand("u1", "The user carries an EpiPen for the peanut allergy.", withKey("allergy.peanut")), consolidator.KindUpdate)
	d := detail(t, s, d1.MemoryID)
	if d.Memory.Content != merged || len(d.Versions) != 2 || d.Versions[1].Change != memory.ChangeUpdate {
		t.Fatalf("memory %q, versions %+v", d.Memory.Content, d.Versions)
	}
}

func TestInvalidVerdictFallsBackToRules(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]consolidator.Verdict{
		"unknown target":   {Decision: "supersede", Target: "m9"},
		"unknown decision": {Decision: "merge", Target: "m1"},
		"update no merged": {Decision: "update", Target: "m1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, r, fake := judgeSetup(t, func([]map[string]any) consolidator.Verdict { return v })
			d1 := resolve(t, r, cand("u1", "I love Chinese food"), consolidator.KindAdd)
			d2 := resolve(t, r, cand("u1", "I really love Chinese food"), consolidator.KindConfirm)
			if d2.By != "rules" || d2.MemoryID != d1.MemoryID || fake.ChatCalls() != 1 {
				t.Fatalf("decision %+v after %d calls", d2, fake.ChatCalls())
			}
			if n := countMemories(t, s, "u1"); n != 1 {
				t.Fatalf("%d memories", n)
			}
		})
	}
	t.Run("not json", func(t *testing.T) {
		t.Parallel()
		fake := fakeopenai.New(t)
		fake.QueueChat(fakeopenai.Reply{Content: "I think they are the same"})
		chat, err := llm.NewChat(llm.ChatConfig{BaseURL: fake.URL(), Model: "judge", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := consolidator.NewResolver(pgtest.Store(t), hashEmbedder(t), consolidator.NewLLMJudge(chat), consolidator.ResolverConfig{}, nil)
		resolve(t, r, cand("u1", "I love Chinese food"), consolidator.KindAdd)
		resolve(t, r, cand("u1", "I hate Chinese food"), consolidator.KindSupersede)
		if fake.ChatCalls() != 1 {
			t.Fatalf("%d calls", fake.ChatCalls())
		}
	})
}
