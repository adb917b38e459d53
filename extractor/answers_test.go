package extractor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// extractLast extracts the last of turns, the turns before it as the batch's window.
func extractLast(t *testing.T, turns []memory.Turn) []memory.Candidate {
	t.Helper()
	n := len(turns)
	cands, err := NewOffline().Extract(context.Background(), Batch{Tenant: "acme", UserID: "u1", Window: turns[:n-1], New: turns[n-1:]})
	if err != nil {
		t.Fatal(err)
	}
	return cands
}

// TestAnswerFrames: a short reply to the assistant's question fills the slot the question
// asked about; a reply that says no, a long reply or one that is a statement of its own is
// read as it is.
func TestAnswerFrames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		before     []string // earlier turns, "A: " for the assistant's
		question   string
		reply      string
		key, holds string // key "" with holds "": no candidate may have keyOf
		keyOf      string
	}{
		{"name", nil, "Before we start, what should I call you?", "Just Bram.", "user.name", "Bram", ""},
		{"city", nil, "Sure thing. Where are you based these days?", "Rotterdam", "user.location", "Rotterdam", ""},
		{"origin", nil, "Where are you originally from?", "Cork", "user.origin", "Cork", ""},
		{"job with its place", nil, "And what do you do, out of interest?", "pharmacist at a small chain", "user.role", "pharmacist", ""},
		{"pet's name", nil, "Cute! What's your parrot's name?", "Kiwi!", "pet.parrot.name", "Kiwi", ""},
		{"name by a pronoun", []string{"My nephew is visiting next week."}, "Lovely. What's his name?", "Teodor", "relation.nephew.name", "Teodor", ""},
		{"birthday", nil, "When's your birthday?", "October 2nd", "user.birthday", "October 2nd", ""},
		{"yes to a diet", nil, "Are you vegetarian?", "yes, since college", "food.diet", "vegetarian", ""},
		{"no with the new value", []string{"A: Noted."}, "Still in Ghent?", "nope, Antwerp now", "user.location", "Antwerp", ""},
		{"a bare no fills nothing", nil, "Any allergies?", "no", "", "", "allergy.no"},
		{"yes to a tag question", nil, "Your dog's name is Biscotti, right?", "yep", "pet.dog.name", "Biscotti", ""},
		{"no to a tag question", nil, "You're based in Leipzig, correct?", "no", "", "", "user.location"},
		{"yes to a tag question zh", nil, "您住在苏州吧？", "对", "user.location", "苏州", ""},
		{"yes to a confirmation", nil, "Just to confirm, you're based in Aarhus?", "Yes, since the spring.", "user.location", "Aarhus", ""},
		{"but to a confirmation", nil, "To confirm, you live in Aarhus?", "Yes but not for long.", "", "", "user.location"},
		{"yes to a confirmation zh", nil, "再确认下，您住在无锡吗？", "对，住了三年了", "user.location", "无锡", ""},
		{"a long reply is its own statement", nil, "Where are you based?",
			"honestly it changes a lot because I travel for work and stay with friends most of the year", "", "", "user.location"},
		{"no question, no frame", nil, "Here is the list you asked for.", "Thursday", "", "", "user.birthday"},
		{"a refusal is no place", nil, "Where are you based?", "rather not say", "", "", "user.location"},
		{"a shrug is no tool", nil, "Which browser do you use?", "whatever came with the laptop", "", "", "user.attr.browser"},
		{"a shrug is no name zh", nil, "请问怎么称呼？", "都行", "", "", "user.name"},
		{"a refusal is no place zh", nil, "你住在哪里？", "这个保密", "", "", "user.location"},
		{"name zh", nil, "请问您怎么称呼？", "叫我小邓就好", "user.name", "小邓", ""},
		{"city zh", nil, "你现在住在哪个城市？", "昆明，去年搬过来的", "user.location", "昆明", ""},
		{"pet by a pronoun zh", []string{"我家兔子这两天不爱动。"}, "它叫啥？", "团团", "pet.rabbit.name", "团团", ""},
		{"job zh", nil, "请问你从事什么行业？", "做物流的", "user.role", "物流", ""},
		{"left for another employer zh", nil, "你现在还在华为上班吗？", "没有，前段时间去了小米", "user.employer", "小米", ""},
		{"no alone zh", nil, "你还在华为上班吗？", "不在了", "", "", "user.employer"},
	}
	ref := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var turns []memory.Turn
			add := func(role memory.Role, text string) {
				turns = append(turns, memory.Turn{TurnID: "t" + string(rune('a'+len(turns))), UserID: "u1", Role: role,
					Content: text, OccurredAt: ref.Add(time.Duration(len(turns)) * time.Minute)})
			}
			for _, b := range tt.before {
				if a, ok := strings.CutPrefix(b, "A: "); ok {
					add(memory.RoleAssistant, a)
				} else {
					add(memory.RoleUser, b)
				}
			}
			add(memory.RoleAssistant, tt.question)
			add(memory.RoleUser, tt.reply)
			n := len(turns)
			cands := extractLast(t, turns)
			keys := byKey(cands)
			if tt.keyOf != "" {
				if c, ok := keys[tt.keyOf]; ok {
					t.Fatalf("%q → %q has a %s candidate: %q", tt.question, tt.reply, tt.keyOf, c.Content)
				}
				return
			}
			c, ok := keys[tt.key]
			if !ok {
				t.Fatalf("%q → %q: no %s candidate in %+v", tt.question, tt.reply, tt.key, cands)
			}
			if !strings.Contains(c.Content, tt.holds) {
				t.Errorf("%s candidate %q lacks %q", tt.key, c.Content, tt.holds)
			}
			if c.SourceTurnIDs[0] != turns[n-1].TurnID {
				t.Errorf("source %v, want the reply %s", c.SourceTurnIDs, turns[n-1].TurnID)
			}
		})
	}
}

