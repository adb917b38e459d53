package extractor

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// The sentences below were written for these tests; none comes from an evaluation set.

// TestExpiryOfLastingAndSpanningStatements: a date a thing started at, or a giving-up,
// does not bound how long it holds; an event told with its span holds until the span ends.
func TestExpiryOfLastingAndSpanningStatements(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       string // expire_at of the first candidate, "" for none
	}{
		{"a giving-up beside a start date", "Started physio this month, so no more running for me.", ""},
		{"a deadline with a start not made", "The report is due this Friday and I haven't started it.", "2026-04-11"},
		{"a start told with since", "I've been vegetarian since last month.", ""},
		{"a giving-up zh", "这个月开始我不再喝咖啡了。", ""},
		{"an event spanning a week", "I have a training course next Tuesday and it runs the whole week.", "2026-04-21"},
		{"an event spanning days", "I fly to Madrid this Friday for three days.", "2026-04-13"},
		{"an event of one day", "I have a dentist appointment this Friday.", "2026-04-11"},
		{"a week on call", "I'm on call this week.", "2026-04-13"},
		{"a span's last day", "I'm working from the Lisbon office from the 14th to the 17th.", "2026-04-18"},
		{"a start on a day", "Our daughter starts swimming lessons on the 20th.", ""},
		{"sober as of a week", "Three months sober as of this week.", ""},
		{"a leave from a day zh", "下周三开始我休年假。", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extractOne(t, memory.Turn{Content: tt.text})
			if len(got) == 0 {
				t.Fatalf("%q: no memory", tt.text)
			}
			exp := ""
			if got[0].ExpireAt != nil {
				exp = got[0].ExpireAt.Format(time.DateOnly)
			}
			if exp != tt.want {
				t.Errorf("%q: expire_at %q, want %q (%s)", tt.text, exp, tt.want, dump(got))
			}
		})
	}
}

// TestDroppedSubjectIsTheSpeaker: a chat sentence that opens with a past verb is about the
// speaker, and what they sold or gave away is named for the resolver.
func TestDroppedSubjectIsTheSpeaker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, content, parted string
	}{
		{"Sold my old scooter to a student last week.", "The user sold", "scooter"},
		{"Gave away the old sofa, the new one arrives Monday.", "The user gave away", "sofa"},
		{"Finally got rid of our old printers.", "got rid of", "printer"},
		{"Went hiking in the Tatras with my cousins.", "The user went hiking", ""},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		found := false
		for _, c := range got {
			if strings.Contains(c.Content, tt.content) {
				found = true
			}
			if p, _ := c.Metadata["parted_with"].(string); p != tt.parted {
				t.Errorf("%q: parted_with %q, want %q", tt.text, p, tt.parted)
			}
		}
		if !found {
			t.Errorf("%q: no memory holding %q: %s", tt.text, tt.content, dump(got))
		}
	}
	if g := NewGate().Check(memory.Turn{Role: memory.RoleUser, Content: "Traded my old kayak for a paddleboard."}); !g.Pass {
		t.Errorf("the gate skipped a subjectless statement: %+v", g)
	}
}

// TestTimetableIsAStandingFact: a recurring time is a fact a later change replaces, where
// a one-off event is not.
func TestTimetableIsAStandingFact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		typ  memory.Type
	}{
		{"Mira's piano lessons are on Wednesdays at 4, so I leave work early that day.", memory.Semantic},
		{"Our book club meets every other Sunday at the library and I host it.", memory.Semantic},
		{"Last Wednesday I went to Mira's piano recital at the library and it was lovely.", memory.Episodic},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if len(got) == 0 || got[0].Type != tt.typ {
			t.Errorf("%q: want one %s memory first: %s", tt.text, tt.typ, dump(got))
		}
	}
}

// TestCorrectionCuesZH: "typed it wrong" and "the digits were swapped" correct a number.
func TestCorrectionCuesZH(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"之前的门牌号打错了，应该是2207。", "车牌号弄反了，是沪A7342。"} {
		got := extractOne(t, memory.Turn{Content: text})
		if len(got) == 0 {
			t.Fatalf("%q: no memory", text)
		}
		if v, _ := got[0].Metadata["corrects_like"].(string); v == "" {
			t.Errorf("%q: no corrects_like: %s", text, dump(got))
		}
	}
}

