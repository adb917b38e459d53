package memory_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// frequentVocabulary is 60 made-up words (each in about 8 % of the texts, so none is
// frequent), which no stemming or stopword list changes.
var frequentVocabulary = func() []string {
	var out []string
	for _, a := range strings.Fields("zor kin vash quel drom pat lurn seb tol mir") {
		for _, b := range strings.Fields("bel tar op lin ax ivo") {
			out = append(out, a+b)
		}
	}
	return out
}()

// vocabularyWords returns n different words of frequentVocabulary drawn at random. A
// word twice in one text would put its row past stage one's cut yet into the top
// (bm25Spec.side scores stage one as if each term occurred once): an approximation the
// keyword side accepts, which these tests, checking the passes' choice of rows against
// the full match, must not depend on.
func vocabularyWords(rng *rand.Rand, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		if w := frequentVocabulary[rng.IntN(len(frequentVocabulary))]; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// frequentCorpus returns n texts: every one holds "plonk" (a frequent term), most
// "grommet" too, each a few words of the vocabulary, one in a hundred "kestrel" and one
// in a thousand "ptarmigan".
func frequentCorpus(n int) []string {
	rng := rand.New(rand.NewPCG(7, 11))
	out := make([]string, n)
	for i := range out {
		words := []string{"plonk"}
		if i%10 != 0 {
			words = append(words, "grommet")
		}
		words = append(words, vocabularyWords(rng, 3+rng.IntN(5))...)
		if i%100 == 0 {
			words = append(words, "kestrel")
		}
		if i%1000 == 7 {
			words = append(words, "ptarmigan")
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// TestKeywordFrequentTermPruning checks the keyword side's common-terms handling of
// frequent terms (bm25Spec): given the owner's frequent terms with their document
// frequencies, a search returns the full match's answer without the rows that hold
// only frequent terms (same order, same scores), which is the whole full answer when
// the other terms' rows fill it; it falls back to the full match when the other terms
// find nothing; the full match reports the frequent terms it counted, and a pruned
// answer never reads the full match.
func TestKeywordFrequentTermPruning(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	const n = 2400
	texts := frequentCorpus(n)
	textOf := e.seedOwner(texts)

	for _, layer := range []string{"turns", "memories"} {
		for _, tc := range []struct {
			name, query string
			pruned      bool // the other terms find rows: the full match never runs
		}{
			{"rare terms find many rows", "plonk grommet zorbel kintar", true},
			{"rare term fills the answer", "plonk kestrel", true},
			{"rare term in three rows", "plonk grommet ptarmigan", true},
			{"only frequent terms", "plonk grommet", false},
			{"rare term matches nothing", "plonk nowhereword", false},
			{"no frequent term", "zorbel kestrel", true},
		} {
			t.Run(layer+"/"+tc.name, func(t *testing.T) {
				full := e.keyword(layer, tc.query, 20, nil)
				if len(full.ids) == 0 {
					t.Fatal("the full match found nothing")
				}
				var known []memory.TermDF
				for _, f := range full.frequent {
					if f.DF < memory.FrequentTermMinDF || f.DF < memory.FrequentMinDF(n) {
						t.Errorf("reported %v as frequent", f)
					}
					known = append(known, f)
				}
				if strings.Contains(tc.query, "plonk") && !containsTerm(known, "plonk", n) {
					t.Fatalf("frequent terms %v, want plonk in all %d rows", full.frequent, n)
				}
				if tc.name == "no frequent term" {
					if len(known) != 0 {
						t.Errorf("frequent terms %v, want none", known)
					}
					known = []memory.TermDF{{Term: "plonk", DF: n}} // known, but not in the query
				}
				// What the answer must be: the full match's rows that hold a term not
				// known as frequent, in its order (all of them when nothing else matches).
				var want []string
				var wantScores []float64
				for i, id := range full.ids {
					for _, w := range strings.Fields(tc.query) {
						if !containsTerm(known, w, -1) && strings.Contains(" "+textOf[id]+" ", " "+w+" ") {
							want, wantScores = append(want, id), append(wantScores, full.scores[i])
							break
						}
					}
				}
				if len(want) == 0 {
					want, wantScores = full.ids, full.scores
				}
				got := e.keyword(layer, tc.query, 20, known)
				if strings.Join(got.ids, ",") != strings.Join(want, ",") {
					t.Fatalf("with frequent terms known:\n%v\nwant (full match %d rows):\n%v", got.ids, len(full.ids), want)
				}
				for i := range got.scores {
					if math.Abs(got.scores[i]-wantScores[i]) > 1e-9 {
						t.Errorf("score %d: %v, full match %v", i, got.scores[i], wantScores[i])
					}
				}
				if skipped := fullMatchSkipped(got.plan); skipped != tc.pruned {
					t.Errorf("full match skipped: %v, want %v\n%s", skipped, tc.pruned, got.plan)
				}
				if tc.name == "rare term in three rows" && len(got.ids) != 3 {
					t.Errorf("%d rows, want the three holding ptarmigan", len(got.ids))
				}
			})
		}
	}
}

// keywordRun is one keyword side's answer: ids and scores in rank order, the frequent
// terms it reported, and its executed plan.
type keywordRun struct {
	ids      []string
	scores   []float64
	frequent []memory.TermDF
	plan     string
}

// keyword runs the keyword side of layer ("turns" or "memories") over user u1 of
// tenant acme, with the owner's counted statistics and frequent as its known frequent
// terms, and explains the same search.
func (e *bm25Env) keyword(layer, query string, limit int, frequent []memory.TermDF) keywordRun {
	e.t.Helper()
	var r keywordRun
	err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		if layer == "turns" {
			stats, err := tx.TurnTextStats(e.ctx, "u1")
			if err != nil {
				return err
			}
			stats.Frequent = frequent
			q := memory.TurnSearch{Query: query, UserID: "u1", Keyword: true, Limit: limit, Stats: &stats}
			hits, freq, err := tx.TurnCandidates(e.ctx, q)
			if err != nil {
				return err
			}
			for _, h := range ranked(hits, func(h memory.TurnHit) int64 { return h.KeywordRank }) {
				r.ids, r.scores = append(r.ids, h.TurnID), append(r.scores, h.Keyword)
			}
			r.frequent = freq
			plan, err := tx.ExplainAnalyzeTurnCandidates(e.ctx, q)
			r.plan = strings.Join(plan, "\n")
			return err
		}
		stats, err := tx.OwnerTextStats(e.ctx, memory.ScopeUser, "u1", "", []string{"active"}, time.Now())
		if err != nil {
			return err
		}
		stats.Frequent = frequent
		q := memory.MemorySearch{Query: query, UserID: "u1", Statuses: []string{"active"}, Now: time.Now(),
			KeywordOnly: true, Limit: limit, Stats: &stats}
		hits, freq, err := tx.MemoryCandidates(e.ctx, q)
		if err != nil {
			return err
		}
		for _, h := range ranked(hits, func(h memory.MemoryHit) int64 { return h.KeywordRank }) {
			r.ids, r.scores = append(r.ids, h.Memory.ID.String()), append(r.scores, h.Keyword)
		}
		r.frequent = freq
		plan, err := tx.ExplainAnalyzeMemoryCandidates(e.ctx, q)
		r.plan = strings.Join(plan, "\n")
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// containsTerm reports whether ts holds term (with document frequency df, unless df < 0).
func containsTerm(ts []memory.TermDF, term string, df float64) bool {
	for _, x := range ts {
		if x.Term == term && (df < 0 || x.DF == df) {
			return true
		}
	}
	return false
}

// seedOwner COPYs one turn and one memory of user u1 of tenant acme for each text, the
// turns a minute apart in sessions of 40, and returns each turn's and memory's text by
// its id. The memories share one updated_at, so their ids decide which are a large
// owner's newest (its keyword window): derived from the text's index, they pick the same
// rows in every run.
func (e *bm25Env) seedOwner(texts []string) map[string]string {
	e.t.Helper()
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	turns := make([]memory.BulkTurn, len(texts))
	mems := make([]memory.BulkMemory, len(texts))
	textOf := map[string]string{}
	for i, text := range texts {
		turns[i] = memory.BulkTurn{TurnID: fmt.Sprintf("t%05d", i), UserID: "u1", SessionID: fmt.Sprintf("s%d", i/40),
			Role: memory.RoleUser, Content: text, OccurredAt: at.Add(time.Duration(i) * time.Minute)}
		mems[i] = memory.BulkMemory{ID: uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "u1/%d", i)), UserID: "u1", Type: memory.Semantic, Category: memory.CatFact,
			Content: text, Importance: 0.5, Confidence: 0.9, ValidFrom: at, Source: memory.SourceUser, Extractor: "test",
			Embedding: []float32{1, float32(i%7) / 7}}
		textOf[turns[i].TurnID], textOf[mems[i].ID.String()] = text, text
	}
	e.copyRows("acme", turns, mems)
	return textOf
}

// fullMatchSkipped reports whether the plan's full match (kfmatch) never read a row
// (its scans of turns or memories never executed).
func fullMatchSkipped(plan string) bool { return passSkipped(plan, "kfmatch") }

// passSkipped reports whether the match CTE of a keyword pass (kfmatch, kcmatch, …)
// never read a row.
func passSkipped(plan, cte string) bool {
	i := strings.Index(plan, "CTE "+cte+"\n")
	if i < 0 {
		return false
	}
	rest := plan[i:]
	if j := strings.Index(rest, "\n  CTE "); j > 0 {
		rest = rest[:j]
	}
	scans := 0
	for _, line := range strings.Split(rest, "\n") {
		if strings.Contains(line, " on turns ") || strings.Contains(line, " on memories ") {
			if !strings.Contains(line, "never executed") {
				return false
			}
			scans++
		}
	}
	return scans > 0
}

// ranked keeps the hits the keyword side ranked, best first.
func ranked[H any](hs []H, rank func(H) int64) []H {
	var out []H
	for _, h := range hs {
		if rank(h) > 0 {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b H) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}
