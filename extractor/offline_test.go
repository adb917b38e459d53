package extractor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

type wantCand struct {
	typ    memory.Type
	cat    memory.Category
	key    string // "-" skips the check
	substr string
	expire string // YYYY-MM-DD, "" means no expiry
}

func userTurn(id, content string) memory.Turn {
	return memory.Turn{TurnID: id, UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: content, OccurredAt: refMonday}
}

func TestOfflineExtract(t *testing.T) {
	t.Parallel()
	sem, epi, pro := memory.Semantic, memory.Episodic, memory.Procedural
	tests := []struct {
		name string
		turn memory.Turn
		want []wantCand
	}{
		// Chinese.
		{"zh avoid meeting time", userTurn("1", "以后安排会议尽量避开每周四上午，因为周四上午要带孩子"),
			[]wantCand{{sem, memory.CatConstraint, "meeting.avoid_time", "用户希望以后安排会议尽量避开每周四上午，因为周四上午要带孩子", ""}}},
		{"zh relaxed meeting time", userTurn("1", "周五下午开会也可以了"),
			[]wantCand{{sem, memory.CatConstraint, "meeting.avoid_time", "用户更新了偏好：周五下午开会也可以了", ""}}},
		{"zh moved meeting time", userTurn("1", "以后开会改成晚上吧，白天我要陪客户"),
			[]wantCand{{sem, memory.CatPreference, "meeting.preferred_time", "用户更新了偏好：以后开会改成晚上吧，白天用户要陪客户", ""}}},
		{"zh changed meeting room", userTurn("1", "会议室改成二楼那间"),
			[]wantCand{{sem, memory.CatPreference, "meeting.room", "会议室改成二楼那间", ""}}},
		{"en meeting time fine now", userTurn("1", "Friday afternoon meetings are fine now"),
			[]wantCand{{sem, memory.CatConstraint, "meeting.avoid_time", "friday afternoon meetings are fine now", ""}}},
		{"en a span ends with its last day", userTurn("1", "My sister is staying with us from the 7th to the 11th."),
			[]wantCand{{sem, memory.CatEvent, "plan.visit.sister", "the 11th (2026-01-11)", "2026-01-12"}}},
		{"en a span into the next month", userTurn("1", "I'll be away from the 27th until the 3rd."),
			[]wantCand{{sem, memory.CatFact, "user.status", "the 3rd (2026-02-03)", "2026-02-04"}}},
		{"en a day past", userTurn("1", "I renewed my passport on the 2nd."),
			[]wantCand{{epi, memory.CatEvent, "", "the 2nd (2026-01-02)", ""}}},
		{"zh a span ends with its last day", userTurn("1", "我外婆8号到14号来我家住。"),
			[]wantCand{{sem, memory.CatEvent, "plan.visit.grandmother", "14号(2026-01-14)", "2026-01-15"}}},
		{"en switched drink", userTurn("1", "I no longer drink coffee, I switched to tea"),
			[]wantCand{{sem, memory.CatPreference, "drink.coffee", "no longer drink coffee", ""}}},
		{"zh meeting room", userTurn("1", "会议室优先选三楼靠窗那间"),
			[]wantCand{{sem, memory.CatPreference, "meeting.room", "用户偏好会议室优先选三楼靠窗那间", ""}}},
		{"zh name", userTurn("1", "我叫刘洋"), []wantCand{{sem, memory.CatProfile, "user.name", "用户的名字是刘洋", ""}}},
		{"zh relation's attribute", userTurn("1", "我外甥的数学老师是黄老师。"),
			[]wantCand{{sem, memory.CatRelationship, "relation.外甥.数学老师", "用户的外甥的数学老师是黄老师", ""}}},
		{"zh relation's attribute now", userTurn("1", "我家儿子的篮球教练现在是老郑"),
			[]wantCand{{sem, memory.CatRelationship, "relation.son.篮球教练", "篮球教练是老郑", ""}}},
		{"zh location", userTurn("1", "我住在南京鼓楼"), []wantCand{{sem, memory.CatProfile, "user.location", "用户住在南京鼓楼", ""}}},
		{"zh employer", userTurn("1", "我在美团工作"), []wantCand{{sem, memory.CatProfile, "user.employer", "用户在美团工作", ""}}},
		{"zh allergy", userTurn("1", "我对花生严重过敏"), []wantCand{{sem, memory.CatConstraint, "allergy.peanut", "用户对花生严重过敏", ""}}},
		{"zh remember birthday", userTurn("1", "记住我的生日是9月12日"), []wantCand{{sem, memory.CatProfile, "user.birthday", "用户的生日是9月12日", ""}}},
		{"zh decision with reason", userTurn("1", "我们最终决定用MySQL，因为运维更省心"),
			[]wantCand{{sem, memory.CatDecision, "", "用户最终决定用MySQL，因为运维更省心", ""}}},
		{"zh decision reason in next sentence", userTurn("1", "最终决定用方案C。原因是交付更快。"),
			[]wantCand{{sem, memory.CatDecision, "", "用户最终决定用方案C，原因是交付更快", ""}}},
		{"zh no messages on weekends", userTurn("1", "不要在晚上给我发消息"),
			[]wantCand{{sem, memory.CatConstraint, "notification.quiet_hours", "用户要求不要在晚上给用户发消息", ""}}},
		{"zh cuisine", userTurn("1", "我喜欢湘菜"), []wantCand{{sem, memory.CatPreference, "food.cuisine.hunan", "用户喜欢湘菜", ""}}},
		{"zh language", userTurn("1", "以后都用英文回复我"), []wantCand{{sem, memory.CatPreference, "language.preference", "用户希望以后都用英文回复", ""}}},
		{"zh role", userTurn("1", "我是一名会计"), []wantCand{{sem, memory.CatProfile, "user.role", "用户是会计", ""}}},
		{"zh temporary state", userTurn("1", "这周我在成都出差"),
			[]wantCand{{sem, memory.CatFact, "user.status", "这周(2026-01-05至2026-01-11)用户在成都出差", "2026-01-12"}}},
		{"zh today travelling", userTurn("1", "今天在出差"), []wantCand{{sem, memory.CatFact, "user.status", "今天(2026-01-05)在出差", "2026-01-06"}}},
		{"zh task done", userTurn("1", "项目周报已经写好了"), []wantCand{{epi, memory.CatEvent, "", "用户表示项目周报已经写好了", ""}}},
		{"zh never coffee", userTurn("1", "我从不喝咖啡"), []wantCand{{sem, memory.CatConstraint, "drink.coffee", "用户从不喝咖啡", ""}}},
		{"zh procedure", userTurn("1", "如果搜索接口超时，就换用备用接口"), []wantCand{{pro, memory.CatSkill, "", "如果搜索接口超时，就换用备用接口", ""}}},
		{"zh bounded prohibition", userTurn("1", "明天下午不要安排会议"),
			[]wantCand{{sem, memory.CatConstraint, "meeting.avoid_time", "用户要求明天(2026-01-06)下午不要安排会议", "2026-01-07"}}},
		{"zh dislike", userTurn("1", "我讨厌香菜"), []wantCand{{sem, memory.CatPreference, "food.ingredient.cilantro", "用户讨厌香菜", ""}}},
		{"zh relation", userTurn("1", "我的老板叫赵敏"), []wantCand{{sem, memory.CatRelationship, "relation.manager.name", "用户的老板叫赵敏", ""}}},
		{"zh timezone", userTurn("1", "我的时区是东京时间"), []wantCand{{sem, memory.CatProfile, "user.timezone", "用户的时区是东京时间", ""}}},
		{"zh diet", userTurn("1", "我吃素"), []wantCand{{sem, memory.CatConstraint, "food.diet", "用户吃素", ""}}},
		{"zh no calls after 10", userTurn("1", "别在晚上10点后给我打电话"),
			[]wantCand{{sem, memory.CatConstraint, "notification.quiet_hours", "用户要求别在晚上10点后给用户打电话", ""}}},
		{"zh polite request", userTurn("1", "你能记住我不能吃辣吗？"), []wantCand{{sem, memory.CatConstraint, "food.spicy", "用户不能吃辣", ""}}},
		{"zh multi sentence", userTurn("1", "好的。我叫周敏，我住在厦门。我对虾过敏！"), []wantCand{
			{sem, memory.CatProfile, "user.name", "用户的名字是周敏", ""},
			{sem, memory.CatProfile, "user.location", "用户住在厦门", ""},
			{sem, memory.CatConstraint, "allergy.shrimp", "用户对虾过敏", ""}}},
		// English.
		{"en editor theme", userTurn("1", "I prefer a light theme in my editor"),
			[]wantCand{{sem, memory.CatPreference, "editor.theme", "The user prefers a light theme in their editor", ""}}},
		{"en name", userTurn("1", "My name is Grace Okafor"), []wantCand{{sem, memory.CatProfile, "user.name", "The user's name is Grace Okafor", ""}}},
		{"en location", userTurn("1", "I live in Lyon with my family"), []wantCand{{sem, memory.CatProfile, "user.location", "The user lives in Lyon", ""}}},
		{"en employer", userTurn("1", "I work at Globex Industries"), []wantCand{{sem, memory.CatProfile, "user.employer", "The user works at Globex Industries", ""}}},
		{"en avoid meetings", userTurn("1", "Don't schedule meetings on Friday afternoons"),
			[]wantCand{{sem, memory.CatConstraint, "meeting.avoid_time", "The user asked not to schedule meetings on Friday afternoons", ""}}},
		{"en allergy", userTurn("1", "I'm allergic to shellfish"), []wantCand{{sem, memory.CatConstraint, "allergy.seafood", "The user is allergic to shellfish", ""}}},
		{"en remember relation", userTurn("1", "Remember that my wife's name is Sofia Reyes"),
			[]wantCand{{sem, memory.CatRelationship, "relation.wife.name", "The user's wife's name is Sofia Reyes", ""}}},
		{"en remember fact", userTurn("1", "Please remember that the office wifi password is tulip42"),
			[]wantCand{{sem, memory.CatFact, "", "The user asked to remember that the office wifi password is tulip42", ""}}},
		{"en decision", userTurn("1", "We decided to use Redis because it is already in our stack"),
			[]wantCand{{sem, memory.CatDecision, "", "The user decided to use Redis because it is already in their stack", ""}}},
		{"en lets", userTurn("1", "Let's go with option B"), []wantCand{{sem, memory.CatDecision, "", "The user decided to go with option B", ""}}},
		{"en language", userTurn("1", "Always reply in English"), []wantCand{{sem, memory.CatPreference, "language.preference", "The user asked to always reply in English", ""}}},
		{"en role", userTurn("1", "I'm a software engineer"), []wantCand{{sem, memory.CatProfile, "user.role", "The user is a software engineer", ""}}},
		{"en diet", userTurn("1", "I'm vegetarian"), []wantCand{{sem, memory.CatProfile, "food.diet", "The user is vegetarian", ""}}},
		{"en task done", userTurn("1", "I finished the quarterly report yesterday"),
			[]wantCand{{epi, memory.CatEvent, "", "The user finished the quarterly report yesterday (2026-01-04)", ""}}},
		{"en temporary state", userTurn("1", "This week I'm in Berlin for a conference"),
			[]wantCand{{sem, memory.CatFact, "user.status", "This week (2026-01-05 to 2026-01-11) the user is in Berlin for a conference", "2026-01-12"}}},
		{"en until", userTurn("1", "I'm on leave until Friday"),
			[]wantCand{{sem, memory.CatFact, "user.status", "until Friday (2026-01-09)", "2026-01-10"}}},
		{"en never alcohol", userTurn("1", "I never drink beer"), []wantCand{{sem, memory.CatConstraint, "drink.alcohol", "The user never drinks beer", ""}}},
		{"en love sushi", userTurn("1", "I love sushi"), []wantCand{{sem, memory.CatPreference, "food.cuisine.japanese", "The user loves sushi", ""}}},
		{"en dislike", userTurn("1", "I really don't like cilantro"),
			[]wantCand{{sem, memory.CatPreference, "food.ingredient.cilantro", "The user really doesn't like cilantro", ""}}},
		{"en procedure", userTurn("1", "When the deploy script fails with a timeout, rerun it with --retry 3"),
			[]wantCand{{pro, memory.CatSkill, "", "User instruction: when the deploy script fails", ""}}},
		{"en meeting time", userTurn("1", "I'd prefer morning meetings"),
			[]wantCand{{sem, memory.CatPreference, "meeting.preferred_time", "The user would prefer morning meetings", ""}}},
		{"en origin", userTurn("1", "I'm from Toronto"), []wantCand{{sem, memory.CatProfile, "user.origin", "The user is from Toronto", ""}}},
		{"en from now on", userTurn("1", "From now on, use tabs for indentation"),
			[]wantCand{{sem, memory.CatPreference, "code.indentation", "The user asked to use tabs for indentation from now on", ""}}},
		{"en favorite", userTurn("1", "My favorite color is blue"), []wantCand{{sem, memory.CatPreference, "favorite.color", "The user's favorite color is blue", ""}}},
		{"en multi sentence", userTurn("1", "My name is Bob. I live in Paris. I hate spicy food."), []wantCand{
			{sem, memory.CatProfile, "user.name", "The user's name is Bob", ""},
			{sem, memory.CatProfile, "user.location", "The user lives in Paris", ""},
			{sem, memory.CatPreference, "food.spicy", "The user hates spicy food", ""}}},
		{"assistant price claim", memory.Turn{TurnID: "a", Role: memory.RoleAssistant, Content: "我们提供开发者社区免费高级版，年费 199 元。还有什么需要帮忙的吗？", OccurredAt: refMonday},
			[]wantCand{{sem, memory.CatFact, "", "助手称：我们提供开发者社区免费高级版，年费 199 元", ""}}},
		{"assistant policy claim", memory.Turn{TurnID: "a", Role: memory.RoleAssistant, Content: "Sure! We offer a 30-day refund on all plans.", OccurredAt: refMonday},
			[]wantCand{{sem, memory.CatFact, "", "The assistant stated: We offer a 30-day refund on all plans", ""}}},
		{"tool task result", memory.Turn{TurnID: "x", Role: memory.RoleTool, TaskID: "T-9", Tool: &memory.ToolCall{Name: "report", Status: "success"}, Content: "report.pdf generated", OccurredAt: refMonday},
			[]wantCand{{epi, memory.CatEvent, "", `Task T-9: tool "report" succeeded: report.pdf generated`, ""}}},
		// Small talk and other turns without a signal yield nothing.
		{"hi", userTurn("1", "hi"), nil},
		{"thanks", userTurn("1", "thanks!"), nil},
		{"ok", userTurn("1", "ok"), nil},
		{"haha", userTurn("1", "哈哈"), nil},
		{"nihao", userTurn("1", "你好"), nil},
		{"haode", userTurn("1", "好的"), nil},
		{"xiexie", userTurn("1", "谢谢"), nil},
		{"zaima", userTurn("1", "在吗"), nil},
		{"lol", userTurn("1", "lol"), nil},
		{"good morning", userTurn("1", "good morning"), nil},
		{"emojis", userTurn("1", "👍🙏"), nil},
		{"laughing", userTurn("1", "哈哈哈哈，太好了"), nil},
		{"sounds good", userTurn("1", "Sounds good, thanks!"), nil},
		{"bukeqi", userTurn("1", "不客气"), nil},
		{"weather", userTurn("1", "今天天气真好"), nil},
		{"question", userTurn("1", "What time is it?"), nil},
		{"zh question", userTurn("1", "你记得我叫什么吗？"), nil},
		{"dont know", userTurn("1", "I don't know"), nil},
		{"never mind", userTurn("1", "never mind"), nil},
		{"false friend bie", userTurn("1", "特别好"), nil},
		{"request without signal", userTurn("1", "Can you help me write an email?"), nil},
		{"zh i mean", userTurn("1", "我的意思是下周再说"), nil},
		{"assistant small talk", memory.Turn{TurnID: "a", Role: memory.RoleAssistant, Content: "Sure, how can I help you today?"}, nil},
		{"assistant ack", memory.Turn{TurnID: "a", Role: memory.RoleAssistant, Content: "好的，没问题。"}, nil},
		{"tool success alone", memory.Turn{TurnID: "x", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search", Status: "success"}, Content: "3 results"}, nil},
		{"system", memory.Turn{TurnID: "s", Role: memory.RoleSystem, Content: "You must always answer in English."}, nil},
		{"deleted", memory.Turn{TurnID: "d", Role: memory.RoleUser, Content: "I live in Lyon", Deleted: true}, nil},
		// Said to a friend, not asked of the assistant: an idiom with the friend's name,
		// "always" before no verb, advice about the listener's life, the speaker's own
		// memory.
		{"no prob with a name", userTurn("1", "No prob, Priya!"), nil},
		{"no doubts with a name", userTurn("1", "No doubts, Marcus. You have such a steady hand."), nil},
		{"always around", userTurn("1", "Always around if you need a hand, Dana."), nil},
		{"always here", userTurn("1", "Always here to listen, Dana."), nil},
		{"advice after an imperative", userTurn("1", "Don't give up, remember, the hard weeks make you stronger."), nil},
		{"advice after the cue", userTurn("1", "Don't forget, trust yourself and your instincts."), nil},
		{"own memory", userTurn("1", "I do remember that concert."), nil},
		// "Always" of an activity or of other things is no habit of the speaker's.
		{"remark on an activity", userTurn("1", "Baking bread with friends is always calming."), nil},
		{"remark on trips", userTurn("1", "Those lake trips are always a blast."), nil},
		// The same words asked of the assistant stay requests.
		{"remember a listener rule", userTurn("1", "Remember, you must answer me in Spanish."),
			[]wantCand{{sem, memory.CatConstraint, "-", "You must answer the user in Spanish", ""}}},
		{"remembering a trip", userTurn("1", "I remember when we drove to the coast."),
			[]wantCand{{epi, memory.CatEvent, "", "The user remembers when they drove to the coast", ""}}},
		// What the speaker is in the middle of, told with a contraction as often as not.
		{"ongoing with a contraction", userTurn("1", "I'm currently learning the cello."),
			[]wantCand{{epi, memory.CatEvent, "", "The user is currently learning the cello", ""}}},
		{"ongoing without a subject", userTurn("1", "Been baking a lot lately."),
			[]wantCand{{epi, memory.CatEvent, "", "The user has been baking a lot lately", ""}}},
		{"an idiom of experience", userTurn("1", "Been there, done that."), nil},
		{"ongoing for a while", userTurn("1", "I've been volunteering at the animal shelter."),
			[]wantCand{{epi, memory.CatEvent, "", "The user has been volunteering at the animal shelter", ""}}},
		// What matters to the speaker is a preference; a thank-you is not.
		{"what matters", userTurn("1", "Weekend hikes really matter to me."),
			[]wantCand{{sem, memory.CatPreference, "-", "Weekend hikes really matter to the user", ""}}},
		{"what is important", userTurn("1", "Punctuality is very important to me."),
			[]wantCand{{sem, memory.CatPreference, "-", "Punctuality is very important to the user", ""}}},
		{"zh what is important", userTurn("1", "睡眠对我来说特别重要"),
			[]wantCand{{sem, memory.CatPreference, "-", "睡眠对用户来说特别重要", ""}}},
		{"a thank-you", userTurn("1", "It means a lot to me that you called."), nil},
		{"the listener's words", userTurn("1", "Your advice means so much to me."), nil},
		// Hopes and dreams are the speaker's plans too.
		{"a hope", userTurn("1", "I hope to climb Kilimanjaro in two years."),
			[]wantCand{{epi, memory.CatEvent, "", "The user hopes to climb Kilimanjaro in two years (2028)", "2029-01-01"}}},
		{"hoping", userTurn("1", "I'm hoping to move closer to my sister."),
			[]wantCand{{epi, memory.CatEvent, "", "The user is hoping to move closer to their sister", ""}}},
		{"a dream", userTurn("1", "It's long been my dream to restore an old sailboat."),
			[]wantCand{{epi, memory.CatEvent, "", "dream to restore an old sailboat", ""}}},
		{"a wish for the listener", userTurn("1", "I hope you feel better soon."), nil},
		{"own habit", userTurn("1", "I always take the stairs."),
			[]wantCand{{sem, memory.CatPreference, "-", "always takes the stairs", ""}}},
		{"always a verb", userTurn("1", "Always copy my manager on invoices."),
			[]wantCand{{sem, memory.CatPreference, "", "asked to always copy their manager on invoices", ""}}},
		{"no onions", userTurn("1", "No onions on my burgers, please."),
			[]wantCand{{sem, memory.CatConstraint, "-", "asked for no onions", ""}}},
	}
	o := NewOffline()
	negatives := 0
	for _, tt := range tests {
		if tt.want == nil {
			negatives++
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := Batch{Tenant: "acme", UserID: "u1", SessionID: "s1", New: []memory.Turn{tt.turn}}
			got, err := o.Extract(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d candidates, want %d: %s", len(got), len(tt.want), dump(got))
			}
			for i, w := range tt.want {
				c := got[i]
				if c.Type != w.typ || c.Category != w.cat || (w.key != "-" && c.Key != w.key) || !strings.Contains(c.Content, w.substr) {
					t.Errorf("candidate %d = %s/%s key %q %q; want %s/%s key %q containing %q", i, c.Type, c.Category, c.Key, c.Content, w.typ, w.cat, w.key, w.substr)
				}
				exp := ""
				if c.ExpireAt != nil {
					exp = c.ExpireAt.Format("2006-01-02")
				}
				if exp != w.expire {
					t.Errorf("candidate %d expire_at = %q, want %q", i, exp, w.expire)
				}
				checkCommon(t, c, tt.turn)
			}
		})
	}
	if len(tests) < 40 || negatives < 12 {
		t.Fatalf("table too small: %d cases, %d negatives", len(tests), negatives)
	}
}

// checkCommon checks the fields every offline candidate carries.
func checkCommon(t *testing.T, c memory.Candidate, turn memory.Turn) {
	t.Helper()
	if c.Tenant != "acme" || c.UserID != "u1" || c.Scope != memory.ScopeUser {
		t.Errorf("ownership = %q/%q/%q", c.Tenant, c.UserID, c.Scope)
	}
	if !c.Type.Valid() || !c.Category.Valid() || c.Importance <= 0 || c.Importance > 1 || c.Confidence <= 0 || c.Confidence > 1 {
		t.Errorf("invalid kind or scores: %+v", c)
	}
	if c.Extractor != OfflineName || c.ExtractorVersion != OfflineVersion || c.Model != "" {
		t.Errorf("extractor = %q %q %q", c.Extractor, c.ExtractorVersion, c.Model)
	}
	if !c.ValidFrom.Equal(turn.OccurredAt) || len(c.SourceTurnIDs) == 0 || c.SourceTurnIDs[0] != turn.TurnID {
		t.Errorf("valid_from %v source %v", c.ValidFrom, c.SourceTurnIDs)
	}
	if wantSrc := sourceOf(turn.Role); c.Source != wantSrc || c.Trusted != (wantSrc != memory.SourceAssistant) {
		t.Errorf("source %q trusted %v", c.Source, c.Trusted)
	}
	if c.ID != "" {
		t.Errorf("extractor must leave ID to the pipeline, got %q", c.ID)
	}
}

func dump(cs []memory.Candidate) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\n  " + string(c.Type) + "/" + string(c.Category) + " key=" + c.Key + " " + c.Content)
	}
	return b.String()
}