// TestStepsToldAsSuch: steps announced by a label ("here's the order:", 流程是：) are a
// procedure, with what they are for; a "you" in them is whoever does them.
func TestStepsToldAsSuch(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"Month-end close happens on the last Friday, so this is the process: reconcile the bank feed, export the ledger, then you email it to Farrah.",
			"month-end close happens on the last Friday"},
		{"This is my routine for flaky tests: rerun them twice, tag the owner, and open a ticket if they still fail.", "for flaky tests"},
		{"装修报价的流程是：先量房，再出图纸，最后让你确认预算。", "装修报价"},
		{"Step one is always a fresh branch off develop, then you run the linters.", "fresh branch"},
		{"If the nightly import stalls, page Rahim before restarting it.", "page Rahim"},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if len(got) == 0 || got[0].Type != memory.Procedural || !strings.Contains(got[0].Content, tt.want) {
			t.Errorf("%q: want a procedure holding %q first: %s", tt.text, tt.want, dump(got))
		}
	}
}

// TestStatementBeforeAQuestion: the clauses told before a question's last clause still
// state something; a question about the listener or a whole question states nothing.
func TestStatementBeforeAQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, want string // want "" for no memory
	}{
		{"My cousin Ilse is moving in for a month, where should she keep her bike?", "Ilse"},
		{"表弟周一鸣下周要来借住，这沙发床怎么铺啊？", "周一鸣"},
		{"Do you think I should sell the boat, or keep it?", ""},
		{"你觉得我该换工作，还是再等等？", ""},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if tt.want == "" {
			if len(got) > 0 {
				t.Errorf("%q: want no memory, got %s", tt.text, dump(got))
			}
			continue
		}
		found := false
		for _, c := range got {
			found = found || strings.Contains(c.Content, tt.want)
		}
		if !found {
			t.Errorf("%q: no memory holding %q: %s", tt.text, tt.want, dump(got))
		}
	}
}

func TestThirdSingularKeepsPrefixedPasts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"overpaid": "overpaid", "rebuilt": "rebuilt", "misread": "misread",
		"outgrew": "outgrew", "overcook": "overcooks", "prefer": "prefers", "need": "needs", "proceed": "proceeds",
		"agreed": "agreed"} {
		if got := thirdSingular(in); got != want {
			t.Errorf("thirdSingular(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCorrectedNumberWithSeparators: a corrected amount with thousands separators drops
// the whole wrong amount.
func TestCorrectedNumberWithSeparators(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "Oops, the deposit is $2,310, not 2,130, I mixed them up."})
	for _, c := range got {
		if strings.Contains(c.Content, "2,130") || strings.Contains(c.Content, "310,130") {
			t.Errorf("the wrong amount lives on: %q", c.Content)
		}
	}
	if len(got) == 0 || !strings.Contains(got[0].Content, "$2,310") {
		t.Errorf("no memory of the right amount: %s", dump(got))
	}
}

// TestVerblessBan: "No calls before 9" bans without a verb; "No worries" bans nothing.
func TestVerblessBan(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"No meetings on Friday afternoons.":        true,
		"And no cilantro in anything, ever.":       true,
		"No worries, take your time!":              false,
		"No problem whatsoever, thanks.":           false,
		"No, I meant the other spreadsheet.":       false,
		"Still no dairy for me, the rash is back.": true,
	} {
		got := extractOne(t, memory.Turn{Content: text})
		constraint := false
		for _, c := range got {
			constraint = constraint || c.Category == memory.CatConstraint
		}
		if constraint != want {
			t.Errorf("%q: constraint %v, want %v: %s", text, constraint, want, dump(got))
		}
	}
}

// TestCorrectionWithTheRightValueFirstZH: "是Y，不是X" names X as the wrong value and keeps
// the clause that holds Y, whoever it is about.
func TestCorrectionWithTheRightValueFirstZH(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "上次讲错了，阿宝的疫苗是下月9号，不是19号，我老记混。"})
	if len(got) == 0 {
		t.Fatal("no memory")
	}
	c := got[0]
	if v, _ := c.Metadata["corrects"].(string); v != "19号" {
		t.Errorf("corrects = %q, want 19号 (%s)", v, dump(got))
	}
	if !strings.Contains(c.Content, "9号") || strings.Contains(c.Content, "不是19号") {
		t.Errorf("content %q: want the right value without the wrong one", c.Content)
	}
}

// TestRuleToldByItsLabel: "New rule for X: Y" is a standing preference in X's slot, and
// the way answers are written outranks a drink the sentence mentions.
func TestRuleToldByItsLabel(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, key, piece string }{
		{"New rule for the weekly digest: tables only, no more than ten rows.", "response.style", "rule for the weekly digest: tables only"},
		{"新规矩：日报一律分点写，每点一行。", "response.style", "日报一律分点写"},
		{"Detailed paragraphs are fine, I like reading them slowly over my tea.", "response.style", "paragraphs"},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if len(got) == 0 || got[0].Key != tt.key || !strings.Contains(got[0].Content, tt.piece) {
			t.Errorf("%q: want %s holding %q first: %s", tt.text, tt.key, tt.piece, dump(got))
		}
	}
}

