package consolidator

import (
	"cmp"
	"context"
	"testing"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

func TestFeatures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text             string
		negative, change bool
	}{
		{"用户喜欢吃辣", false, false},
		{"用户不喜欢吃辣", true, false},
		{"这家店不错，用户特别喜欢", false, false}, // 不错 and 特别 do not negate
		{"用户讨厌喝奶茶", true, false},
		{"周五下午开会也可以了", false, true},
		{"用户不再喝咖啡了", true, true},
		{"用户改成晚上10点睡觉", false, true},
		{"I love Chinese food", false, false},
		{"I don't love Chinese food", true, false},
		{"I don’t love Chinese food", true, false},
		{"The user no longer likes morning meetings.", true, true},
		{"The user now prefers light mode.", false, true},
		{"The user likes coffee without sugar.", false, false},
	} {
		f := features(tc.text)
		if f.negative != tc.negative || f.change != tc.change {
			t.Errorf("%q: negative %v change %v, want %v %v", tc.text, f.negative, f.change, tc.negative, tc.change)
		}
	}
}

func TestProperNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"The user plays tennis with Alice on Mondays.", []string{"alic", "monday"}},
		{"Alice Chen is the user's manager.", []string{"chen"}},
		{"The user's manager is Alice Chen. Bob is new.", []string{"alic", "chen"}},
		{"I love Chinese food", []string{"chines"}},
		{"用户住在上海", nil},
	} {
		got := properNames(tc.text)
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %v, want %v", tc.text, got, tc.want)
			continue
		}
		for _, w := range tc.want {
			if _, ok := got[w]; !ok {
				t.Errorf("%q: got %v, want %v", tc.text, got, tc.want)
			}
		}
	}
}

func TestRelate(t *testing.T) {
	t.Parallel()
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultResolverConfig()
	for _, tc := range []struct {
		old, oldKey, new, newKey string
		typ                      memory.Type
		want                     relation
		oldTyp                   memory.Type // the old memory's type when it is not typ
	}{
		{"The user plays tennis with Alice on Mondays.", "", "The user plays tennis with Bob on Mondays.", "", memory.Semantic, relUnrelated, ""},
		{"用户每天早上7点起床", "schedule.sleep", "用户每天早上6点起床", "schedule.sleep", memory.Semantic, relContradiction, ""},
		{"The user lives in Berlin.", "user.location", "The user lives in Munich.", "user.location", memory.Semantic, relContradiction, ""},
		{"The user likes tea.", "drink.tea", "The user likes coffee.", "drink.coffee", memory.Semantic, relUnrelated, ""},
		{"The user flew to Tokyo on 2026-01-10.", "", "The user flew to Tokyo on 2026-03-02.", "", memory.Episodic, relUnrelated, ""},
		{"The user flew to Tokyo on 2026-01-10.", "", "The user flew to Tokyo on 2026-01-10.", "", memory.Episodic, relDuplicate, ""},
		{"I love Chinese food", "", "I hate Chinese food", "", memory.Semantic, relContradiction, ""},
		{"The user likes coffee.", "", "The user likes coffee, especially oat milk lattes.", "", memory.Semantic, relRefinement, ""},
		{"The user prefers dark mode in every app.", "", "The user prefers dark mode.", "", memory.Semantic, relDuplicate, ""},
		// A timetable moved to another day: a change cue, a shared name, another weekday.
		{"Tomasz has judo on Mondays at 6.", "", "Tomasz does judo on Wednesdays at 6 now.", "", memory.Semantic, relContradiction, ""},
		{"用户的瑜伽课在每周二晚上", "", "瑜伽课现在改到周四晚上了", "", memory.Semantic, relContradiction, ""},
		{"用户儿子的游泳课在每周三下午", "", "游泳课挪到周五下午了", "", memory.Semantic, relContradiction, ""},
		{"用户女儿的舞蹈课在每周六上午，所以周六上午别给用户排事", "", "舞蹈课挪到周日下午了", "", memory.Semantic, relContradiction, ""},
		// The change names the day it freed as well as the new one.
		{"用户女儿的舞蹈课在每周六上午，所以周六上午别给用户排事", "", "老师说舞蹈课挪到周日下午了，周六上午空出来了", "", memory.Semantic, relContradiction, ""},
		{"Tomasz has judo on Mondays at 6.", "", "Tomasz's judo moved to Wednesdays now, so Mondays are free again.", "", memory.Semantic, relContradiction, ""},
		// Another day without a change cue is another fact: both can hold.
		{"Tomasz has judo on Mondays at 6.", "", "Tomasz has chess club on Wednesdays at 6.", "", memory.Semantic, relUnrelated, ""},
		// A standing fact that switches who does something revises the event that named
		// the one before; another event does not.
		{"用户今天找仓库的老周对接发货，一直没回消息", "", "仓库对接现在换成小李了", "", memory.Semantic, relContradiction, memory.Episodic},
		{"用户今天找仓库的老周对接发货，一直没回消息", "", "仓库对接现在换成小李了", "", memory.Episodic, relUnrelated, memory.Episodic},
	} {
		vs, err := emb.Embed(context.Background(), []string{tc.old, tc.new})
		if err != nil {
			t.Fatal(err)
		}
		c := memory.Candidate{Content: tc.new, Key: tc.newKey, Type: tc.typ}
		oldTyp := cmp.Or(tc.oldTyp, tc.typ)
		n := scored{mem: memory.Memory{Content: tc.old, Key: tc.oldKey, Type: oldTyp}, sim: float64(llm.Cosine(vs[0], vs[1])),
			sameKey: tc.newKey != "" && tc.newKey == tc.oldKey}
		if got := cfg.relate(c, features(tc.new), n, features(tc.old)); got.rel != tc.want {
			t.Errorf("%q → %q: %s (%s), want %s", tc.old, tc.new, got.rel, got.reason, tc.want)
		}
	}
}

