package extractor

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// The sentences below were written for these tests; none comes from an evaluation set.

var clauseRef = time.Date(2026, 4, 8, 10, 0, 0, 0, time.UTC) // a Wednesday

func extractOne(t *testing.T, turn memory.Turn) []memory.Candidate {
	t.Helper()
	if turn.OccurredAt.IsZero() {
		turn.OccurredAt = clauseRef
	}
	if turn.Role == "" {
		turn.Role = memory.RoleUser
	}
	if turn.TurnID == "" {
		turn.TurnID = "t1"
	}
	got, err := NewOffline().Extract(context.Background(), Batch{Tenant: "acme", UserID: "u1", New: []memory.Turn{turn}})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func byKey(cands []memory.Candidate) map[string]memory.Candidate {
	out := map[string]memory.Candidate{}
	for _, c := range cands {
		if c.Key != "" {
			out[c.Key] = c
		}
	}
	return out
}

func TestClauseFacts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want map[string]string // key → a piece the content must hold
	}{
		{"self-introduction en: one memory per fact", "Hi, I'm Priya Raman, a backend developer at Lumatek in Leeds.",
			map[string]string{"user.name": "Priya Raman", "user.role": "backend developer", "user.employer": "Lumatek", "user.location": "Leeds"}},
		{"self-introduction zh", "我叫陈晨，在杭州的一家物流公司做数据分析师。",
			map[string]string{"user.name": "陈晨", "user.employer": "物流公司", "user.role": "数据分析师", "user.location": "杭州"}},
		{"relation with name and job en", "My husband Tomas is a pharmacist.",
			map[string]string{"relation.husband.name": "Tomas", "relation.husband.job": "pharmacist"}},
		{"relation with name and job zh", "我老公叫周明，是一名牙医。",
			map[string]string{"relation.husband.name": "周明", "relation.husband.job": "牙医"}},
		{"relation employer", "My sister works at Brightwave Labs.", map[string]string{"relation.sister.employer": "Brightwave Labs"}},
		{"child and school year en", "My son Leo started third grade this week.",
			map[string]string{"relation.son.name": "Leo", "relation.son.school": "third grade"}},
		{"child and school year zh", "我儿子乐乐今年上二年级。",
			map[string]string{"relation.son.name": "乐乐", "relation.son.school": "二年级"}},
		{"pet en", "We adopted a kitten named Pepper last weekend.", map[string]string{"pet.cat.name": "Pepper"}},
		{"pet possessive en", "Our dog Biscuit hates the rain.", map[string]string{"pet.dog.name": "Biscuit"}},
		{"pet zh", "我家的狗叫旺财。", map[string]string{"pet.dog.name": "旺财"}},
		{"move between two cities en", "I moved from Lyon to Porto last month.", map[string]string{"user.location": "Porto"}},
		{"move zh", "我们去年从成都搬到了苏州。", map[string]string{"user.location": "苏州"}},
		{"time zone en", "My time zone is now Central European Time.", map[string]string{"user.timezone": "Central European"}},
		{"time zone zh", "我的时区改成东京时间了。", map[string]string{"user.timezone": "东京时间"}},
		{"device", "I use a MacBook Air for work.", map[string]string{"user.device.computer": "MacBook Air"}},
		{"relation named by 'name is'", "My brother's name is Oskar.", map[string]string{"relation.brother.name": "Oskar"}},
		{"a move resets the time zone", "I moved to Auckland in May.", map[string]string{"user.location": "Auckland", "user.timezone": "Auckland"}},
		{"a move resets the time zone zh", "我搬到了昆明。", map[string]string{"user.location": "昆明", "user.timezone": "昆明"}},
		{"work as", "These days I work as a site reliability engineer for Quillbank.",
			map[string]string{"user.role": "site reliability engineer", "user.employer": "Quillbank"}},
		{"a new job title", "I'm now a staff designer at Fernway.", map[string]string{"user.role": "staff designer", "user.employer": "Fernway"}},
		{"employer and job zh", "我是一家连锁药店的区域经理。", map[string]string{"user.employer": "连锁药店", "user.role": "区域经理"}},
		{"name by noun phrase, home by copula", "Hello, the name's Odile Marchetti and home is Turin.",
			map[string]string{"user.name": "Odile Marchetti", "user.location": "Turin"}},
		{"work described by its object", "I do infrastructure work as a platform engineer over at Kestrel Mills.",
			map[string]string{"user.role": "platform engineer", "user.employer": "Kestrel Mills"}},
		{"home's with an adverb", "Home's still Quito for now.", map[string]string{"user.location": "Quito"}},
		{"accepted an offer, then a clause", "Finally I accepted an offer from Tidewater Bank and start there in June.",
			map[string]string{"user.employer": "Tidewater Bank"}},
		{"subjectless zh plan", "后天要去西安开会。", map[string]string{}},
		{"subjectless zh relation", "爸爸叫李建国。", map[string]string{"relation.father.name": "李建国"}},
		{"subjectless zh pet", "家里养了一只狸花猫，叫年糕。", map[string]string{"pet.cat.name": "年糕"}},
		{"subjectless zh move", "上周已经搬到厦门了。", map[string]string{"user.location": "厦门"}},
		{"diagnosis en", "I was diagnosed with celiac disease last year.", map[string]string{"user.health.celiac_disease": "celiac disease"}},
		{"diagnosis zh", "我去年确诊了糖尿病。", map[string]string{"user.health.糖尿病": "糖尿病"}},
		{"diagnosis with a number", "I got diagnosed with stage 1 hypertension in spring.", map[string]string{"user.health.stage_1_hypertension": "stage 1 hypertension"}},
		{"a role with 'the' and where it is held", "I'm the head nurse at Mercy General.",
			map[string]string{"user.role": "head nurse", "user.employer": "Mercy General"}},
		{"a profession told by its verb", "Hello there, I'm Ines Duarte and I teach piano at Harmonia Academy.",
			map[string]string{"user.name": "Ines Duarte", "user.role": "teaches piano", "user.employer": "Harmonia Academy"}},
		{"a business of the speaker's", "We own a bike shop in Utrecht.", map[string]string{"user.business": "bike shop in Utrecht"}},
		{"the speaker's vehicle", "I drive an old Volvo wagon to work.", map[string]string{"user.vehicle": "old Volvo wagon"}},
		{"a name that changed", "After the wedding my name is now Clara Brandt.", map[string]string{"user.name": "Clara Brandt"}},
		{"a subject-dropped clause zh", "我叫林小雨，住在珠海。", map[string]string{"user.name": "林小雨", "user.location": "珠海"}},
		{"a line of work without a job suffix zh", "我现在在一家券商做投资。", map[string]string{"user.employer": "券商", "user.role": "投资"}},
		{"a relation's employer is not the speaker's", "My partner Rui is an architect at Studio Nord.",
			map[string]string{"relation.partner.employer": "Studio Nord", "relation.partner.job": "architect"}},
		{"a relation's job in the attribute form", "My aunt is a retired librarian.", map[string]string{"relation.aunt.job": "librarian"}},
		{"a new employer beside the old one", "I quit Vantage Labs and joined Corvid Health.", map[string]string{"user.employer": "Corvid Health"}},
		{"a relation named with 是 zh", "我们组新来的组长是何静，我的组长是何静。", map[string]string{"relation.manager.name": "何静"}},
		{"a new employer told by the first weeks there", "Three days into my first week at Quillfield Bank and I'm exhausted.",
			map[string]string{"user.employer": "Quillfield Bank"}},
		{"a manager told by reporting", "After the shuffle I report to Anouk Visser.", map[string]string{"relation.manager.name": "Anouk Visser"}},
		{"a device of the speaker's by its maker", "My Pixel 7 keeps dropping wifi at home.", map[string]string{"user.device.phone": "Pixel 7"}},
		{"a device the speaker got", "Treated myself to a MacBook Air M3 last weekend.", map[string]string{"user.device.computer": "MacBook Air M3"}},
		{"a plan the speaker is on", "We're on the Harbor Gold membership at the gym.", map[string]string{"user.plan.membership": "Harbor Gold"}},
		{"a trip keyed by its occasion", "For my birthday we're flying to Lisbon for four days.", map[string]string{"plan.trip.birthday": "Lisbon"}},
		{"a trip keyed by its occasion zh", "五一我们打算去厦门住两晚。", map[string]string{"plan.trip.五一": "厦门"}},
		{"a changed trip zh", "暑假的安排变了，那边先不去，改成去青岛。", map[string]string{"plan.trip.暑假": "青岛"}},
		{"a home told with 家 zh", "我们家就在无锡滨湖区，离公司不远。", map[string]string{"user.location": "无锡"}},
		{"a new employer told by going there zh", "我上个月跳槽到了鸿远证券做研究员。", map[string]string{"user.employer": "鸿远证券", "user.role": "研究员"}},
		{"pets named after their kind zh", "我家的兔子雪球最近胃口很大，乌龟阿慢倒是不挑。",
			map[string]string{"pet.rabbit.name": "雪球", "pet.turtle.name": "阿慢"}},
		{"an in-law named zh", "我岳母周桂兰下周要来住一阵子。", map[string]string{"relation.岳母.name": "周桂兰"}},
		{"an in-law named en", "My sister-in-law Odette is visiting from Lyon.", map[string]string{"relation.sister_in_law.name": "Odette"}},
		{"a pregnancy en", "Heads up, I'm 24 weeks pregnant, so nothing too strenuous.", map[string]string{"user.health.pregnancy": "24 weeks pregnant"}},
		{"a pregnancy zh", "我现在怀孕七个月了，走路有点累。", map[string]string{"user.health.pregnancy": "怀孕七个月"}},
		{"a car told by its purchase zh", "旧车卖了，换成新提了一辆零跑C10。", map[string]string{"user.vehicle": "零跑"}},
		{"a job told by a participle", "Being night manager at Halvard Hotel means I sleep through most mornings.",
			map[string]string{"user.role": "night manager", "user.employer": "Halvard Hotel"}},
		{"a job told by 'as'", "As a paramedic with Ostrava Rescue, I see a lot of bad nights.",
			map[string]string{"user.role": "paramedic", "user.employer": "Ostrava Rescue"}},
		{"a liking told as a weakness", "Full disclosure: pistachio gelato is my weakness.", map[string]string{"taste.gelato": "istachio gelato"}},
		{"a liking told as a guilty pleasure", "Salted pretzels are my guilty pleasure.", map[string]string{"taste.pretzel": "Salted pretzels"}},
		{"a pregnancy told without a subject zh", "目前怀孕四个月了，咖啡都不敢喝。", map[string]string{"user.health.pregnancy": "怀孕四个月"}},
		{"a unit the speaker runs", "I manage the night desk at Corbel Herald, out here in Spokane.",
			map[string]string{"user.role": "manages the night desk", "user.employer": "Corbel Herald", "user.location": "Spokane"}},
		{"a teacher and where zh", "我在实验二小教英语，今年带三年级。", map[string]string{"user.employer": "实验二小", "user.role": "教英语"}},
		{"a company by its kind, then its name zh", "现在在一家做储能的公司当销售经理，公司叫恒川能源。",
			map[string]string{"user.employer": "恒川能源", "user.role": "销售经理"}},
		{"a quit and a new job across a space zh", "我从原来的报社辞职了 现在在一家做游戏的公司当策划。",
			map[string]string{"user.role": "策划"}},
		{"a home by its district zh", "我现在住成都高新区，离地铁站很近。", map[string]string{"user.location": "高新区"}},
		{"a phone by its maker zh", "我这台红米用了三年，电池不太行了。", map[string]string{"user.device.phone": "红米"}},
		{"a car by its maker with any measure word zh", "告诉你，换了台特斯拉，开着真安静。", map[string]string{"user.vehicle": "特斯拉"}},
		{"a phone got with 个 zh", "手机换了，入了个vivo X100，拍照很好。", map[string]string{"user.device.phone": "vivo"}},
		{"a dated thing the speaker has", "I've got a colonoscopy next Tuesday, so no food after lunch Monday.",
			map[string]string{"plan.colonoscopy": "colonoscopy"}},
		{"a plan rescheduled", "The colonoscopy got pushed back to Friday at 9.", map[string]string{"plan.colonoscopy": "Friday"}},
		{"a plan told by going to it zh", "下周二我要去复查，早上不能吃东西。", map[string]string{"plan.复查": "复查"}},
		{"a moved plan is a plan, not a passing state zh", "复查改到下周五上午了。", map[string]string{"plan.复查": "下周五"}},
		{"a device named in lower case", "ugh my pixel 8 keeps rebooting overnight", map[string]string{"user.device.phone": "pixel 8"}},
		{"an e-reader", "My Kobo died on the train.", map[string]string{"user.device.ereader": "Kobo"}},
		{"a home by the street it is off", "We live just off the Ringway, so the buses are easy.", map[string]string{"user.location": "Ringway"}},
		{"a home told with 's", "Our flat's in the Old Town now.", map[string]string{"user.location": "Old Town"}},
		{"a service used for a job", "We use Fastmail for email at home.", map[string]string{"tool.email": "Fastmail"}},
		{"a check-up finding zh", "体检发现尿酸偏高，医生让我少喝啤酒。", map[string]string{"user.health.尿酸": "尿酸偏高"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := byKey(extractOne(t, memory.Turn{Content: tt.text}))
			for key, piece := range tt.want {
				c, ok := got[key]
				if !ok {
					t.Errorf("%q: no memory in slot %s; got %s", tt.text, key, dump(extractOne(t, memory.Turn{Content: tt.text})))
					continue
				}
				if !strings.Contains(c.Content, piece) {
					t.Errorf("%s = %q, want it to hold %q", key, c.Content, piece)
				}
				if c.Type != memory.Semantic {
					t.Errorf("%s is %s, want semantic", key, c.Type)
				}
			}
		})
	}
}