func TestOfflineImportance(t *testing.T) {
	t.Parallel()
	o := NewOffline()
	got, err := o.Extract(context.Background(), Batch{New: []memory.Turn{
		userTurn("1", "不要在晚上给我发消息"), userTurn("2", "我喜欢湘菜"), userTurn("3", "我叫刘洋"), userTurn("4", "项目周报已经写好了"),
		userTurn("5", "以后开会尽量安排在下午"),
	}})
	if err != nil || len(got) != 5 {
		t.Fatalf("got %d, %v", len(got), err)
	}
	if !(got[0].Importance > got[1].Importance && got[2].Importance > got[1].Importance && got[1].Importance > got[3].Importance) {
		t.Errorf("importance order wrong: constraint %.1f preference %.1f identity %.1f event %.1f",
			got[0].Importance, got[1].Importance, got[2].Importance, got[3].Importance)
	}
	if got[4].Confidence >= got[1].Confidence {
		t.Errorf("hedged (尽量) confidence %.1f should be below explicit %.1f", got[4].Confidence, got[1].Confidence)
	}
}

// recoveryBatch has one search_api failure→success pair across window and batch, and a
// second pair inside the batch.
func recoveryBatch(secondPair bool) Batch {
	at := func(m int) time.Time { return refMonday.Add(time.Duration(m) * time.Minute) }
	b := Batch{Tenant: "acme", UserID: "u1", SessionID: "s1",
		Window: []memory.Turn{
			{TurnID: "w1", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search_api", Status: "failure", Error: "timeout after 30s"}, OccurredAt: at(0)},
			{TurnID: "w2", Role: memory.RoleAssistant, Content: "I'll retry with a longer timeout of 60s.", OccurredAt: at(1)},
		},
		New: []memory.Turn{
			{TurnID: "n1", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search_api", Status: "success"}, Content: "3 results", OccurredAt: at(2)},
		}}
	if secondPair {
		b.New = append(b.New,
			memory.Turn{TurnID: "n2", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search_api", Status: "failure", Error: "timeout after 31s"}, OccurredAt: at(3)},
			memory.Turn{TurnID: "n3", Role: memory.RoleTool, Tool: &memory.ToolCall{Name: "search_api", Status: "success"}, OccurredAt: at(4)})
	}
	return b
}

func TestOfflineToolRecovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		b     Batch
		ids   []string
		conf  float64
		pairs int
	}{
		{"one pair", recoveryBatch(false), []string{"w1", "n1"}, 0.6, 1},
		{"two pairs", recoveryBatch(true), []string{"w1", "n1", "n2", "n3"}, 0.8, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := NewOffline().Extract(context.Background(), tt.b)
			if err != nil || len(got) != 1 {
				t.Fatalf("got %d candidates, %v: %s", len(got), err, dump(got))
			}
			c := got[0]
			if c.Type != memory.Procedural || c.Category != memory.CatSkill || c.Key != "tool.search_api.recovery.timeout" ||
				c.Source != memory.SourceTool || !c.Trusted {
				t.Errorf("candidate = %+v", c)
			}
			if !strings.Contains(c.Content, `When tool "search_api" fails with "timeout after`) || !strings.Contains(c.Content, "what worked: I'll retry with a longer timeout of 60s") {
				t.Errorf("content = %q", c.Content)
			}
			if !reflect.DeepEqual(c.SourceTurnIDs, tt.ids) || c.Confidence != tt.conf || c.Metadata["pairs"] != tt.pairs {
				t.Errorf("ids %v conf %.1f pairs %v; want %v %.1f %d", c.SourceTurnIDs, c.Confidence, c.Metadata["pairs"], tt.ids, tt.conf, tt.pairs)
			}
		})
	}
}

