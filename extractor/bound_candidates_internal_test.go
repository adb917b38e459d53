package extractor

import (
	"fmt"
	"testing"

	"github.com/engramhq/engram/memory"
)

func TestBoundPerTurn(t *testing.T) {
	cand := func(turn string, typ memory.Type, content string) memory.Candidate {
		return memory.Candidate{Type: typ, Content: content, SourceTurnIDs: []string{turn}}
	}
	many := func(turn string, typ memory.Type, n int) []memory.Candidate {
		var out []memory.Candidate
		for i := range n {
			out = append(out, cand(turn, typ, fmt.Sprintf("line %d of %s", i, turn)))
		}
		return out
	}
	tests := []struct {
		name  string
		in    []memory.Candidate
		limit int
		want  map[string]int // kept per source turn
		first string         // content of the first kept candidate
	}{
		{
			name:  "a repeated line is one candidate",
			in:    []memory.Candidate{cand("a", memory.Episodic, "Deploy ran"), cand("a", memory.Episodic, "deploy ran "), cand("a", memory.Episodic, "Deploy ran")},
			limit: 16, want: map[string]int{"a": 1}, first: "Deploy ran",
		},
		{
			name:  "the same line from two turns stays twice",
			in:    []memory.Candidate{cand("a", memory.Episodic, "Deploy ran"), cand("b", memory.Episodic, "Deploy ran")},
			limit: 16, want: map[string]int{"a": 1, "b": 1}, first: "Deploy ran",
		},
		{
			name:  "a long turn is capped, facts kept before episodes",
			in:    append(many("a", memory.Episodic, 30), cand("a", memory.Semantic, "The user keeps bees")),
			limit: 4, want: map[string]int{"a": 4}, first: "line 0 of a",
		},
		{
			name:  "the cap is per turn",
			in:    append(many("a", memory.Episodic, 10), many("b", memory.Episodic, 2)...),
			limit: 4, want: map[string]int{"a": 4, "b": 2}, first: "line 0 of a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := boundPerTurn(tt.in, tt.limit)
			per := map[string]int{}
			semantic := false
			for _, c := range got {
				per[c.SourceTurnIDs[0]]++
				semantic = semantic || c.Type == memory.Semantic
			}
			if fmt.Sprint(per) != fmt.Sprint(tt.want) {
				t.Fatalf("kept per turn %v, want %v", per, tt.want)
			}
			if got[0].Content != tt.first {
				t.Errorf("first kept %q, want %q (extractor order)", got[0].Content, tt.first)
			}
			for _, c := range tt.in {
				if c.Type == memory.Semantic && !semantic {
					t.Errorf("the fact was dropped for episodes")
				}
			}
		})
	}
}