func TestClauseSameSlotForChanges(t *testing.T) {
	t.Parallel()
	// A later statement must land in the slot of the earlier one, so the resolver
	// supersedes it.
	pairs := []struct{ before, after string }{
		{"I really love burgers.", "I can't eat burgers anymore."},
		{"我很喜欢吃榴莲。", "我现在不能再吃榴莲了。"},
		{"I live in Ghent.", "I relocated to Utrecht in March."},
		{"I work at Harbor Analytics.", "I left Harbor Analytics last Friday."},
		{"我在一家外贸企业上班。", "我已经从外贸公司离职了。"},
		{"我住在厦门。", "我上个月搬到了青岛。"},
		{"My dentist appointment is next Thursday.", "Actually the dentist appointment moved to April 21."},
		{"我的体检在下周一。", "我的体检改到下周三了。"},
		{"My time zone is Pacific Time.", "I switched my time zone to Eastern Time."},
		{"我每周都去爬山。", "我膝盖不好，不再爬山了。"},
		{"I usually swim on Sunday mornings.", "I no longer swim, my shoulder hurts."},
		{"I love a mug of hot cocoa at night.", "I can't drink cocoa anymore."},
		{"I adore salted caramel.", "No more salted caramel for me, doctor's orders."},
		{"My call with Initrode is on May 4.", "They moved the Initrode call to May 6."},
		{"我去大理的高铁是5月2日。", "高铁改到5月4日了。"},
		{"我的组长叫郑凯。", "我现在的组长是孙悦。"},
		{"I really enjoy playing chess online.", "I'm not into chess anymore."},
		{"I love smoked gouda.", "No more gouda for me."},
		{"我每天早上都喝一杯豆浆。", "我现在不喝豆浆了。"},
		{"Our offsite is on June 3.", "Correction: the offsite is on June 5, not the 3rd."},
	}
	for _, p := range pairs {
		a, b := extractOne(t, memory.Turn{Content: p.before}), extractOne(t, memory.Turn{Content: p.after})
		ka, kb := map[string]bool{}, map[string]bool{}
		for _, c := range a {
			ka[c.Key] = c.Key != ""
		}
		shared := false
		for _, c := range b {
			kb[c.Key] = true
			for k := range ka {
				// A plan named by its kind meets the plan of that kind named in full: the
				// resolver's slot rules take plan.高铁 and plan.高铁.大理 for one slot.
				if c.Key != "" && ka[k] && (k == c.Key || strings.HasPrefix(k, c.Key+".") || strings.HasPrefix(c.Key, k+".")) {
					shared = true
				}
			}
		}
		if !shared {
			t.Errorf("%q then %q share no slot:%s\nvs%s", p.before, p.after, dump(a), dump(b))
		}
	}
}

