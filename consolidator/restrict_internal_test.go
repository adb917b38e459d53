package consolidator

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// Sentences written for this test, not taken from any evaluation set.
func TestRestricted(t *testing.T) {
	tests := []struct{ content, want string }{
		{"The user can't eat peanuts anymore", "peanuts"},
		{"The user is severely allergic to shellfish", "shellfish"},
		{"The user cannot drink raw milk anymore, the clinic said", "milk"},
		{"The user gave up sugar last month", "sugar"},
		{"用户以后不能吃甜了", "甜"},
		{"用户对芒果过敏", "芒果"},
		{"用户戒了喝酒", "酒"},
		{"The user prefers tea", ""},
		{"The user found out they have a sesame allergy", "sesame"},
		{"Tests showed an intolerance to lactose", "lactose"},
		{"医生说以后甜的一口都不能碰了", "甜"},
		{"用户咖啡也不能喝了", "咖啡"},
		{"医生说用户三个月内别跑了，先养伤", "跑"},
		{"The physio says the user can't go running until spring", "running"},
		{"用户肾结石，菠菜和豆腐都不能吃了", "豆腐"},
	}
	for _, tt := range tests {
		if got := restricted(tt.content); got != tt.want {
			t.Errorf("restricted(%q) = %q, want %q", tt.content, got, tt.want)
		}
	}
}