func TestOfflineReproposesClaimOnLateConfirmation(t *testing.T) {
	t.Parallel()
	b := Batch{Tenant: "acme", UserID: "u1",
		Window: []memory.Turn{{TurnID: "a1", Role: memory.RoleAssistant, Content: "我们提供开发者社区免费高级版，年费 199 元", OccurredAt: refMonday}},
		New:    []memory.Turn{userTurn("u2", "对")},
	}
	got, err := NewOffline().Extract(context.Background(), b)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d, %v", len(got), err)
	}
	if got[0].Source != memory.SourceAssistant || !reflect.DeepEqual(got[0].SourceTurnIDs, []string{"a1"}) {
		t.Fatalf("candidate = %+v", got[0])
	}
	trusted := ApplyTrust(b, got)
	if !trusted[0].Trusted || !reflect.DeepEqual(trusted[0].SourceTurnIDs, []string{"a1", "u2"}) {
		t.Fatalf("after trust = %+v", trusted[0])
	}
}

func TestOfflineDeterministic(t *testing.T) {
	t.Parallel()
	b := recoveryBatch(true)
	b.New = append(b.New,
		userTurn("m1", "以后安排会议尽量避开每周四上午，因为周四上午要带孩子。会议室优先选三楼靠窗那间。"),
		userTurn("m2", "My name is Bob. This week I'm in Berlin. I hate spicy food."),
		memory.Turn{TurnID: "m3", Role: memory.RoleAssistant, Content: "We offer a free premium plan; it costs $0 for 12 months."},
		userTurn("m4", "yes"),
	)
	o := NewOffline()
	first, err := o.Extract(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 6 {
		t.Fatalf("too few candidates: %s", dump(first))
	}
	for range 3 {
		again, err := NewOffline().Extract(context.Background(), b)
		if err != nil || !reflect.DeepEqual(first, again) {
			t.Fatalf("not deterministic:%s\nvs%s", dump(first), dump(again))
		}
	}
}

func TestOfflineContextCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewOffline().Extract(ctx, Batch{New: []memory.Turn{userTurn("1", "我叫刘洋")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestOfflineIdentity(t *testing.T) {
	t.Parallel()
	o := NewOffline()
	if o.Name() != "offline-rules" || o.Version() == "" || o.Model() != "" {
		t.Fatalf("identity = %q %q %q", o.Name(), o.Version(), o.Model())
	}
}

func TestThirdPersonEN(t *testing.T) {
	t.Parallel()
	o := NewOffline()
	tests := []struct {
		in   string
		cat  memory.Category
		want string
	}{
		{"I prefer large fonts in my editor", memory.CatPreference, "The user prefers large fonts in their editor"},
		{"I always use tabs and I hate spaces", memory.CatPreference, "The user always uses tabs and they hate spaces"},
		{"I really don't like mornings", memory.CatPreference, "The user really doesn't like mornings"},
		{"I go to the gym and my coach helps me", memory.CatFact, "The user goes to the gym and their coach helps them"},
		{"Never call me before 9am", memory.CatConstraint, "The user asked never to call them before 9am"},
		{"Stop sending me newsletters", memory.CatConstraint, "The user asked to stop sending them newsletters"},
		{"No meetings on Fridays", memory.CatConstraint, "The user asked for no meetings on Fridays"},
		{"Email is the best way to reach me", memory.CatPreference, "Email is the best way to reach the user"},
		{"Meeting rooms on the third floor are best", memory.CatPreference, "User preference: meeting rooms on the third floor are best"},
		{"The US office closes at 5", memory.CatFact, "The user stated: the US office closes at 5"},
	}
	for _, tt := range tests {
		if got := o.thirdPerson(tt.in, tt.cat, string(tt.cat)); got != tt.want {
			t.Errorf("thirdPerson(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
