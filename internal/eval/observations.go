package eval

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// StoredMemory is a memory a tenant holds, with the turns it came from.
type StoredMemory struct {
	ID      string
	Content string
	Status  string
	TurnIDs []string // lineage: the turns the memory was extracted from
}

// MemoryLister is a Tenant that can list every memory of a user, whatever its
// status (a memory superseded later was still extracted). RunLoCoMo measures
// extraction against LoCoMo's observations only on tenants that implement it.
type MemoryLister interface {
	Memories(ctx context.Context, userID string) ([]StoredMemory, error)
}

// Observation is one of LoCoMo's annotated session facts, read for scoring only:
// it is never fed to the system under test.
type Observation struct {
	Session  int
	Speaker  string
	Text     string
	Evidence []string // dia_ids, cleaned like question evidence
}

// observationMinShare is the share of an observation's content words a memory
// must hold to match it.
const observationMinShare = 0.5

// observationRule states the matching rule in reports.
const observationRule = "a memory matches an observation when its lineage includes one of the " +
	"observation's evidence turns and it holds at least 50% of the observation's distinct content " +
	"words (lower-cased letter/digit runs split at apostrophes, NLTK English stopwords removed, " +
	"light suffix stemming: -ies→y, -ing, -ed, -es, -s; Han as bigrams). Coverage: observations " +
	"matched by some memory. Precision: memories that match some observation, of all memories " +
	"with a turn in the conversation"

// ObservationReport measures extraction against LoCoMo's observations.
type ObservationReport struct {
	Rule                string            `json:"rule"`
	Observations        int               `json:"observations"`
	Covered             int               `json:"covered"`
	Coverage            float64           `json:"coverage"`
	Memories            int               `json:"memories"`
	MatchingMemories    int               `json:"matching_memories"`
	Precision           float64           `json:"precision"`
	Turns               int               `json:"turns"`
	MemoriesPer100Turns float64           `json:"memories_per_100_turns"`
	Misses              []ObservationMiss `json:"misses,omitempty"` // with LoCoMoOptions.Explain
	// Unmatched are a few memories that match no observation (with Explain): what
	// precision counts against extraction.
	Unmatched []UnmatchedMemory  `json:"unmatched,omitempty"`
	byConv    []observationCount // per conversation, kept for the table
}

type observationCount struct {
	conv                  string
	observations, covered int
	memories, matching    int
	turns                 int
}

// ObservationMiss is an observation no memory matched, with what engram made of
// its evidence turns.
type ObservationMiss struct {
	Conversation string   `json:"conversation"`
	Observation  string   `json:"observation"`
	Evidence     []string `json:"evidence"`
	TurnTexts    []string `json:"turn_texts"`
	Memories     []string `json:"memories"` // memories whose lineage includes an evidence turn
}

// UnmatchedMemory is a memory that matches no observation, with the turns it came from.
type UnmatchedMemory struct {
	Conversation string   `json:"conversation"`
	Memory       string   `json:"memory"`
	TurnTexts    []string `json:"turn_texts"`
}

// contentWords are the distinct content words of s under the observation rule.
func contentWords(s string, stop map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, w := range bm25Tokens(s, stop) {
		out[lightStem(w)] = true
	}
	return out
}

// lightStem strips the commonest English inflections so that "paints",
// "painted" and "painting" meet. It is applied to both sides of a comparison,
// so consistency matters more than linguistic accuracy.
func lightStem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		return w[:n-2]
	case n > 4 && strings.HasSuffix(w, "es"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:n-1]
	}
	return w
}

// observationMatch reports whether a memory's content words hold enough of an
// observation's.
func observationMatch(obs, mem map[string]bool) bool {
	if len(obs) == 0 {
		return false
	}
	shared := 0
	for w := range obs {
		if mem[w] {
			shared++
		}
	}
	return float64(shared) >= observationMinShare*float64(len(obs))
}

// observationAcc sums coverage over conversations.
type observationAcc struct {
	stop    map[string]bool
	explain int // misses kept per conversation
	rep     ObservationReport
}