// TestGatePassesAnswers: the gate keeps a one-word reply that answers a question, and
// still skips the same word said without one.
func TestGatePassesAnswers(t *testing.T) {
	t.Parallel()
	g := NewGate()
	q := memory.Turn{Role: memory.RoleAssistant, Content: "What's your hamster called?"}
	reply := memory.Turn{Role: memory.RoleUser, Content: "Biscotti"}
	if r := g.CheckWith(reply, []memory.Turn{q}); !r.Pass {
		t.Errorf("answer skipped: %+v", r)
	}
	if r := g.CheckWith(reply, []memory.Turn{{Role: memory.RoleAssistant, Content: "Here you go."}}); r.Pass {
		t.Errorf("a word without a question passed: %+v", r)
	}
}

// TestChatShorthand: typed-chat spellings read as their written forms; names, "i.e." and
// words that only look like shorthand stay.
func TestChatShorthand(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"im a welder in ohio lol", "I'm a welder in ohio"},
		{"i dont drink coffee bc it keeps me up", "I don't drink coffee because it keeps me up"},
		{"ive got two kids tbh.", "I've got two kids."},
		{"IM me later, i.e. tonight", "IM me later, i.e. tonight"},
		{"The ill cat is fine", "The ill cat is fine"},
	}
	for _, tt := range tests {
		if got := chatEN(tt.in); got != tt.want {
			t.Errorf("chatEN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestNumberedSteps: a numbered list on one line, or one step a line, is one procedure in
// order; numbers that are not a list still end their sentence.
func TestNumberedSteps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, text, holds string }{
		{"inline", "Closing the shop: 1) count the till 2) lock the back door 3) set the alarm", "count the till, lock the back door, then set the alarm"},
		{"one a line", "To renew a cert:\n1. generate the CSR\n2. send it to security\n3. install the new cert", "generate the CSR, send it to security, then install the new cert"},
		{"zh", "月底对账：1、导出流水 2、核对发票 3、发给会计", "导出流水"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cands := extractOne(t, memory.Turn{Content: tt.text})
			for _, c := range cands {
				if c.Type == memory.Procedural && strings.Contains(c.Content, tt.holds) {
					return
				}
			}
			t.Errorf("%q: no procedure holding %q in %+v", tt.text, tt.holds, cands)
		})
	}
	if cands := extractOne(t, memory.Turn{Content: "Memo to self: book the boiler service before October."}); len(cands) == 0 ||
		!strings.Contains(cands[0].Content, "boiler service") {
		t.Errorf("a note to self was not kept: %+v", cands)
	}
	if got := splitSentences("My cat is 3. She sleeps all day."); len(got) != 2 {
		t.Errorf("an age before a full stop joined two sentences: %q", got)
	}
}

