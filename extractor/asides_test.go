package extractor

import (
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// TestAsidesAndAntecedents: a fact told inside a request or as a question's premise
// becomes a sentence of its own, and a pronoun opening a sentence is the one relation of
// its gender the sentence before named. The sentences were written for this test.
func TestAsidesAndAntecedents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string // sentences splitSentences must return, in order
	}{
		{"aside after a request", "Could you draft a packing list, I'm hiking the Cotswold Way in June.",
			[]string{"Could you draft a packing list.", "I'm hiking the Cotswold Way in June."}},
		{"premise of a question", "Since I'm colour-blind, which chart palette should I use?",
			[]string{"I'm colour-blind.", "Since I'm colour-blind, which chart palette should I use?"}},
		{"told after a request's colon", "Help me pack for Oslo: we fly on Friday and stay four nights.",
			[]string{"Help me pack for Oslo.", "We fly on Friday and stay four nights."}},
		{"a relation's clause of its own", "We get in late on the 9th, and my dad needs a ground-floor room.",
			[]string{"We get in late on the 9th.", "My dad needs a ground-floor room."}},
		{"a relation's clause of its own zh", "我们周五到，住在湖边，我公公不能爬楼梯。",
			[]string{"我们周五到，住在湖边。", "我公公不能爬楼梯。"}},
		{"premise by what one is", "As a new beekeeper, which hive should I start with?",
			[]string{"I'm a new beekeeper.", "As a new beekeeper, which hive should I start with?"}},
		{"aside zh", "帮我找几个练听力的播客，我在备考托福。", []string{"帮我找几个练听力的播客。", "我在备考托福。"}},
		{"pronoun after a relation", "Any idea what to cook for my uncle Rafe? He hates coriander.",
			[]string{"Any idea what to cook for my uncle Rafe?", "My uncle hates coriander."}},
		{"pronoun of the other gender stays", "Any idea what to cook for my aunt? He hates coriander.",
			[]string{"Any idea what to cook for my aunt?", "He hates coriander."}},
		{"two relations, no antecedent", "My sister and my mum are visiting. She loves the beach.",
			[]string{"My sister and my mum are visiting.", "She loves the beach."}},
		{"pronoun zh", "我爸下周来住，他不吃香菜，帮我记着。", []string{"我爸下周来住，我爸不吃香菜，帮我记着。"}},
		{"a request without an aside", "Can you suggest a book, something light?", []string{"Can you suggest a book, something light?"}},
		{"a labelled introduction", "Background: 29, nurse, married, two kids, live in Dundee.",
			[]string{"I'm 29.", "I'm a nurse.", "I'm married.", "I have two kids.", "I live in Dundee."}},
		{"partial to", "I'm partial to a strong builder's tea.", []string{"I like a strong builder's tea."}},
		{"not big on", "Not really big on musicals, to be fair.", []string{"I don't like musicals, to be fair."}},
		{"thing first, then disliked", "Raw onion and I don't get along.", []string{"I don't like raw onion."}},
		{"disliked as an enemy zh", "芹菜是我的天敌。", []string{"我讨厌芹菜。"}},
		{"a liking said plainly stays", "I love long walks on the heath.", []string{"I love long walks on the heath."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := splitSentences(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("splitSentences(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	// The aside is extracted as any statement is.
	cs := extractOne(t, memory.Turn{Content: "Can you suggest some stretches, I'm recovering from a torn calf."})
	if !slices.ContainsFunc(cs, func(c memory.Candidate) bool { return strings.Contains(c.Content, "torn calf") }) {
		t.Errorf("no memory of the aside in %+v", cs)
	}
}