func TestNoSlotForWhatIsNotSaid(t *testing.T) {
	t.Parallel()
	// Sentences that must not fill a slot of the speaker's: a relation's employer, a
	// personality trait read as a job, the old value a sentence denies.
	tests := []struct{ text, key, absent string }{
		{"My cousin Noor is a dentist at Bright Smiles.", "user.employer", ""},
		{"我老婆叫孙婷，在一家律所做律师。", "user.employer", ""},
		{"I'm an early bird, up at five every day.", "user.role", ""},
		{"I'm a mom of two.", "user.role", ""},
		{"I'm not in Aarhus anymore, I live in Odense now.", "user.location", "Aarhus"},
		{"我已经不在厦门了，现在住在福州。", "user.location", "厦门"},
		{"I don't work at Vantage Labs anymore, I'm with Corvid Health now.", "user.employer", "Vantage"},
		{"I've got a filling on Monday with Dr. Castellor at Harbourview Dental.", "user.employer", ""},
		{"I gave away my old Kindle, now I'm reading on a Kobo Libra.", "user.device.computer", "Kindle"},
		{"下周二我要去复查，早上不能吃东西。", "taste.东西", ""},
		{"我儿子学围棋快两年了，最近有点想放弃。", "relation.son.name", ""},
		{"We use Slack for everything.", "tool.everything", ""},
		{"我爸体检查出来血脂偏高。", "user.health.血脂", ""},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		for _, c := range got {
			if c.Key == tt.key && (tt.absent == "" || strings.Contains(c.Content, tt.absent)) {
				t.Errorf("%q: %s = %q", tt.text, c.Key, c.Content)
			}
			if tt.absent != "" && strings.Contains(c.Content, tt.absent) && c.Type == memory.Semantic {
				t.Errorf("%q: the denied value lives on in %q (%s)", tt.text, c.Content, c.Key)
			}
		}
	}
}

