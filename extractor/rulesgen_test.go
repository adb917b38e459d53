package extractor

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// The sentences below were written for these tests; none comes from an evaluation set.

func keyOf(cs []memory.Candidate, want string) (memory.Candidate, bool) {
	for _, c := range cs {
		if c.Key == want {
			return c, true
		}
	}
	return memory.Candidate{}, false
}

func TestLikingAndGivingUpShareAThing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, key string
	}{
		{"I totally adore flat whites, two before noon.", "drink.coffee"},
		{"I jog around the lake every evening.", "habit.jog"},
		{"I stopped jogging about two months ago.", "habit.jog"},
		{"I gave up chess once my exams began.", "habit.chess"}, // one slot with habit.play.ches (see the resolver's thing slots)
		{"I play chess every Sunday afternoon.", "habit.play.ches"},
		{"我每周都去游泳。", "habit.游泳"},
		{"肩膀拉伤了，以后不能游泳了。", "habit.游泳"},
		{"攀岩不再去了，最近迷上了瑜伽。", "habit.攀岩"},
		{"周末最喜欢去攀岩。", "taste.攀岩"},
	} {
		got := extractOne(t, memory.Turn{Content: tc.text})
		c, ok := keyOf(got, tc.key)
		if !ok || c.Type != memory.Semantic {
			t.Errorf("%q: want a semantic memory under %s, got%s", tc.text, tc.key, dump(got))
		}
	}
}

func TestHypotheticalsAreNotStated(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"If I ever retire, I'd buy a cabin near Tromsø.",
		"If we had a bigger garden, we would keep chickens.",
		"要是明年中了彩票，我想去冰岛住一年。",
		"假如有一天不用上班，我就天天去钓鱼。",
	} {
		if got := extractOne(t, memory.Turn{Content: text}); len(got) != 0 {
			t.Errorf("%q: a hypothetical stored%s", text, dump(got))
		}
	}
	// A condition that sets a rule is still an instruction.
	if got := extractOne(t, memory.Turn{Content: "If the nightly backup fails, page me on Signal."}); len(got) == 0 {
		t.Errorf("a conditional instruction was dropped")
	}
}

func TestShortStayIsTemporary(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"I'm in Tallinn for the next couple of days for a trade fair.", "这两天在青岛开会。"} {
		got := extractOne(t, memory.Turn{Content: text})
		c, ok := keyOf(got, "user.status")
		if !ok || c.ExpireAt == nil || !c.ExpireAt.After(clauseRef) || c.ExpireAt.After(clauseRef.AddDate(0, 0, 6)) {
			t.Errorf("%q: want a temporary status expiring within days, got%s", text, dump(got))
		}
		if _, ok := keyOf(got, "user.location"); ok {
			t.Errorf("%q: a stay replaced where the user lives%s", text, dump(got))
		}
	}
}

func TestCorrectionNamesTheValueItReplaces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, wrong, right string }{
		{"Oops, typo before: it's Siobhan, not Shivon.", "Shivon", "Siobhan"},
		{"她不是叫小蕾，是叫晓蕾。", "小蕾", "晓蕾"},
	} {
		got := extractOne(t, memory.Turn{Content: tc.text})
		if len(got) == 0 {
			t.Fatalf("%q: nothing extracted", tc.text)
		}
		for _, c := range got {
			if c.Metadata["corrects"] != tc.wrong || strings.Contains(c.Content, tc.wrong) {
				t.Errorf("%q: %q corrects %v, want %q and the wrong value out of the content", tc.text, c.Content, c.Metadata["corrects"], tc.wrong)
			}
		}
	}
}

func TestChattySentenceKeepsTheSpeakersPart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, keep, drop string }{
		{"What a morning, the bus broke down on the bridge, my flatmate's sister adopted a ferret, and I booked a flight to Porto for May.", "Porto", "ferret"},
		{"今天好累，快递又丢了，邻居家的狗叫了一晚上，对了我下周开始学吉他。", "吉他", "快递"},
	} {
		got := extractOne(t, memory.Turn{Content: tc.text})
		kept := false
		for _, c := range got {
			kept = kept || strings.Contains(c.Content, tc.keep)
			if strings.Contains(c.Content, tc.drop) {
				t.Errorf("%q: stored another's news %q", tc.text, c.Content)
			}
		}
		if !kept {
			t.Errorf("%q: the speaker's part is lost%s", tc.text, dump(got))
		}
	}
	// Someone else's news alone is not a memory of the speaker.
	for _, text := range []string{"My coworker's husband just opened a bakery downtown.", "我同事老周最近迷上了马拉松，天天早起。"} {
		for _, c := range extractOne(t, memory.Turn{Content: text}) {
			if c.Type == memory.Episodic {
				t.Errorf("%q: stored as the speaker's event: %q", text, c.Content)
			}
		}
	}
}

func TestNegatedPossessionAndStyle(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "I don't own a car, but I do ride a cargo bike everywhere."})
	for _, c := range got {
		if strings.Contains(c.Content, "car,") || strings.Contains(c.Content, "own a car") {
			t.Errorf("a negated possession stored: %q", c.Content)
		}
	}
	for _, text := range []string{"Keep your replies brief please, I read them on my phone.", "回答尽量简短，分点列出来就行。"} {
		got := extractOne(t, memory.Turn{Content: text})
		if len(got) == 0 || got[0].Category != memory.CatPreference {
			t.Errorf("%q: want an answer-style preference, got%s", text, dump(got))
		}
	}
	if got := extractOne(t, memory.Turn{Content: "Whatever happens, never merge on a Friday evening."}); len(got) == 0 || got[0].Category != memory.CatConstraint {
		t.Errorf("a prohibition after 'whatever happens' was lost%s", dump(got))
	}
}

func TestRoutineToldAsOrder(t *testing.T) {
	t.Parallel()
	got := extractOne(t, memory.Turn{Content: "Before any database upgrade, snapshot the volume and then notify the on-call."})
	if len(got) != 1 || got[0].Type != memory.Procedural || !strings.Contains(got[0].Content, "snapshot") {
		t.Errorf("got%s", dump(got))
	}
	// An event after "before" is not a routine.
	for _, c := range extractOne(t, memory.Turn{Content: "Before any trip, I get a bit nervous about packing."}) {
		if c.Type == memory.Procedural {
			t.Errorf("a feeling became a routine: %q", c.Content)
		}
	}
}
