package extractor

import (
	"testing"

	"github.com/engramhq/engram/memory"
)

func TestGateCheck(t *testing.T) {
	t.Parallel()
	user := func(s string) memory.Turn { return memory.Turn{Role: memory.RoleUser, Content: s} }
	asst := func(s string) memory.Turn { return memory.Turn{Role: memory.RoleAssistant, Content: s} }
	tool := func(status, task string) memory.Turn {
		return memory.Turn{Role: memory.RoleTool, TaskID: task, Tool: &memory.ToolCall{Name: "search", Status: status}}
	}
	tests := []struct {
		name   string
		turn   memory.Turn
		pass   bool
		signal string // one signal that must be reported when pass
	}{
		{"hi", user("hi"), false, ""},
		{"thanks", user("thanks!"), false, ""},
		{"ok", user("ok"), false, ""},
		{"haha", user("哈哈"), false, ""},
		{"nihao", user("你好"), false, ""},
		{"haode", user("好的"), false, ""},
		{"xiexie", user("谢谢"), false, ""},
		{"zaima", user("在吗"), false, ""},
		// No cue, yet a clause rule takes a fact: the gate keeps what the rules would keep.
		{"a car told by its purchase", user("车早就换了，上周刚提了一辆小鹏G6。你帮我查查保养周期吧。"), true, SignalFirstPerson},
		{"a question alone", user("这款车保养周期一般多久？"), false, ""},
		{"lol", user("lol"), false, ""},
		{"good morning", user("Good morning!"), false, ""},
		{"emoji only", user("👍👍 🎉"), false, ""},
		{"combined small talk", user("ok thanks, bye"), false, ""},
		{"zh combined small talk", user("好的好的，谢谢啦~"), false, ""},
		{"bukeqi is not a prohibition", user("不要客气"), false, ""},
		{"never mind", user("never mind"), false, ""},
		{"question", user("你记得我叫什么吗？"), false, ""},
		{"short no first person", user("天气不错"), false, ""},
		{"empty", user("  "), false, ""},
		{"remember", user("记住我下周三要去医院"), true, SignalRemember},
		{"remember en", user("Remember that I take my coffee black"), true, SignalRemember},
		{"zh prohibition", user("以后不要给我推荐日料"), true, SignalProhibition},
		{"zh preference", user("我更喜欢靠窗的座位"), true, SignalPreference},
		{"en preference", user("I prefer short answers"), true, SignalPreference},
		{"en love", user("I love hiking"), true, SignalPreference},
		{"en never", user("never call me after 9pm"), true, SignalProhibition},
		{"en avoid", user("please avoid jargon"), true, SignalProhibition},
		{"decision", user("最终决定用 React"), true, SignalDecision},
		{"en decision", user("we decided to drop the beta"), true, SignalDecision},
		{"reason", user("因为周四要交月报"), true, SignalReason},
		{"name", user("我叫刘洋"), true, SignalIdentity},
		{"i am", user("我是产品经理"), true, SignalIdentity},
		{"my x is", user("我的邮箱是wang@example.com"), true, SignalIdentity},
		{"en name", user("my name is Alice"), true, SignalIdentity},
		{"en live", user("I live in Lyon"), true, SignalIdentity},
		{"en work", user("I work at Acme"), true, SignalIdentity},
		{"constraint", user("预算不超过5000"), true, SignalConstraint},
		{"allergy", user("I'm allergic to walnuts"), true, SignalConstraint},
		{"deadline", user("the deadline is Friday"), true, SignalConstraint},
		{"must", user("必须用公司邮箱"), true, SignalConstraint},
		{"task", user("部署脚本已经修好了"), true, SignalTaskResult},
		{"procedure", user("如果支付接口报错，就先重试一次"), true, SignalProcedure},
		{"temporary state", user("这周我在柏林"), true, SignalTemporaryState},
		{"weak first person", user("I have been thinking about moving the team to a four day week"), true, SignalFirstPerson},
		{"weak first person zh", user("我最近一直在研究怎么把数据迁移到新集群上面"), true, SignalFirstPerson},
		{"small talk with signal", user("ok thanks, and remember I'm vegetarian"), true, SignalRemember},
		{"assistant price", asst("我们提供开发者社区免费高级版，年费 199 元"), true, SignalClaim},
		{"assistant policy", asst("Our refund policy allows returns within 30 days."), true, SignalClaim},
		{"assistant decision", asst("So we decided to ship on Monday."), true, SignalDecision},
		{"assistant chit-chat", asst("Sure! How can I help you today?"), false, ""},
		{"assistant preference words do not count", asst("I always love a good question!"), false, ""},
		{"assistant feel free", asst("Feel free to send more questions."), false, ""},
		{"tool failure", tool("failure", ""), true, SignalToolFailure},
		{"tool success with task", tool("success", "T-1"), true, SignalTaskResult},
		{"tool success alone", tool("success", ""), false, ""},
		{"system", memory.Turn{Role: memory.RoleSystem, Content: "always remember"}, false, ""},
		{"deleted", memory.Turn{Role: memory.RoleUser, Content: "remember this", Deleted: true}, false, ""},
	}
	g := NewGate()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := g.Check(tt.turn)
			if got.Pass != tt.pass {
				t.Fatalf("Check(%q) = %+v, want pass=%v", tt.turn.Content, got, tt.pass)
			}
			if got.Reason == "" {
				t.Errorf("no reason given")
			}
			if tt.pass && !containsString(got.Signals, tt.signal) {
				t.Errorf("signals = %v, want %s among them", got.Signals, tt.signal)
			}
			if !tt.pass && len(got.Signals) != 0 {
				t.Errorf("skipped turn reports signals %v", got.Signals)
			}
		})
	}
}