func TestClauseRoutines(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, key, piece string }{
		{"I always run the linter before I push.", "procedure.push", "run the linter"},
		{"Before every release, we always bump the version and write the changelog.", "procedure.release", "bump the version"},
		{"每次上线前先跑一遍回归测试。", "procedure.上线", "回归测试"},
		{"For hotfixes: first open a ticket, then branch from main, then ask for two reviews.", "", "branch from main"},
		{"先备份数据库，再执行迁移脚本。", "", "执行迁移脚本"},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		if len(got) < 1 || got[0].Type != memory.Procedural || got[0].Key != tt.key || !strings.Contains(got[0].Content, tt.piece) {
			t.Errorf("%q:%s", tt.text, dump(got))
		}
	}
}

func TestClauseSpeakerName(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "Nadia: I started a pottery course yesterday and I already made two bowls.",
		Metadata: map[string]any{"speaker": "Nadia"}})
	if len(got) != 1 || got[0].Type != memory.Episodic {
		t.Fatalf("got%s", dump(got))
	}
	c := got[0].Content
	if !strings.HasPrefix(c, "Nadia started a pottery course yesterday (2026-04-07)") || strings.Contains(c, "Nadia:") || strings.Contains(c, "user") {
		t.Errorf("content = %q", c)
	}
	zh := extractOne(t, memory.Turn{Content: "我上周去了青岛看海。", Metadata: map[string]any{"name": "小雨"}})
	if len(zh) != 1 || !strings.HasPrefix(zh[0].Content, "小雨上周(2026-03-30至2026-04-05)去了青岛看海") {
		t.Errorf("zh:%s", dump(zh))
	}
}