func TestThingSlots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"taste.coffee", "drink.coffee", true},
		{"habit.play.squash", "taste.squash", true},
		{"habit.swim", "habit.swim.laps", false},
		{"habit.knit", "taste.knit", true},
		{"taste.coffee", "taste.tea", false},
		{"user.location", "taste.location", false},
		{"plan.flight", "plan.flight.oslo", true},
	} {
		if got := sameSlot(tc.a, tc.b); got != tc.same {
			t.Errorf("sameSlot(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// TestDetailKeptBeside: a sentence told together with several slot values (the
// extractor's "detail") neither refines a slot's memory nor is confirmed by a slot's
// candidate: merged into one slot it would keep another slot's old value there. The
// sentences were written for this test.
func TestDetailKeptBeside(t *testing.T) {
	t.Parallel()
	cfg := DefaultResolverConfig()
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	detail := "The user is a staff nurse at Kellerton General, mostly on the night ward"
	for _, tc := range []struct {
		name        string
		c           memory.Candidate
		old, oldKey string
		oldMeta     map[string]any
	}{
		{"detail against a slot", memory.Candidate{Content: detail, Type: memory.Semantic, Metadata: map[string]any{"rule": "detail"}},
			"The user is a staff nurse", "user.role", nil},
		{"slot against a detail", memory.Candidate{Content: "The user is a staff nurse", Key: "user.role", Type: memory.Semantic},
			detail, "", map[string]any{"rule": "detail"}},
	} {
		vs, err := emb.Embed(context.Background(), []string{tc.old, tc.c.Content})
		if err != nil {
			t.Fatal(err)
		}
		n := scored{mem: memory.Memory{Content: tc.old, Key: tc.oldKey, Type: memory.Semantic, Metadata: tc.oldMeta},
			sim: float64(llm.Cosine(vs[0], vs[1]))}
		if got := cfg.relate(tc.c, features(tc.c.Content), n, features(tc.old)); got.rel != relUnrelated {
			t.Errorf("%s: %s (%s), want unrelated", tc.name, got.rel, got.reason)
		}
	}
}
