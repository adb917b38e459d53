package extractor_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Pools for the scripted conversation: what users and assistants mostly say is not worth
// remembering; a minority of user turns carry something durable.
var (
	smallTalk = []string{"hi", "thanks!", "ok", "好的", "谢谢", "哈哈", "got it", "嗯嗯", "cool, thanks", "早上好",
		"great 👍", "明白了", "sounds good", "收到", "bye"}
	requests = []string{"What's the capital of Australia?", "帮我翻译一下这句话：see you tomorrow", "今天天气怎么样？",
		"Can you summarize this article for me?", "How do I reverse a list in Python?", "给我讲个笑话吧",
		"What time is it in Tokyo now?", "这个函数为什么报错？"}
	signals = []string{"I'm allergic to walnuts.", "以后开会别安排在周五下午", "My name is Priya.",
		"I prefer a light theme in my terminal.", "我明天要去上海出差", "Remember that my manager is Bob.",
		"We decided to ship the beta on April 2.", "我是素食主义者", "I live in Porto.", "以后周报用中文写",
		"Never schedule calls before 10am.", "我女儿叫小雨", "I usually fly with window seats.", "预算不超过5000元"}
	replies = []string{"Sure, here you go.", "好的，没问题。", "Canberra is the capital of Australia.", "Here's a summary.",
		"Use reversed() or list[::-1].", "好的，我记下了。", "It is 3pm in Tokyo.", "这是因为变量没有初始化。", "Noted!"}
	claims = []string{"我们提供开发者社区免费高级版，年费 199 元", "Our Pro plan costs $20 per month and includes a free trial."}
)

// conversation scripts n turns of one session as bursts: each burst is 1–3 exchanges
// (a user turn and the assistant's reply) that reach engram together.
func conversation(rng *rand.Rand, session string, n int) [][]memory.Turn {
	var bursts [][]memory.Turn
	minute := 0
	for made := 0; made < n; {
		var burst []memory.Turn
		for ex := 1 + rng.IntN(3); ex > 0 && made < n; ex-- {
			var u string
			switch r := rng.Float64(); {
			case r < 0.45:
				u = smallTalk[rng.IntN(len(smallTalk))]
			case r < 0.75:
				u = requests[rng.IntN(len(requests))]
			default:
				u = signals[rng.IntN(len(signals))]
			}
			a := replies[rng.IntN(len(replies))]
			if rng.Float64() < 0.05 {
				a = claims[rng.IntN(len(claims))]
			}
			burst = append(burst,
				userTurn(fmt.Sprintf("%s-t%03d", session, made), session, minute, u),
				assistantTurn(fmt.Sprintf("%s-t%03d", session, made+1), session, minute+1, a))
			made += 2
			minute += 2
		}
		bursts = append(bursts, burst)
	}
	return bursts
}

// TestCostPerTurn runs a 200-turn scripted conversation over four sessions through the
// worker and the fake LLM, and reports LLM calls per turn: micro-batching and the gate
// must keep it at or below 0.3.
func TestCostPerTurn(t *testing.T) {
	t.Parallel()
	const sessions, perSession = 4, 50
	h := newHarness(t, harnessOpts{batchQuiet: 150 * time.Millisecond})
	h.fake.SetChatFunc(echoUserTurns(t))
	w := h.startWorker(streams.WorkerConfig{})

	rng := rand.New(rand.NewPCG(7, 42))
	var convs [][][]memory.Turn
	for s := range sessions {
		convs = append(convs, conversation(rng, fmt.Sprintf("s%d", s+1), perSession))
	}
	// Rounds: every session posts its next burst, then the conversation pauses until
	// engram has caught up (longer than BatchQuiet, as between real exchanges).
	total := 0
	for round := 0; ; round++ {
		posted := false
		for _, c := range convs {
			if round < len(c) {
				h.publishTurns(c[round]...)
				total += len(c[round])
				posted = true
			}
		}
		if !posted {
			break
		}
		// A liveness bound, not a timing: under -race beside every other package on two
		// cores a round has taken over 20 s.
		waitFor(t, 60*time.Second, "acks", func() bool { return w.Stats().Acked == int64(total) })
	}
	if total != sessions*perSession {
		t.Fatalf("scripted %d turns, want %d", total, sessions*perSession)
	}
	st := h.p.Stats()
	calls := h.fake.ChatCalls()
	perTurn := float64(calls) / float64(total)
	t.Logf("LLM calls per turn: %.3f (%d calls for %d turns; %d batches, %d turns skipped by the gate, %d candidates)",
		perTurn, calls, total, st.Batches, st.TurnsSkipped, st.CandidatesPublished)
	if perTurn > 0.3 {
		t.Errorf("%.3f LLM calls per turn, want at most 0.3", perTurn)
	}
	if st.LLMCalls != int64(calls) || w.Stats().DeadLettered != 0 {
		t.Errorf("pipeline stats %+v, worker stats %+v", st, w.Stats())
	}
}