func TestClauseStoryLeavesOutTheListener(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"You always find the best spots, I'm so proud of you!",
		"That must have been so much fun for you.",
		"Thanks, that's really kind.",
		"I totally agree.",
		"They always make the kids laugh.",
		"I'm always around to lend you a hand.",
	} {
		if got := extractOne(t, memory.Turn{Content: text}); len(got) != 0 {
			t.Errorf("%q gave%s", text, dump(got))
		}
	}
}

func TestToolStepBecomesTheProcedure(t *testing.T) {
	t.Parallel()
	at := func(m int) time.Time { return clauseRef.Add(time.Duration(m) * time.Minute) }
	turns := []memory.Turn{
		{TurnID: "t1", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "billing.sync", Status: "failure", Error: "quota exceeded"}, OccurredAt: at(0)},
		{TurnID: "t2", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "billing.reserve", Status: "success"}, Content: "slot reserved", OccurredAt: at(1)},
		{TurnID: "t3", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "billing.sync", Status: "success"}, Content: "synced", OccurredAt: at(2)},
	}
	b := Batch{Tenant: "acme", UserID: "u1", New: turns}
	for i, v := range NewGate().CheckBatch(b) {
		if !v.Pass {
			t.Errorf("turn %s gated out: %+v", turns[i].TurnID, v)
		}
	}
	got, err := NewOffline().Extract(context.Background(), b)
	if err != nil || len(got) != 1 {
		t.Fatalf("got%s, %v", dump(got), err)
	}
	c := got[0]
	want := `When tool "billing.sync" fails with "quota exceeded", call "billing.reserve" first, then retry "billing.sync"`
	if c.Content != want || c.Type != memory.Procedural || strings.Join(c.SourceTurnIDs, ",") != "t1,t2,t3" {
		t.Errorf("got %q %s %v", c.Content, c.Type, c.SourceTurnIDs)
	}
}

