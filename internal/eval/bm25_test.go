package eval

import (
	"math"
	"strings"
	"testing"
)

func TestBM25Tokens(t *testing.T) {
	t.Parallel()
	stop := map[string]bool{}
	for _, w := range strings.Fields(bm25Stopwords) {
		stop[w] = true
	}
	tests := []struct{ in, want string }{
		{"What did Maya's brother bake on Sunday?", "maya brother bake sunday"},
		{"I don't like the RUNNING shoes", "like running shoes"},
		{"Order A-1138 arrived", "order 1138 arrived"},
		{"我们去爬山", "我们 们去 去爬 爬山"},
		{"猫 and dogs", "猫 dogs"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(bm25Tokens(tt.in, stop), " "); got != tt.want {
			t.Errorf("bm25Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBM25Search(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "b", "c", "d"}
	docs := []string{
		"kayak trip on the lake",
		"the lake was cold",
		"a kayak kayak kayak and a kayak",
		"nothing in common here",
	}
	x := newBM25Index(ids, docs)
	// One query term in three documents of four: the rare term decides.
	if got := strings.Join(x.search("kayak lake", 10), ","); got != "a,c,b" {
		t.Errorf("ranking = %s, want a,c,b", got)
	}
	if got := x.search("kayak lake", 1); len(got) != 1 || got[0] != "a" {
		t.Errorf("top 1 = %v", got)
	}
	if got := x.search("the and a", 10); len(got) != 0 {
		t.Errorf("stopwords alone matched %v", got)
	}
	// Scores by hand. Lengths after stopwords: 3 (kayak trip lake), 2 (lake cold),
	// 4 (kayak ×4), 2 (nothing common): average 2.75. "kayak" is in 2 of 4.
	idf := math.Log(1 + (4-2+0.5)/(2+0.5))
	norm := func(dl float64) float64 { return 1 - bm25b + bm25b*dl/2.75 }
	for _, c := range []struct {
		doc int
		f   float64
		dl  float64
	}{{0, 1, 3}, {2, 4, 4}} {
		want := idf * c.f * (bm25k1 + 1) / (c.f + bm25k1*norm(c.dl))
		if got := x.score(c.doc, map[string]int{"kayak": 1}); math.Abs(got-want) > 1e-12 {
			t.Errorf("score of %s = %v, want %v", ids[c.doc], got, want)
		}
	}
}
func TestTurnsBM25(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	x := newTurnsBM25(convs[0])
	// The caption is indexed: only D1:3's image shows a sofa.
	got := bm25Ranking(x, "Where was the dog sitting? On a sofa?", 2)
	if len(got) == 0 || got[0][0] != "conv-t1:D1:3" {
		t.Errorf("ranking = %v", got)
	}
}