func newObservationAcc(explain int) *observationAcc {
	stop := map[string]bool{}
	for _, w := range strings.Fields(bm25Stopwords) {
		stop[w] = true
	}
	return &observationAcc{stop: stop, explain: explain, rep: ObservationReport{Rule: observationRule}}
}

// add scores one conversation's observations against the memories of its tenant.
func (a *observationAcc) add(c Conversation, mems []StoredMemory) {
	turnText := map[string]string{}
	for _, s := range c.Sessions {
		for _, d := range s.Turns {
			turnText[locomoTurnID(c.ID, d.DiaID)] = bm25TurnText(d)
		}
	}
	// Only memories with a turn of this conversation count (the tenant holds
	// nothing else, but a lister may return more).
	byTurn := map[string][]int{}
	words := make([]map[string]bool, len(mems))
	var inConv []int
	for i, m := range mems {
		mine := false
		for _, t := range m.TurnIDs {
			if _, ok := turnText[t]; ok {
				byTurn[t] = append(byTurn[t], i)
				mine = true
			}
		}
		if mine {
			inConv = append(inConv, i)
			words[i] = contentWords(m.Content, a.stop)
		}
	}
	matched := map[int]bool{}
	cnt := observationCount{conv: c.ID, memories: len(inConv), turns: c.turnCount()}
	var misses []ObservationMiss
	for _, o := range c.Observations {
		ow := contentWords(o.Text, a.stop)
		if len(ow) == 0 || len(o.Evidence) == 0 {
			continue
		}
		cnt.observations++
		covered := false
		seen := map[int]bool{}
		var cands []int
		for _, e := range o.Evidence {
			for _, i := range byTurn[locomoTurnID(c.ID, e)] {
				if seen[i] {
					continue
				}
				seen[i] = true
				cands = append(cands, i)
				if observationMatch(ow, words[i]) {
					covered = true
					matched[i] = true
				}
			}
		}
		if covered {
			cnt.covered++
			continue
		}
		if a.explain > 0 {
			miss := ObservationMiss{Conversation: c.ID, Observation: o.Text, Evidence: o.Evidence, Memories: []string{}}
			for _, e := range o.Evidence {
				miss.TurnTexts = append(miss.TurnTexts, turnText[locomoTurnID(c.ID, e)])
			}
			for _, i := range cands {
				miss.Memories = append(miss.Memories, mems[i].Content)
			}
			misses = append(misses, miss)
		}
	}
	cnt.matching = len(matched)
	if a.explain > 0 {
		var un []UnmatchedMemory
		for _, i := range inConv {
			if matched[i] {
				continue
			}
			u := UnmatchedMemory{Conversation: c.ID, Memory: mems[i].Content}
			for _, t := range mems[i].TurnIDs {
				if txt, ok := turnText[t]; ok {
					u.TurnTexts = append(u.TurnTexts, txt)
				}
			}
			un = append(un, u)
		}
		a.rep.Unmatched = append(a.rep.Unmatched, spread(un, a.explain)...)
	}
	a.rep.Misses = append(a.rep.Misses, spread(misses, a.explain)...)
	a.rep.byConv = append(a.rep.byConv, cnt)
	a.rep.Observations += cnt.observations
	a.rep.Covered += cnt.covered
	a.rep.Memories += cnt.memories
	a.rep.MatchingMemories += cnt.matching
	a.rep.Turns += cnt.turns
}

// spread keeps up to n of xs spread over them: a few over the whole conversation,
// not the first few of session 1.
func spread[T any](xs []T, n int) []T {
	if len(xs) == 0 || n <= 0 {
		return nil
	}
	var out []T
	step := max(len(xs)/n, 1)
	for i := 0; i < len(xs) && i/step < n; i += step {
		out = append(out, xs[i])
	}
	return out
}