func TestGateCheckBatch(t *testing.T) {
	t.Parallel()
	fail := memory.Turn{TurnID: "1", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search", Status: "failure", Error: "timeout"}}
	other := memory.Turn{TurnID: "2", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "calendar", Status: "success"}}
	ok := memory.Turn{TurnID: "3", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search", Status: "success"}}
	again := memory.Turn{TurnID: "4", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search", Status: "success"}}
	claim := memory.Turn{TurnID: "5", Role: memory.RoleAssistant, Content: "The Pro plan costs $20 per month."}
	yes := memory.Turn{TurnID: "6", Role: memory.RoleUser, Content: "yes"}
	yesAgain := memory.Turn{TurnID: "7", Role: memory.RoleUser, Content: "yes"}

	got := NewGate().CheckBatch(Batch{Window: []memory.Turn{fail}, New: []memory.Turn{other, ok, again, claim, yes, yesAgain}})
	want := []struct {
		pass   bool
		signal string
	}{
		{true, SignalToolStep},     // another tool's success between a failure and its retry: the step that may have fixed it
		{true, SignalToolRecovery}, // success after the window's failure
		{false, ""},                // a second success recovers nothing
		{true, SignalClaim},        // a price
		{true, SignalConfirmation}, // "yes" answering the claim
		{false, ""},                // "yes" answering nothing
	}
	for i, w := range want {
		if got[i].Pass != w.pass || (w.pass && !containsString(got[i].Signals, w.signal)) {
			t.Errorf("turn %d: %+v, want pass=%v %s", i, got[i], w.pass, w.signal)
		}
	}
	if r := NewGate().Check(ok); r.Pass {
		t.Errorf("a success without context must not pass: %+v", r)
	}
}

func TestSplitSentences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"我叫刘洋。我住在上海！", []string{"我叫刘洋。", "我住在上海！"}},
		{"The price is 19.9 dollars. Ok?!", []string{"The price is 19.9 dollars.", "Ok?!"}},
		{"最终决定用B。因为便宜。", []string{"最终决定用B，因为便宜。"}},
		{"We chose Go. Because it is simple.", []string{"We chose Go, because it is simple."}},
		{"line one\nline two", []string{"line one", "line two"}},
	}
	for _, tt := range tests {
		got := splitSentences(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("splitSentences(%q)[%d] = %q, want %q", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}
