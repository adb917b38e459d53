package consolidator

import (
	"testing"

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
	}
	for _, tt := range tests {
		if got := replaceValue(tt.text, tt.wrong, tt.right); got != tt.want {
			t.Errorf("replaceValue(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
