package extractor

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// A sentence that names a relation tells more than the name: what the relation did or
// does is a memory of its own, of the kind the tense says.
func TestWhatNamedRelationsDo(t *testing.T) {
	tests := []struct {
		name, text string
		typ        memory.Type
		holds      string
	}{
		{"a named relation's deed", "My cousin Bram restored a 1970s motorbike.", memory.Episodic, "motorbike"},
		{"a relation lending", "Our neighbour Ilse lent us her pressure washer.", memory.Episodic, "pressure washer"},
		{"a relation's standing habit", "My uncle Dev coaches a youth cricket team.", memory.Semantic, "cricket"},
		{"a relation's instrument", "My daughter plays the oboe.", memory.Semantic, "oboe"},
		{"a relation's work zh", "我妹妹在苏州做室内设计。", memory.Semantic, "室内设计"},
		{"a relation's purchase zh", "我弟弟上周买了一辆摩托车。", memory.Episodic, "摩托车"},
		{"a relation's need beside a trip", "We arrive on the 9th, and my dad needs a ground-floor room.", memory.Semantic, "ground-floor"},
		{"a neighbour's help", "Our neighbour Stan feeds the cat when we're away.", memory.Semantic, "feeds the cat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands := extractOne(t, memory.Turn{Content: tt.text})
			for _, c := range cands {
				if strings.Contains(c.Content, tt.holds) {
					if c.Type != tt.typ {
						t.Errorf("%q: %q is %s, want %s", tt.text, c.Content, c.Type, tt.typ)
					}
					return
				}
			}
			t.Fatalf("%q: no candidate holds %q in %+v", tt.text, tt.holds, cands)
		})
	}
}

// Rules and decisions told in the words of a team at work, and an aside that is neither.
func TestRulesAndDecisionsInPassing(t *testing.T) {
	tests := []struct {
		name, text string
		cat        memory.Category // "" means: no procedure may be extracted
	}{
		{"a decision with let's", "Let's freeze the schema at v3 until the audit is done.", memory.CatDecision},
		{"a rule from here on", "From here on, every release note gets a changelog link.", memory.CatPreference},
		{"a step by a condition", "If the staging deploy hangs, ping Wren and roll back.", memory.CatSkill},
		{"an offer is no procedure", "If you get a chance, have a look at the new cafe by the station.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands := extractOne(t, memory.Turn{Content: tt.text})
			for _, c := range cands {
				if tt.cat == "" && c.Type == memory.Procedural {
					t.Fatalf("%q: a procedure %q", tt.text, c.Content)
				}
				if tt.cat != "" && c.Category == tt.cat {
					return
				}
			}
			if tt.cat != "" {
				t.Fatalf("%q: no %s candidate in %+v", tt.text, tt.cat, cands)
			}
		})
	}
}

// Chat shorthand is written out before the rules read a turn, and only where it means one
// thing.
func TestChatShorthandSpelledOut(t *testing.T) {
	tests := []struct{ in, want string }{
		{"physio appt tmrw w/ dr lee", "physio appointment tomorrow with dr lee"},
		{"fil arrives nxt wk", "my father-in-law arrives next week"},
		{"my bf says hi", "my boyfriend says hi"},
		{"yoga mon/wed, swim fri", "yoga Monday/Wednesday, swim fri"},
		{"no calls on thu pls", "no calls on Thursday please"},
		{"I sat down with Mo", "I sat down with Mo"},
		{"im off sick, cant make it", "I'm off sick, can't make it"},
		{"明儿个下午开会", "明天下午开会"},
	}
	for _, tt := range tests {
		if got := spelledOut(tt.in); got != tt.want {
			t.Errorf("spelledOut(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// "…, not X" names a wrong value, unless it is an idiom.
func TestNotAnIdiomIsACorrection(t *testing.T) {
	for s, want := range map[string]string{
		"Pickup is at 5, not 6.":             "6",
		"The new place is cosy, not bad.":    "",
		"The sofa arrived, not yet unpacked": "",
	} {
		if got := correctedValue(s); got != want {
			t.Errorf("correctedValue(%q) = %q, want %q", s, got, want)
		}
	}
}
