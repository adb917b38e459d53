package eval

import (
	"bytes"
	"strings"
	"testing"
)

func TestLoCoMoHTML(t *testing.T) {
	scores := func(v float64) RetrievalScores {
		return RetrievalScores{RecallAt: map[int]RecallStats{
			5:  {Overall: v, ByCategory: map[int]float64{1: v / 2, 2: v}},
			10: {Overall: v + 0.1, ByCategory: map[int]float64{1: v, 2: v + 0.1}},
		}, NDCGAt10: v, NDCGByCategory: map[int]float64{1: v, 2: v}}
	}
	r := LoCoMoReport{Conversations: []string{"conv-<26>"}, Ks: []int{10, 5}, Layers: []string{"memories", "turns"},
		Questions: 12, QuestionsByCategory: map[int]int{1: 5, 2: 7, 5: 3}, RetrievalScores: scores(0.6),
		Baselines: LoCoMoBaselines{Keyword: scores(0.4), Vector: scores(0.2), MemoriesOnly: scores(0.3), BM25Turns: scores(0.5)},
		Category5: Category5Report{Questions: 3, RetrievalScores: scores(0.1)}}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "<polyline", "engram (hybrid)", "BM25 over turns", "Category 2 (temporal)",
		"<td>1 multi-hop</td><td>5</td><td>30.0%</td><td>60.0%</td>", "<td>all (1-4)</td><td>12</td>", "conv-&lt;26&gt;",
		"Category 5 (adversarial"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched.
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

func TestGoldenHTML(t *testing.T) {
	r := GoldenReport{Cases: 2, CasesPassed: 1, Queries: 2, Facts: 4, Hits: 3, HitRate: 0.75,
		Details: []GoldenCaseResult{
			{Name: "a", Tags: []string{"preference"}, Passed: true, Queries: []GoldenQueryResult{{Facts: 2, Hits: 2, ReplayHits: 1}}},
			{Name: "b", Tags: []string{"update"}, Queries: []GoldenQueryResult{{Facts: 2, Hits: 1, ReplayHits: 2,
				Missing: [][]string{{"lisbon"}}}}},
		}}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "Hit rate by tag", "<td>preference</td><td>1</td><td>1</td><td>2</td><td>100.0%</td><td>50.0%</td>",
		"<td>all</td><td>2</td><td>1</td><td>4</td><td>75.0%</td><td>75.0%</td>", "Failed cases", "lisbon"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