func TestGatePassesEveryClause(t *testing.T) {
	t.Parallel()
	g := NewGate()
	for _, text := range []string{
		"My husband Tomas is a pharmacist.", "我家的狗叫旺财。", "I moved from Lyon to Porto.", "我老公叫周明，是一名牙医。",
		"每次上线前先跑一遍回归测试。", "I always run the linter before I push.", "My time zone is now Central European Time.",
		"I went to Oslo.", "我上周去了青岛。", "The vet visit moved to May 9.", "体检改到下周三了。",
	} {
		if r := g.Check(memory.Turn{Role: memory.RoleUser, Content: text}); !r.Pass {
			t.Errorf("gate skipped %q: %s", text, r.Reason)
		}
	}
}

// The work per turn is bounded by what is read, not timed here (performance lives in
// BenchmarkLongTurn): a sentence is read to maxSentenceBytes and a clause pattern sees at
// most maxClauseBytes, cut on a rune boundary.
func TestClauseWorkIsBounded(t *testing.T) {
	t.Parallel()
	en := strings.Repeat("my my my my I I we we a a a ", 2000)
	zh := strings.Repeat("我我我的的的在在", 2000)
	for _, s := range []string{en, zh, "a" + zh} {
		if got := clipSentence(s); len(got) > maxSentenceBytes || !utf8.ValidString(got) || !strings.HasPrefix(s, got) {
			t.Errorf("clipSentence kept %d bytes (valid UTF-8 %v)", len(got), utf8.ValidString(got))
		}
		if got := clip(s); len(got) > maxClauseBytes || !utf8.ValidString(got) || !strings.HasPrefix(s, got) {
			t.Errorf("clip kept %d bytes (valid UTF-8 %v)", len(got), utf8.ValidString(got))
		}
	}
	// A huge turn still goes through both without error.
	extractOne(t, memory.Turn{Content: en + zh})
	NewGate().Check(memory.Turn{Role: memory.RoleUser, Content: en + zh})
}

func BenchmarkLongTurn(b *testing.B) {
	long := strings.Repeat("my my my my I I we we a a a ", 2000) + strings.Repeat("我我我的的的在在", 2000)
	o, g := NewOffline(), NewGate()
	turn := memory.Turn{TurnID: "t1", UserID: "u", SessionID: "s", Role: memory.RoleUser, Content: long,
		OccurredAt: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	for b.Loop() {
		if _, err := o.Extract(context.Background(), Batch{Tenant: "acme", UserID: "u", SessionID: "s", New: []memory.Turn{turn}}); err != nil {
			b.Fatal(err)
		}
		g.Check(turn)
	}
}

func TestAlwaysAsHabitOrInstruction(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"Always put the totals in the first column.", "I always order oat milk."} {
		got := extractOne(t, memory.Turn{Content: text})
		if len(got) != 1 || got[0].Category != memory.CatPreference {
			t.Errorf("%q:%s", text, dump(got))
		}
	}
}

func TestEventsAreNoProcedures(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"First we went to the aquarium, then we had dumplings by the river.", "我们先去了博物馆，然后去吃了火锅。"} {
		got := extractOne(t, memory.Turn{Content: text})
		if len(got) != 1 || got[0].Type != memory.Episodic {
			t.Errorf("%q:%s", text, dump(got))
		}
	}
}

