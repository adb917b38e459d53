package consolidator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// labelledPair is one line of testdata/pairs.jsonl: an existing memory, a new
// candidate, and the relation a careful reader would assign.
type labelledPair struct {
	ID     string `json:"id"`
	Label  string `json:"label"` // duplicate | refinement | contradiction | unrelated
	Lang   string `json:"lang"`
	Type   string `json:"type"`
	Old    string `json:"old"`
	OldKey string `json:"old_key"`
	New    string `json:"new"`
	NewKey string `json:"new_key"`
}

func loadPairs(t *testing.T, path string) []labelledPair {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledPair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p labelledPair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pairCase is a pair ready for the rules: the embeddings computed once.
type pairCase struct {
	labelledPair
	sim float64
}

func pairCases(t *testing.T, path string) []pairCase {
	t.Helper()
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	ps := loadPairs(t, path)
	out := make([]pairCase, len(ps))
	for i, p := range ps {
		vs, err := emb.Embed(context.Background(), []string{p.Old, p.New})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = pairCase{labelledPair: p, sim: float64(llm.Cosine(vs[0], vs[1]))}
	}
	return out
}

// predict runs the rules on one pair as the resolver would with a single neighbour.
func (cfg ResolverConfig) predict(p pairCase) relation {
	typ := memory.Semantic
	if p.Type == string(memory.Episodic) {
		typ = memory.Episodic
	}
	c := memory.Candidate{Content: p.New, Key: p.NewKey, Type: typ}
	n := scored{mem: memory.Memory{Content: p.Old, Key: p.OldKey, Type: typ, Status: memory.StatusActive},
		sim: p.sim, sameKey: p.NewKey != "" && p.NewKey == p.OldKey}
	i, m := cfg.chooseRule(c, []scored{n})
	if i < 0 {
		return relUnrelated
	}
	return m.rel
}

type prf struct{ tp, fp, fn int }

func (s prf) precision() float64 { return ratio(s.tp, s.tp+s.fp) }
func (s prf) recall() float64    { return ratio(s.tp, s.tp+s.fn) }

var labels = []string{"duplicate", "refinement", "contradiction", "unrelated"}

func score(cfg ResolverConfig, cases []pairCase) (map[string]*prf, []string) {
	stats := map[string]*prf{}
	for _, l := range labels {
		stats[l] = &prf{}
	}
	var wrong []string
	for _, p := range cases {
		got := cfg.predict(p).String()
		if got == p.Label {
			stats[got].tp++
			continue
		}
		stats[got].fp++
		stats[p.Label].fn++
		wrong = append(wrong, fmt.Sprintf("%s: want %s got %s (cos %.2f): %q → %q", p.ID, p.Label, got, p.sim, p.Old, p.New))
	}
	return stats, wrong
}

func macroF1(stats map[string]*prf) float64 {
	var sum float64
	for _, l := range labels {
		p, r := stats[l].precision(), stats[l].recall()
		if p+r > 0 {
			sum += 2 * p * r / (p + r)
		}
	}
	return sum / float64(len(labels))
}

func table(cases []pairCase, stats map[string]*prf) string {
	counts := map[string]int{}
	for _, p := range cases {
		counts[p.Label]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %5s %9s %6s\n", "label", "pairs", "precision", "recall")
	for _, l := range labels {
		s := stats[l]
		fmt.Fprintf(&b, "%-14s %5d %9.2f %6.2f\n", l, counts[l], s.precision(), s.recall())
	}
	fmt.Fprintf(&b, "macro F1 %.3f over %d pairs\n", macroF1(stats), len(cases))
	return b.String()
}

// TestRulesQuality measures the rules-only decisions on the labelled pairs with the
// real hash embedder: duplicate→confirm, refinement→update, contradiction→supersede,
// unrelated→add. pairs.jsonl is the development set (the thresholds and the small
// synonym lexicon were tuned on it); holdout.jsonl was written after the rules were
// frozen and is the honest estimate. The floors sit under what was measured, so a
// change that degrades a label fails here.
func TestRulesQuality(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path     string
		minPairs int
		floors   map[string][2]float64 // precision, recall
	}{
		{"testdata/pairs.jsonl", 25, map[string][2]float64{
			"duplicate": {0.90, 0.85}, "refinement": {0.90, 0.90}, "contradiction": {0.85, 0.90}, "unrelated": {0.85, 0.90}}},
		{"testdata/holdout.jsonl", 10, map[string][2]float64{
			"duplicate": {0.0, 0.0}, "refinement": {0.0, 0.0}, "contradiction": {0.80, 0.0}, "unrelated": {0.0, 0.0}}},
	} {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(tc.path, "testdata/"), ".jsonl"), func(t *testing.T) {
			t.Parallel()
			cases := pairCases(t, tc.path)
			counts := map[string]int{}
			for _, p := range cases {
				counts[p.Label]++
			}
			for _, l := range labels {
				if counts[l] < tc.minPairs {
					t.Fatalf("%s has %d %s pairs, want at least %d", tc.path, counts[l], l, tc.minPairs)
				}
			}
			stats, wrong := score(DefaultResolverConfig(), cases)
			t.Log(table(cases, stats))
			for _, w := range wrong {
				t.Log("miss ", w)
			}
			for _, l := range labels {
				s, f := stats[l], tc.floors[l]
				if s.precision() < f[0] || s.recall() < f[1] {
					t.Errorf("%s: precision %.2f recall %.2f, floors %.2f / %.2f", l, s.precision(), s.recall(), f[0], f[1])
				}
			}
		})
	}
}

// TestThresholdSweep prints macro F1 and contradiction precision while each
// threshold moves with the others at their defaults; it is how the defaults were
// chosen. Run with ENGRAM_RESOLVER_SWEEP=1.
func TestThresholdSweep(t *testing.T) {
	if os.Getenv("ENGRAM_RESOLVER_SWEEP") == "" {
		t.Skip("set ENGRAM_RESOLVER_SWEEP=1 to sweep the thresholds")
	}
	cases := pairCases(t, "testdata/pairs.jsonl")
	for _, p := range cases {
		t.Logf("cos %.2f %-13s %s", p.sim, p.Label, p.ID)
	}
	knobs := []struct {
		name string
		set  func(*ResolverConfig, float64)
	}{
		{"DuplicateSim", func(c *ResolverConfig, v float64) { c.DuplicateSim = v }},
		{"RefineSim", func(c *ResolverConfig, v float64) { c.RefineSim = v }},
		{"ContradictSim", func(c *ResolverConfig, v float64) { c.ContradictSim = v }},
		{"NeighbourFloor", func(c *ResolverConfig, v float64) { c.NeighbourFloor = v }},
		{"Containment", func(c *ResolverConfig, v float64) { c.Containment = v }},
	}
	for _, k := range knobs {
		for v := 0.05; v <= 0.96; v += 0.05 {
			cfg := DefaultResolverConfig()
			k.set(&cfg, v)
			stats, _ := score(cfg, cases)
			t.Logf("%-14s %.2f  macroF1 %.3f  dupP %.2f dupR %.2f  refP %.2f refR %.2f  conP %.2f conR %.2f  unrP %.2f unrR %.2f",
				k.name, v, macroF1(stats), stats["duplicate"].precision(), stats["duplicate"].recall(),
				stats["refinement"].precision(), stats["refinement"].recall(),
				stats["contradiction"].precision(), stats["contradiction"].recall(),
				stats["unrelated"].precision(), stats["unrelated"].recall())
		}
	}
}