// TestShortSelfFacts: a few words about what the speaker is or has are a standing fact;
// a mood in as few words is not, and a word for a kind of person is no name.
func TestShortSelfFacts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text, holds string
	}{
		{"I'm an early bird.", "early bird"},
		{"We rent a two-bed in town.", "rent"},
		{"我有三个孙子。", "三个孙子"},
		{"我在考驾照。", "驾照"},
		{"我是上班族。", "上班族"},
	} {
		var got []string
		for _, c := range extractOne(t, memory.Turn{Content: tt.text}) {
			if c.Key == "user.name" {
				t.Errorf("%q named the user: %q", tt.text, c.Content)
			}
			got = append(got, c.Content)
		}
		if !strings.Contains(strings.Join(got, "|"), tt.holds) {
			t.Errorf("%q: no memory holding %q in %q", tt.text, tt.holds, got)
		}
	}
	if cands := extractOne(t, memory.Turn{Content: "I'm so sleepy."}); len(cands) > 0 {
		t.Errorf("a mood was kept: %+v", cands)
	}
}

// TestCorrectionsByShape: a correction that gives only the new value replaces the value of
// the same shape in the user's statement before it, and says which value it replaces.
func TestCorrectionsByShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, fix, key, holds, corrects string
	}{
		{"date", "My passport expires on March 3rd.", "Sorry, I meant March 13th.", "", "March 13th", "March 3rd"},
		{"weekday", "The plumber comes on Tuesday.", "No wait, Wednesday.", "", "Wednesday", "Tuesday"},
		{"code", "My membership number is 55120.", "typo, it's 55210", "user.attr.membership_number", "55210", "55120"},
		{"name", "My landlord is called Patrice.", "Correction: not Patrice, Beatrice.", "", "Beatrice", "Patrice"},
		{"name zh", "我的房东叫李刚。", "打错了，是李钢。", "", "李钢", "李刚"},
		{"date zh", "我女儿生日是5月20号。", "说错了，是5月2号。", "", "5月2号", "5月20号"},
		{"place off zh", "春游定在香山吧。", "香山不行了，改去八大处。", "", "八大处", "香山"},
		{"place off", "Let's hold the workshop in Ghent.", "Ghent's off, we're doing Bruges instead.", "", "Bruges", "Ghent"},
	}
	ref := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			turns := []memory.Turn{
				{TurnID: "ta", UserID: "u1", Role: memory.RoleUser, Content: tt.before, OccurredAt: ref},
				{TurnID: "tb", UserID: "u1", Role: memory.RoleAssistant, Content: "Noted.", OccurredAt: ref.Add(time.Minute)},
				{TurnID: "tc", UserID: "u1", Role: memory.RoleUser, Content: tt.fix, OccurredAt: ref.Add(2 * time.Minute)},
			}
			cands := extractLast(t, turns)
			for _, c := range cands {
				if strings.Contains(c.Content, tt.holds) && (tt.key == "" || c.Key == tt.key) {
					if got, _ := c.Metadata["corrects"].(string); got != tt.corrects {
						t.Errorf("%q corrects %q, want %q", c.Content, got, tt.corrects)
					}
					return
				}
			}
			t.Errorf("%q after %q: no memory holding %q in %+v", tt.fix, tt.before, tt.holds, cands)
		})
	}
	// A question after a cue corrects nothing.
	if got := NewOffline().corrected(memory.Turn{Role: memory.RoleUser, Content: "No wait, is Friday the 9th?"},
		[]memory.Turn{{Role: memory.RoleUser, Content: "The plumber comes on Thursday."}}); got.Content != "No wait, is Friday the 9th?" {
		t.Errorf("a question was read as a correction: %q", got.Content)
	}
	// Without a value of the same shape before it, a correction is left as told.
	o := NewOffline()
	if got := o.corrected(memory.Turn{Role: memory.RoleUser, Content: "Sorry, I meant Friday."},
		[]memory.Turn{{Role: memory.RoleUser, Content: "I love jazz."}}); got.Content != "Sorry, I meant Friday." {
		t.Errorf("rewritten without a value to replace: %q", got.Content)
	}
}