// TestLaterStepsJoinTheProcedure: steps told in sentences of their own after the first
// ("然后…", "Then …") belong to the procedure.
func TestLaterStepsJoinTheProcedure(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"每次发版前先跑一遍冒烟测试；然后在群里通知测试同学；最后打tag。", "最后打tag"},
		{"Before every payroll run, first export the hours from Clockify. Then send them to Imre for sign-off.", "Then send them to Imre"},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if len(got) != 1 || got[0].Type != memory.Procedural || !strings.Contains(got[0].Content, tt.want) {
			t.Errorf("%q: want one procedure holding %q: %s", tt.text, tt.want, dump(got))
		}
	}
}

// TestDepartedNames: someone named who retired, resigned or moved on, and a thing named
// that was sold or given away, are handed to the resolver; a relative's retirement, a
// habit quit and a time are not.
func TestDepartedNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"Heads up, Priya retired last month so the clinic gave me a new physio.", []string{"Priya"}},
		{"Our landlord Mr Okafor has moved away and his nephew collects the rent now.", []string{"Okafor"}},
		{"Dr Varga left the practice, so I need a new dentist.", []string{"Varga"}},
		{"FYI Bastian resigned, Lena runs the design team now.", []string{"Bastian"}},
		{"My sister Ines quit her job in May.", nil},
		{"Dad finally retired in June, he's bored already.", nil},
		{"教练说我先别练拳击了，改成每周两次瑜伽。", []string{"拳击"}},
		{"我这阵子不去攀岩了。", nil},
		{"Tomas quit smoking and feels great.", nil},
		{"Anja left early to catch the train.", nil},
		{"老周上个月退休了，现在换成小吴负责报销。", []string{"老周"}},
		{"那台投影仪已经送人了，客厅空出来一块。", []string{"投影仪"}},
		{"把Kindle转给同事了，现在只用手机看书。", []string{"Kindle"}},
		{"Dr Lee took over from Dr Osei at the practice.", []string{"Osei"}},
		{"We switched from Brightline to a local courier last spring.", []string{"Brightline"}},
		{"We switched from Monday to Thursday stand-ups.", nil},
		{"Marta is no longer my trainer, the gym moved her to mornings.", []string{"Marta"}},
		{"公司把保洁换掉了，不再找小何了。", []string{"小何"}},
		{"我爸去年退休了，天天在家钓鱼。", nil},
		{"昨天卖了两箱橘子给邻居。", nil},
		{"小区门口的菜鸟驿站撤了，取件要走好远。", []string{"菜鸟驿站"}},
		{"快递拆了，杯子碎了一个。", nil},
		{"周会调到下周三了。", nil},
		{"Pepper was re-homed with a family in Cork.", []string{"Pepper"}},
		{"Kyoto's history is what draws me there.", nil},
		{"Aoife passed, she's a doctor now!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			if got := departedNames(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("departedNames(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	got := extractOne(t, memory.Turn{Content: "Quick update: Priya retired last month, so the clinic moved me to a new physio called Joaquin."})
	if len(got) == 0 {
		t.Fatal("no memory of the departure")
	}
	for _, c := range got {
		if d, _ := c.Metadata["departed"].(string); d != "Priya" {
			t.Errorf("%q: departed %q, want Priya", c.Content, d)
		}
	}
	for _, text := range []string{"Gave up on the old treadmill, the gym's ones are better.", "We finally parted with our old caravan, it sat unused for years."} {
		got := extractOne(t, memory.Turn{Content: text})
		if len(got) == 0 || !slices.ContainsFunc(got, func(c memory.Candidate) bool { return c.Metadata["parted_with"] != nil }) {
			t.Errorf("%q: no parted_with: %s", text, dump(got))
		}
	}
}

// TestWhatLeftIsHistory: a turn that tells a new value beside what left keeps the new
// value and not the old one's words (the resolver retires the old memories from the
// metadata); a turn that only tells the leaving keeps it; a transfer of someone else is
// not the speaker's move.
func TestWhatLeftIsHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text           string
		want, notWant  string
		parted, leaver string
	}{
		{"Got rid of my old hatchback. Bought a second-hand pickup from my uncle.", "pickup", "hatchback", "hatchback", ""},
		{"Ines retired in March, so Colm looks after my pension now.", "Colm looks after", "Ines", "", "Ines"},
		{"Dr Abara left the clinic and a locum called Dr Huang sees me instead.", "Huang", "Abara", "", "Abara"},
		{"Sold my old camera to a colleague.", "sold their old camera", "", "camera", ""},
		{"I sold my old kayak. My cousin's wedding is in May.", "sold their old kayak", "", "kayak", ""},
		{"My coach Renzo retired, and Bea coaches the squad now.", "Bea coaches", "Renzo", "", "Renzo"},
		{"I moved from Leeds to Bristol last month.", "from Leeds to Bristol", "", "", "Leeds"},
		{"工作换了，现在是产品经理。", "用户工作换了，现在是产品经理", "", "", ""},
		{"I quit Dovetail Analytics in June. I'm a data engineer at Copperleaf now.", "Copperleaf", "no longer", "", ""},
		{"We moved the whole office off Trello, Asana holds every task now.", "Asana holds", "Trello", "", "Trello"},
		{"别再叫我阿杰了，叫我全名吧。", "全名", "阿杰", "", "阿杰"},
		{"尤克里里不弹了，最近实在太忙。", "尤克里里不弹了", "", "", "尤克里里"},
		{"Ines retired last week, I'll miss her.", "Ines", "", "", "Ines"},
		{"钱会计上个月调去总部了，现在我的报销由小贾负责。", "小贾", "钱会计", "", "钱会计"},
		{"何老师去教初一了，现在是周老师带我们班，人挺耐心的。", "周老师", "何老师", "", "何老师"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got := extractOne(t, memory.Turn{Content: tt.text})
			all := dump(got)
			if !strings.Contains(all, tt.want) {
				t.Errorf("no memory holding %q: %s", tt.want, all)
			}
			for _, c := range got {
				if tt.notWant != "" && strings.Contains(c.Content, tt.notWant) {
					t.Errorf("%q retells what left (%q)", c.Content, tt.notWant)
				}
				if p, _ := c.Metadata["parted_with"].(string); p != tt.parted {
					t.Errorf("%q: parted_with %q, want %q", c.Content, p, tt.parted)
				}
				if d, _ := c.Metadata["departed"].(string); d != tt.leaver {
					t.Errorf("%q: departed %q, want %q", c.Content, d, tt.leaver)
				}
			}
		})
	}
	for _, text := range []string{"孙经理调去成都分公司了，我们组现在归老韩管。", "我们公司月底搬到了滨江。"} {
		for _, c := range extractOne(t, memory.Turn{Content: text}) {
			if c.Key == "user.location" || c.Key == "user.timezone" {
				t.Errorf("%q: someone else's move read as the speaker's: %q", text, c.Content)
			}
		}
	}
}