func (a *observationAcc) report() *ObservationReport {
	r := a.rep
	r.Coverage = rate(r.Covered, r.Observations)
	r.Precision = rate(r.MatchingMemories, r.Memories)
	r.MemoriesPer100Turns = 100 * rate(r.Memories, r.Turns)
	return &r
}

// writeObservations prints the extraction block of the LoCoMo table.
func writeObservations(tw *table, r *ObservationReport) {
	tw.printf("\nextraction against LoCoMo observations (%d observations, %d memories, %d turns)\n",
		r.Observations, r.Memories, r.Turns)
	tw.printf("observation coverage\t%s (%d/%d)\n", pct(r.Coverage), r.Covered, r.Observations)
	tw.printf("observation precision\t%s (%d/%d memories)\n", pct(r.Precision), r.MatchingMemories, r.Memories)
	tw.printf("memories per 100 turns\t%.1f\n", r.MemoriesPer100Turns)
	for _, c := range r.byConv {
		tw.printf("  %s\tcoverage %s (%d/%d), precision %s (%d/%d), %.1f memories/100 turns\n", c.conv,
			pct(rate(c.covered, c.observations)), c.covered, c.observations,
			pct(rate(c.matching, c.memories)), c.matching, c.memories, 100*rate(c.memories, c.turns))
	}
	tw.printf("rule: %s\n", r.Rule)
	if len(r.Misses) > 0 {
		tw.printf("\nmissed observations (--explain)\n")
	}
	for _, m := range r.Misses {
		tw.printf("- %s [%s] %s\n", m.Conversation, strings.Join(m.Evidence, ","), m.Observation)
		for _, t := range m.TurnTexts {
			tw.printf("    turn: %s\n", clip(t, 160))
		}
		if len(m.Memories) == 0 {
			tw.printf("    memories from these turns: none\n")
		}
		for _, mem := range m.Memories {
			tw.printf("    memory: %s\n", clip(mem, 160))
		}
	}
	if len(r.Unmatched) > 0 {
		tw.printf("\nmemories that match no observation (--explain)\n")
	}
	for _, u := range r.Unmatched {
		tw.printf("- %s %s\n", u.Conversation, clip(u.Memory, 160))
		for _, t := range u.TurnTexts {
			tw.printf("    turn: %s\n", clip(t, 160))
		}
	}
}

// parseObservations reads a conversation's "observation" entry:
// {"session_<N>_observation": {<speaker>: [[text, dia_id or [dia_ids]], ...]}}.
func parseObservations(raw map[string]map[string][][]any, known map[string]bool) ([]Observation, error) {
	var out []Observation
	for key, bySpeaker := range raw {
		var n int
		if _, err := fmt.Sscanf(key, "session_%d_observation", &n); err != nil {
			return nil, fmt.Errorf("observation key %q: want session_<N>_observation", key)
		}
		for speaker, facts := range bySpeaker {
			for _, f := range facts {
				if len(f) < 2 {
					continue
				}
				text, _ := f[0].(string)
				var ev []string
				switch v := f[1].(type) {
				case string:
					ev = []string{v}
				case []any:
					for _, x := range v {
						if s, ok := x.(string); ok {
							ev = append(ev, s)
						}
					}
				}
				if strings.TrimSpace(text) == "" {
					continue
				}
				out = append(out, Observation{Session: n, Speaker: speaker, Text: text, Evidence: cleanEvidence(ev, known)})
			}
		}
	}
	// Map order is random: sort for stable reports (session, then first evidence turn, then text).
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Session != b.Session {
			return a.Session < b.Session
		}
		ka, kb := firstTurnNumber(a.Evidence), firstTurnNumber(b.Evidence)
		if ka != kb {
			return ka < kb
		}
		return a.Text < b.Text
	})
	return out, nil
}

// firstTurnNumber is k of the first "D<n>:<k>" id, or a large number.
func firstTurnNumber(ids []string) int {
	for _, id := range ids {
		var s, k int
		if _, err := fmt.Sscanf(id, "D%d:%d", &s, &k); err == nil {
			return s*10000 + k
		}
	}
	return 1 << 30
}
