package extractor

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

const priceClaim = "我们提供开发者社区免费高级版，年费 199 元"

// extractAndTrust runs the offline extractor and trust over one batch, as the pipeline does.
func extractAndTrust(t *testing.T, b Batch) []memory.Candidate {
	t.Helper()
	cands, err := NewOffline().Extract(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return ApplyTrust(b, cands)
}

func at(minute int) time.Time { return refMonday.Add(time.Duration(minute) * time.Minute) }

func TestTrustAssistantClaim(t *testing.T) {
	t.Parallel()
	claim := memory.Turn{TurnID: "a1", Role: memory.RoleAssistant, Content: priceClaim, OccurredAt: at(1)}
	reply := func(s string) memory.Turn {
		return memory.Turn{TurnID: "u2", Role: memory.RoleUser, Content: s, OccurredAt: at(2)}
	}
	tests := []struct {
		name    string
		b       Batch
		trusted bool
		ids     []string
	}{
		{"never confirmed", Batch{New: []memory.Turn{claim}}, false, []string{"a1"}},
		{"confirmed 对", Batch{New: []memory.Turn{claim, reply("对")}}, true, []string{"a1", "u2"}},
		{"confirmed 是的没错", Batch{New: []memory.Turn{claim, reply("是的，没错")}}, true, []string{"a1", "u2"}},
		{"confirmed yes", Batch{New: []memory.Turn{claim, reply("Yes, that's right.")}}, true, []string{"a1", "u2"}},
		{"confirmed exactly", Batch{New: []memory.Turn{claim, reply("exactly")}}, true, []string{"a1", "u2"}},
		{"corrected", Batch{New: []memory.Turn{claim, reply("不对，是 299 元")}}, false, []string{"a1"}},
		{"yes but", Batch{New: []memory.Turn{claim, reply("yes, but only for students")}}, false, []string{"a1"}},
		{"question back", Batch{New: []memory.Turn{claim, reply("对吗？")}}, false, []string{"a1"}},
		{"by the way is not yes", Batch{New: []memory.Turn{claim, reply("对了，我叫刘洋")}}, false, []string{"a1"}},
		{"yesterday is not yes", Batch{New: []memory.Turn{claim, reply("yesterday I paid 199")}}, false, []string{"a1"}},
		{"confirmation before the claim", Batch{New: []memory.Turn{
			{TurnID: "u0", Role: memory.RoleUser, Content: "对", OccurredAt: at(0)}, claim}}, false, []string{"a1"}},
		{"only the direct reply counts", Batch{New: []memory.Turn{claim,
			{TurnID: "u2", Role: memory.RoleUser, Content: "帮我看看天气", OccurredAt: at(2)},
			{TurnID: "u3", Role: memory.RoleUser, Content: "对", OccurredAt: at(3)}}}, false, []string{"a1"}},
		{"tool result backs the number", Batch{
			Window: []memory.Turn{{TurnID: "t0", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "pricing", Status: "success"},
				Content: `{"plan":"community-premium","annual_fee":199}`, OccurredAt: at(0)}},
			New: []memory.Turn{claim}}, true, []string{"a1", "t0"}},
		{"failed tool does not back", Batch{
			Window: []memory.Turn{{TurnID: "t0", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "pricing", Status: "failure"},
				Content: `annual_fee 199`, OccurredAt: at(0)}},
			New: []memory.Turn{claim}}, false, []string{"a1"}},
		{"different number does not back", Batch{
			Window: []memory.Turn{{TurnID: "t0", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "pricing", Status: "success"},
				Content: `annual_fee 1990`, OccurredAt: at(0)}},
			New: []memory.Turn{claim}}, false, []string{"a1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extractAndTrust(t, tt.b)
			var claims []memory.Candidate
			for _, c := range got {
				if c.Source == memory.SourceAssistant {
					claims = append(claims, c)
				}
			}
			if len(claims) != 1 {
				t.Fatalf("want one assistant claim, got %s", dump(got))
			}
			c := claims[0]
			if c.Trusted != tt.trusted || !reflect.DeepEqual(c.SourceTurnIDs, tt.ids) {
				t.Fatalf("trusted=%v ids=%v, want %v %v", c.Trusted, c.SourceTurnIDs, tt.trusted, tt.ids)
			}
			if c.Source != memory.SourceAssistant || c.Category != memory.CatFact {
				t.Errorf("source %q category %q", c.Source, c.Category)
			}
		})
	}
}

func TestTrustSources(t *testing.T) {
	t.Parallel()
	b := Batch{New: []memory.Turn{
		{TurnID: "u1", Role: memory.RoleUser, Content: "x"},
		{TurnID: "a1", Role: memory.RoleAssistant, Content: "y"},
		{TurnID: "t1", Role: memory.RoleTool, Content: "z"},
	}}
	in := []memory.Candidate{
		{Type: memory.Semantic, Source: memory.SourceUser, SourceTurnIDs: []string{"u1"}},
		{Type: memory.Semantic, Source: memory.SourceTool, SourceTurnIDs: []string{"t1"}},
		{Type: memory.Semantic, Source: memory.SourceManual},
		{Type: memory.Semantic, SourceTurnIDs: []string{"u1"}},                       // source inferred: user
		{Type: memory.Semantic, SourceTurnIDs: []string{"a1"}, Trusted: true},        // inferred: assistant
		{Type: memory.Semantic, SourceTurnIDs: []string{"elsewhere"}, Trusted: true}, // unknown origin
	}
	orig := make([]memory.Candidate, len(in))
	copy(orig, in)
	got := ApplyTrust(b, in)
	wantTrusted := []bool{true, true, true, true, false, false}
	wantSource := []memory.Source{memory.SourceUser, memory.SourceTool, memory.SourceManual, memory.SourceUser, memory.SourceAssistant, ""}
	for i := range got {
		if got[i].Trusted != wantTrusted[i] || got[i].Source != wantSource[i] {
			t.Errorf("%d: trusted=%v source=%q, want %v %q", i, got[i].Trusted, got[i].Source, wantTrusted[i], wantSource[i])
		}
	}
	if !reflect.DeepEqual(in, orig) {
		t.Errorf("ApplyTrust modified its input")
	}
}