func TestDecisionWithReason(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "We went with Redis for the queue because the team already runs it."})
	if len(got) == 0 || got[0].Category != memory.CatDecision || got[0].Metadata["reason"] != "the team already runs it" {
		t.Errorf("got%s", dump(got))
	}
}

func TestChangeableSlotsAreNotRetold(t *testing.T) {
	t.Parallel()
	// The city must live only in its slot, and in one memory of it, so that a move
	// supersedes every mention of it at once.
	// A detail that is a slot of its own (how the speaker gets to work) may live there.
	for _, tc := range []struct{ text, city, detail string }{
		{"I live in Ghent with my partner and our two cats.", "Ghent", "partner"},
		{"我住在厦门，每天骑车去海边上班。", "厦门", "骑车"},
	} {
		inSlot, told, detail := 0, 0, false
		for _, c := range extractOne(t, memory.Turn{Content: tc.text}) {
			if c.Type == memory.Episodic {
				t.Errorf("%q retold as an event: %q", tc.text, c.Content)
			}
			if c.Key == "user.location" {
				inSlot++
			}
			if strings.Contains(c.Content, tc.city) {
				told++
			}
			detail = detail || strings.Contains(c.Content, tc.detail)
		}
		if inSlot != 1 || told != 1 || !detail {
			t.Errorf("%q: %d memories in the location slot, %d telling the city, details kept: %v", tc.text, inSlot, told, detail)
		}
	}
}

// TestOrdersCeilingsAndSkips: an order told to the listener before a task ("Before you …,
// make sure …") is a procedure, but a question after "before you …" is not; a ceiling on
// an amount is a constraint, a speed limit is not; someone skipping a person is no
// departure of theirs. The sentences were written for this test.
func TestOrdersCeilingsAndSkips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		typ  memory.Type
		cat  memory.Category // "" : no candidate of typ may exist
	}{
		{"Before you send any invoice, double-check the VAT number with Hugo.", memory.Procedural, memory.CatSkill},
		{"Before you leave, could you water the ferns?", memory.Procedural, ""},
		{"The max is $300 a night, accounting is strict about hotels.", memory.Semantic, memory.CatConstraint},
		{"The speed limit is 60 on that road.", memory.Semantic, ""},
	}
	for _, tt := range tests {
		got := extractOne(t, memory.Turn{Content: tt.text})
		found := false
		for _, c := range got {
			found = found || c.Type == tt.typ && (tt.cat == "" || c.Category == tt.cat)
		}
		if found != (tt.cat != "") {
			t.Errorf("%q: found %v %s/%s, want %v; got %s", tt.text, found, tt.typ, tt.cat, tt.cat != "", dump(got))
		}
	}
	for _, c := range extractOne(t, memory.Turn{Content: "Last week somebody skipped Ingrid in the review rota and she was upset."}) {
		if _, ok := c.Metadata["departed"]; ok {
			t.Errorf("a person someone else skipped is marked departed: %q %v", c.Content, c.Metadata)
		}
	}
}

// TestTwoSlotsKeepTheirOwnValues: a sentence that tells two slots that change (a role and
// an employer) gives each slot its own value, and the sentence is a keyless memory beside
// them ("detail"), so that neither slot's memory retells the other's value. The sentence
// was written for this test.
func TestTwoSlotsKeepTheirOwnValues(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "I'm a staff nurse at Kellerton General, mostly on the night ward."})
	keys := byKey(got)
	role, employer := keys["user.role"], keys["user.employer"]
	if !strings.Contains(role.Content, "nurse") || strings.Contains(role.Content, "Kellerton") {
		t.Errorf("role %q: want the role alone", role.Content)
	}
	if !strings.Contains(employer.Content, "Kellerton") || strings.Contains(employer.Content, "nurse") {
		t.Errorf("employer %q: want the employer alone", employer.Content)
	}
	var detail memory.Candidate
	for _, c := range got {
		if c.Key == "" {
			detail = c
		}
	}
	if detail.Metadata["rule"] != "detail" || !strings.Contains(detail.Content, "night ward") {
		t.Errorf("want a keyless detail memory with the rest of the sentence, got %s", dump(got))
	}
}