func TestRestrictionRulesOut(t *testing.T) {
	constraint := func(key, content string) memory.Candidate {
		return memory.Candidate{Key: key, Category: memory.CatConstraint, Content: content}
	}
	liking := func(key, content string) memory.Memory {
		return memory.Memory{Key: key, Category: memory.CatPreference, Content: content}
	}
	tests := []struct {
		name string
		c    memory.Candidate
		m    memory.Memory
		want bool
	}{
		{"english liking named", constraint("taste.peanut", "The user can't eat peanuts anymore"), liking("taste.snack", "The user loves peanut butter cookies"), true},
		{"chinese liking named", constraint("food.sweet", "用户以后不能吃甜了"), liking("food.cuisine.dessert", "用户最喜欢甜点，越甜越好"), true},
		{"other liking kept", constraint("taste.peanut", "The user can't eat peanuts anymore"), liking("taste.tea", "The user loves green tea"), false},
		{"not a liking", constraint("taste.peanut", "The user can't eat peanuts anymore"), memory.Memory{Key: "pet.dog.name", Category: memory.CatFact, Content: "The user's dog Peanut"}, false},
		{"not a restriction", memory.Candidate{Key: "taste.peanut", Category: memory.CatPreference, Content: "The user likes peanuts"}, liking("taste.snack", "The user loves peanut butter"), false},
		{"not about food", constraint("work.meetings", "The user can't attend meetings on Friday"), liking("taste.friday", "The user loves Friday meetings"), false},
		{"keyed otherwise", constraint("habit.developed", "The user has developed a sesame allergy"), liking("taste.bagel", "The user loves sesame bagels"), true},
		{"a liking filed as a constraint", constraint("food.sweet", "用户以后不能吃甜了"), memory.Memory{Key: "", Category: memory.CatConstraint, Content: "用户最爱吃甜的，每顿必须有甜点"}, true},
		{"a habit of a sport ruled out", constraint("", "医生说用户三个月内别跑了"), memory.Memory{Category: memory.CatPreference, Content: "用户每天晚上夜跑三公里"}, true},
		{"a liking of its own", memory.Candidate{Key: "taste.tea", Category: memory.CatPreference, Content: "The user loves tea"}, liking("taste.tea", "The user loves tea"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restrictionRulesOut(tt.c, tt.m); got != tt.want {
				t.Errorf("restrictionRulesOut = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSameShapeID(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"Q4471", "Q4417", true},
		{"ZX-90812", "ZX-90821", true},
		{"7731", "7713", true},
		{"R1234", "R4321", true},
		{"R1234", "S1234", false},
		{"R1234", "R12345", false},
		{"R1234", "R1234", false},
		{"10203040", "50607080", false},
	}
	for _, tt := range tests {
		if got := sameShapeID(tt.a, tt.b); got != tt.want {
			t.Errorf("sameShapeID(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCorrectsID(t *testing.T) {
	c := memory.Candidate{Content: "The user's badge is Q4417", Metadata: map[string]any{"corrects_like": "Q4417"}}
	if !correctsID(c, memory.Memory{Content: "The user's badge number is Q4471"}) {
		t.Error("the swapped badge number is not corrected")
	}
	if correctsID(c, memory.Memory{Content: "The user's flight is QF12"}) {
		t.Error("an identifier of another shape is corrected")
	}
	if correctsID(memory.Candidate{Content: "The user's badge is Q4417"}, memory.Memory{Content: "badge Q4471"}) {
		t.Error("a candidate that is no correction corrects")
	}
}

func TestReplaceValue(t *testing.T) {
	tests := []struct{ text, wrong, right, want string }{
		{"The user's niece Marla turns nine on Friday", "Marla", "Marlo", "The user's niece Marlo turns nine on Friday"},
		{"Marla, marla and Marlaine", "Marla", "Marlo", "Marlo, Marlo and Marlaine"},
		{"用户的表妹叫小芸，小芸在读大学", "小芸", "小云", "用户的表妹叫小云，小云在读大学"},
		// A date or number among Han characters is bounded by them; a longer number is not it.
		{"用户儿子生日是5月21号，13月21日不是日期", "5月21", "5月12", "用户儿子生日是5月12号，13月21日不是日期"},
		{"门牌是1308号，不是21308", "1308", "1803", "门牌是1803号，不是21308"},
	}
	for _, tt := range tests {
		if got := replaceValue(tt.text, tt.wrong, tt.right); got != tt.want {
			t.Errorf("replaceValue(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// Sentences written for this test, not taken from any evaluation set.
func TestPartedWith(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	sold := memory.Candidate{Content: "The user sold the old van", ValidFrom: day(20),
		Metadata: map[string]any{"parted_with": "van"}}
	tests := []rulingCase{
		{"what was said of it", memory.Memory{Content: "The user's van needs new brakes again", ValidFrom: day(2)}, true},
		{"told of this one", memory.Memory{Content: "The user is fed up with this van", ValidFrom: day(2)}, true},
		{"another thing", memory.Memory{Content: "The user's bike needs new brakes", ValidFrom: day(2)}, false},
		{"a van not theirs", memory.Memory{Content: "A delivery van blocked the drive", ValidFrom: day(2)}, false},
		{"told after the sale", memory.Memory{Content: "The user misses their van", ValidFrom: day(25)}, false},
		{"told in the same turn", memory.Memory{Content: "The user sold their van to a neighbour", ValidFrom: day(20)}, false},
	}
	checkRulesOut(t, sold, tests)
}

// Sentences written for this test, not taken from any evaluation set.
func TestDepartedFrom(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	news := memory.Candidate{Content: "Will and Rosalind retired from the allotment society", ValidFrom: day(20),
		Metadata: map[string]any{"departed": "Will|老周"}}
	tests := []rulingCase{
		{"what was said of him", memory.Memory{Content: "Will runs the allotment society's seed swap", ValidFrom: day(2)}, true},
		{"an event with him", memory.Memory{Content: "The user lent Will a wheelbarrow", ValidFrom: day(3)}, true},
		{"the word, not the name", memory.Memory{Content: "The user will plant garlic in October", ValidFrom: day(2)}, false},
		{"a longer name", memory.Memory{Content: "Willa waters the user's plot", ValidFrom: day(2)}, false},
		{"a Chinese name", memory.Memory{Content: "用户的报销一直找老周签字", ValidFrom: day(2)}, true},
		{"the departure itself, told before", memory.Memory{Content: "Will retired from the allotment society", ValidFrom: day(5)}, false},
		{"told after the news", memory.Memory{Content: "Will still drops by on Sundays", ValidFrom: day(25)}, false},
	}
	checkRulesOut(t, news, tests)
}

// rulingCase is a memory and whether a candidate's ruling retires it.
type rulingCase struct {
	name string
	m    memory.Memory
	want bool
}

func checkRulesOut(t *testing.T, c memory.Candidate, tests []rulingCase) {
	t.Helper()
	r := newRuling(c)
	for _, tt := range tests {
		if got := r.rulesOut(tt.m); got != tt.want {
			t.Errorf("%s: rulesOut(%q) = %v, want %v", tt.name, tt.m.Content, got, tt.want)
		}
	}
}

// Sentences written for this test, not taken from any evaluation set.
func TestGaveUpForAndWarmedUp(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	walking := memory.Candidate{Category: memory.CatPreference, Content: "The user walks the kids to school instead of driving them", ValidFrom: day(20)}
	checkRulesOut(t, walking, []rulingCase{
		{"the habit given up", memory.Memory{Type: memory.Semantic, Content: "The user drives the kids to school every morning", ValidFrom: day(2)}, true},
		{"an event of it", memory.Memory{Type: memory.Episodic, Content: "The user drove to Bath on Saturday", ValidFrom: day(3)}, false},
		{"another habit", memory.Memory{Type: memory.Semantic, Content: "The user swims on Tuesdays", ValidFrom: day(2)}, false},
		{"told after", memory.Memory{Type: memory.Semantic, Content: "The user drives to the depot on Fridays", ValidFrom: day(25)}, false},
	})
	warmed := memory.Candidate{Category: memory.CatPreference, Content: "The user has come around on olives, liked them at a tapas bar", ValidFrom: day(20)}
	checkRulesOut(t, warmed, []rulingCase{
		{"the avoidance", memory.Memory{Content: "The user hates olives, never add them to salads", ValidFrom: day(2)}, true},
		{"a liking", memory.Memory{Content: "The user loves olive oil on bread", ValidFrom: day(2)}, false},
		{"another avoidance", memory.Memory{Content: "The user never eats anchovies", ValidFrom: day(2)}, false},
	})
	warmedZH := memory.Candidate{Category: memory.CatPreference, Content: "用户说榴莲其实也挺香的，以后买水果不用避开了", ValidFrom: day(20)}
	checkRulesOut(t, warmedZH, []rulingCase{
		{"the avoidance", memory.Memory{Content: "用户不吃榴莲，闻到就难受", ValidFrom: day(2)}, true},
		{"another", memory.Memory{Content: "用户不吃香菜", ValidFrom: day(2)}, false},
	})
	sport := memory.Candidate{Category: memory.CatPreference, Content: "医生说用户腰伤了，不让打网球了，改成散步", ValidFrom: day(20)}
	checkRulesOut(t, sport, []rulingCase{
		{"the habit", memory.Memory{Content: "用户每周三晚上打网球", ValidFrom: day(2)}, true},
		{"another habit", memory.Memory{Content: "用户每周三晚上练书法", ValidFrom: day(2)}, false},
	})
}

// Sentences written for this test, not taken from any evaluation set.
func TestRecoveredFrom(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	healed := memory.Candidate{Category: memory.CatFact, Content: "The user's knee is fully healed, the surgeon cleared them for football", ValidFrom: day(20)}
	checkRulesOut(t, healed, []rulingCase{
		{"the injury's rule", memory.Memory{Type: memory.Semantic, Category: memory.CatConstraint, Content: "The user hurt their knee, no stairs in any walking route", ValidFrom: day(2)}, true},
		{"another part", memory.Memory{Type: memory.Semantic, Category: memory.CatConstraint, Content: "The user has a sore shoulder, no overhead presses", ValidFrom: day(2)}, false},
		{"the injury as an event", memory.Memory{Type: memory.Episodic, Content: "The user hurt their knee skiing", ValidFrom: day(2)}, false},
		{"the knee without an injury", memory.Memory{Type: memory.Semantic, Content: "The user wears a knee brace for style", ValidFrom: day(2)}, false},
	})
	healedZH := memory.Candidate{Category: memory.CatFact, Content: "用户脚踝已经完全好了，可以正常跑步", ValidFrom: day(20)}
	checkRulesOut(t, healedZH, []rulingCase{
		{"the injury's rule", memory.Memory{Type: memory.Semantic, Category: memory.CatConstraint, Content: "用户脚踝扭伤了，别安排爬山", ValidFrom: day(2)}, true},
		{"another part", memory.Memory{Type: memory.Semantic, Category: memory.CatConstraint, Content: "用户肩膀疼，别安排游泳", ValidFrom: day(2)}, false},
	})
}

// Sentences written for this test, not taken from any evaluation set.
func TestQuitHabitOfASubstance(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	quit := memory.Candidate{Category: memory.CatPreference, Content: "The user quit smoking after the new year", ValidFrom: day(20)}
	checkRulesOut(t, quit, []rulingCase{
		{"the habit", memory.Memory{Content: "On Saturday nights the user always has a cigar on the porch", ValidFrom: day(2)}, true},
		{"another habit", memory.Memory{Content: "The user jogs every morning", ValidFrom: day(2)}, false},
	})
	quitZH := memory.Candidate{Category: memory.CatPreference, Content: "用户戒酒半年了", ValidFrom: day(20)}
	checkRulesOut(t, quitZH, []rulingCase{
		{"the habit", memory.Memory{Content: "用户每周五晚上都要喝两瓶啤酒", ValidFrom: day(2)}, true},
		{"another habit", memory.Memory{Content: "用户每天早上跑步", ValidFrom: day(2)}, false},
	})
}

// Sentences written for this test, not taken from any evaluation set.
func TestStoppedActivity(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	stopped := memory.Candidate{Category: memory.CatPreference, Content: "The user doesn't swim anymore, the pool closed, so they walk instead", ValidFrom: day(20)}
	checkRulesOut(t, stopped, []rulingCase{
		{"the habit", memory.Memory{Content: "The user swims at the leisure centre every Tuesday", ValidFrom: day(2)}, true},
		{"another habit", memory.Memory{Content: "The user bakes bread every Sunday", ValidFrom: day(2)}, false},
	})
	stoppedZH := memory.Candidate{Category: memory.CatPreference, Content: "用户现在不爬山了，膝盖受不了", ValidFrom: day(20)}
	checkRulesOut(t, stoppedZH, []rulingCase{
		{"the habit", memory.Memory{Content: "用户每个周末都去爬山", ValidFrom: day(2)}, true},
		{"another habit", memory.Memory{Content: "用户每个周末都去钓鱼", ValidFrom: day(2)}, false},
	})
	// Told as news (an event), the stop ends the habit too; an event that names no stop
	// rules nothing out.
	news := memory.Candidate{Category: memory.CatEvent, Source: memory.SourceUser, Content: "用户最近不游泳了，改去打太极", ValidFrom: day(20)}
	checkRulesOut(t, news, []rulingCase{
		{"the habit", memory.Memory{Content: "用户每周三晚上都去游泳", ValidFrom: day(2)}, true},
	})
	plain := memory.Candidate{Category: memory.CatEvent, Source: memory.SourceUser, Content: "用户昨天游泳时遇到了老同学", ValidFrom: day(20)}
	checkRulesOut(t, plain, []rulingCase{
		{"the habit", memory.Memory{Content: "用户每周三晚上都去游泳", ValidFrom: day(2)}, false},
	})
}

// TestOldValueWithoutNames: a slot value told without a name ("a senior engineer") is
// the words the old statement has and the new one lacks, beside the template's; a
// memory told together with it retells it when it holds every one of them.
func TestOldValueWithoutNames(t *testing.T) {
	v := oldValues("The user is a night porter", "The user got promoted to duty manager, so they work days now")
	if !slices.Equal(v.words, []string{"night", "porter"}) {
		t.Fatalf("words %v, want [night porter]", v.words)
	}
	if !v.heldBy("The user is a night porter at the Ashgrove Hotel, mostly weekends") {
		t.Error("a sentence told with the role does not hold it")
	}
	if v.heldBy("The user works nights at the Ashgrove Hotel") {
		t.Error("a sentence without the role holds it")
	}
}