func TestTrustProcedural(t *testing.T) {
	t.Parallel()
	fail := func(id string) memory.Turn {
		return memory.Turn{TurnID: id, Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "deploy", Status: "failure", Error: "lock held"}}
	}
	ok := func(id string) memory.Turn {
		return memory.Turn{TurnID: id, Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "deploy", Status: "success"}}
	}
	skill := func(src memory.Source, ids ...string) memory.Candidate {
		return memory.Candidate{Type: memory.Procedural, Category: memory.CatSkill, Source: src, SourceTurnIDs: ids,
			Confidence: 0.9, Metadata: map[string]any{"tool": "deploy"}}
	}
	tests := []struct {
		name    string
		turns   []memory.Turn
		cand    memory.Candidate
		trusted bool
		conf    float64
	}{
		{"one pair", []memory.Turn{fail("1"), ok("2")}, skill(memory.SourceTool, "1", "2"), true, 0.6},
		{"two pairs", []memory.Turn{fail("1"), ok("2"), fail("3"), fail("4"), ok("5")}, skill(memory.SourceTool, "1", "2", "3", "4", "5"), true, 0.8},
		{"success without failure", []memory.Turn{ok("1"), ok("2")}, skill(memory.SourceTool, "2"), false, 0.3},
		{"assistant claims a skill without evidence", []memory.Turn{{TurnID: "a", Role: memory.RoleAssistant, Content: "restart fixes it"}},
			memory.Candidate{Type: memory.Procedural, Source: memory.SourceAssistant, SourceTurnIDs: []string{"a"}, Confidence: 0.9}, false, 0.3},
		{"user instruction", []memory.Turn{{TurnID: "u", Role: memory.RoleUser, Content: "如果部署失败就先释放锁"}},
			memory.Candidate{Type: memory.Procedural, Source: memory.SourceUser, SourceTurnIDs: []string{"u"}, Confidence: 0.9}, true, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ApplyTrust(Batch{New: tt.turns}, []memory.Candidate{tt.cand})[0]
			if got.Trusted != tt.trusted || got.Confidence != tt.conf {
				t.Fatalf("trusted=%v conf=%.1f, want %v %.1f", got.Trusted, got.Confidence, tt.trusted, tt.conf)
			}
		})
	}
}

func TestIsConfirmation(t *testing.T) {
	t.Parallel()
	yes := []string{"对", "对的", "是的", "没错", "确实", "对，就是这个", "yes", "Yes!", "right", "exactly", "correct", "That's right", "yep", "是"}
	no := []string{"", "不对", "不是", "对吗？", "对了，顺便说一下", "yesterday", "no", "yes but no", "right?", "其实是299", "是不是", "好的"}
	for _, s := range yes {
		if !isConfirmation(s) {
			t.Errorf("isConfirmation(%q) = false", s)
		}
	}
	for _, s := range no {
		if isConfirmation(s) {
			t.Errorf("isConfirmation(%q) = true", s)
		}
	}
}

// TestTagQuestionClaim: an assistant's statement with a tag asking to confirm it ("…,
// right?", "…，对吧？") is a claim like any other: held until the user's reply confirms it,
// and passed by the gate so that the reply can. The sentences were written for this test.
func TestTagQuestionClaim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ claim, reply string }{
		{"Your annual plan renews on the 12th of each month, right?", "Yep, the 12th."},
		{"你的年卡是每年4月1号到期，对吧？", "对，4月1号。"},
	} {
		a := memory.Turn{TurnID: "a1", Role: memory.RoleAssistant, Content: tc.claim, OccurredAt: at(1)}
		u := memory.Turn{TurnID: "u2", Role: memory.RoleUser, Content: tc.reply, OccurredAt: at(2)}
		if r := NewGate().Check(a); !r.Pass {
			t.Errorf("%q: gate skips it (%s)", tc.claim, r.Reason)
		}
		for _, b := range []Batch{{New: []memory.Turn{a}}, {New: []memory.Turn{a, u}}} {
			var claims []memory.Candidate
			for _, c := range extractAndTrust(t, b) {
				if c.Source == memory.SourceAssistant {
					claims = append(claims, c)
				}
			}
			if len(claims) != 1 {
				t.Fatalf("%q: want one claim, got %s", tc.claim, dump(claims))
			}
			if want := len(b.New) == 2; claims[0].Trusted != want {
				t.Errorf("%q with %d turns: trusted %v, want %v", tc.claim, len(b.New), claims[0].Trusted, want)
			}
		}
	}
}