// TestInPassing: things said in passing that name what they are about in the sentence
// before, with an adverb before the verb, the city of a workplace, and a laugh that is
// only a laugh. Sentences written for this test.
func TestInPassing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, want, key string
	}{
		{"the canteen served mushrooms again. honestly i can't stand them", "mushrooms", "-"},
		{"I genuinely prefer aisle seats on long flights.", "The user genuinely prefers aisle seats", "-"},
		{"我叫林舟，在杭州一家做跨境电商的公司当运营。", "用户在杭州工作和生活", "user.location"},
		{"哈哈这个表情包笑死人了", "", ""},
		{"Closed on the flat last week, we're proper Galway locals now.", "Galway", "user.location"},
		{"Odette handles our freight invoices, so loop her in on anything late.", "Odette handles", "contact.freight_invoices"},
		{"Heads up: freight invoices are with Marek in accounts now.", "Marek", "contact.freight_invoices"},
		{"团建的事现在归小蒋负责，有问题找他。", "小蒋", "contact.团建"},
		{"The pollen out here in Fresno is wrecking my sinuses.", "Fresno", "user.location"},
		{"Could you look over my email? 'Sorry for the delay, all fixed now. Cheers, Ottilie'", "Ottilie", "user.name"},
		{"Wrangling the twins again: Ivo has judo till 6 and Pia has choir.", "Ivo has judo", "-"},
		{"Please keep all restaurant picks under $30 a head.", "under $30", "-"},
		{"俺在镇上开小卖部的，平时走不开。", "用户", "-"},
		{"二宝周日上午学围棋，我得送她。", "围棋", "-"},
		{"前天终于入了台二手的索尼相机，画质真不错。", "索尼", "-"},
		{"我们这边西宁今天下大雪，路上全是冰。", "西宁", "user.location"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got := extractOne(t, memory.Turn{Content: tt.text})
			if tt.want == "" {
				if len(got) > 0 {
					t.Errorf("want nothing, got %s", dump(got))
				}
				return
			}
			ok := slices.ContainsFunc(got, func(c memory.Candidate) bool {
				return strings.Contains(c.Content, tt.want) && (tt.key == "-" || c.Key == tt.key)
			})
			if !ok {
				t.Errorf("no memory holding %q (key %q): %s", tt.want, tt.key, dump(got))
			}
		})
	}
}
