package eval

import "math"

// A ranking is given as, for each ranked item best first, the turn ids it covers:
// a turn result its own id, a memory result its lineage.

// evidenceRecall is the share of the distinct evidence turns covered by the first
// k items of ranked. It is 0 when there is no evidence (callers skip such
// questions rather than score them).
func evidenceRecall(ranked [][]string, evidence []string, k int) float64 {
	ev := toSet(evidence)
	if len(ev) == 0 {
		return 0
	}
	covered := map[string]bool{}
	for i := 0; i < k && i < len(ranked); i++ {
		for _, id := range ranked[i] {
			if ev[id] {
				covered[id] = true
			}
		}
	}
	return float64(len(covered)) / float64(len(ev))
}

// ndcg is the normalised discounted cumulative gain of the first k items with
// binary relevance: an item is relevant when it covers at least one evidence turn
// that no earlier item covered (so repeating the same evidence earns nothing).
// The ideal ranking has min(#evidence, k) relevant items at the top.
func ndcg(ranked [][]string, evidence []string, k int) float64 {
	ev := toSet(evidence)
	if len(ev) == 0 || k <= 0 {
		return 0
	}
	covered := map[string]bool{}
	var dcg float64
	for i := 0; i < k && i < len(ranked); i++ {
		gain := false
		for _, id := range ranked[i] {
			if ev[id] && !covered[id] {
				covered[id] = true
				gain = true
			}
		}
		if gain {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	var idcg float64
	for i := 0; i < min(len(ev), k); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

func toSet(ids []string) map[string]bool {
	s := make(map[string]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// rankedTurnIDs turns search items into a ranking of covered turn ids.
func rankedTurnIDs(items []SearchItem) [][]string {
	out := make([][]string, len(items))
	for i, it := range items {
		ids := it.TurnIDs
		if len(ids) == 0 && it.Kind == KindTurn {
			ids = []string{it.ID}
		}
		out[i] = ids
	}
	return out
}
