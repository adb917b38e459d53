package memory_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/memory"
)

// TestKeywordLargeOwnerPairs checks a large owner's keyword side (bm25Spec, owners of
// memory.LargeOwnerDocs rows and more): terms are frequent from 1 % of the rows, and
// a query of frequent terms alone ranks the rows holding two or more of them, in the
// full match's order and with its scores, without reading the full match; a query
// whose frequent terms never meet in a row, or that holds one, gets the best of the
// owner's newest memory.LargeOwnerWindow rows, with the full match's scores.
// Three or more frequent terms expected together in memory.AllFrequentMinRows rows
// (memory.AllFrequentCorrelation), or whose pairs are too many for the pairs pass to
// read, rank the rows holding all of them alone when there are that many, without the
// pairs pass.
func TestKeywordLargeOwnerPairs(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	const n = memory.LargeOwnerDocs + 2000
	rng := rand.New(rand.NewPCG(3, 5))
	// Every word of the vocabulary is in about 5 % of the rows (frequent); "sunward"
	// only in even rows and "moonward" only in odd ones, each in 2 % (frequent, never
	// together); "ptarmigan" in one row of a thousand (rare).
	texts := make([]string, n)
	for i := range texts {
		words := vocabularyWords(rng, 2+rng.IntN(4))
		if i%50 == 0 {
			words = append(words, map[bool]string{true: "sunward", false: "moonward"}[i%100 == 0])
		}
		if i%1000 == 3 {
			words = append(words, "ptarmigan")
		}
		// "glimmer", "tarn" and "fjord" together in 5 % of the rows, the first two
		// without the third in 5 % more, "fjord" alone in 5 % more: each in 10 %, so
		// even as independent words the three are expected together in 12 rows, and
		// the all-terms pass runs.
		switch i % 20 {
		case 7:
			words = append(words, "glimmer", "tarn", "fjord")
		case 12:
			words = append(words, "glimmer", "tarn")
		case 17:
			words = append(words, "fjord")
		}
		// "aurora" and "zephyr" each in a quarter of the rows, and with "cirrus" and
		// "stratus" all four in 2 % more: the four's pairs are expected in about
		// 2,200 rows (memory.PairsEstimate: wide), the four together in under one
		// row as independent words, so only the wide pairs make the all-terms pass
		// run.
		switch {
		case i%4 == 1:
			words = append(words, "aurora")
		case i%4 == 2:
			words = append(words, "zephyr")
		case i%100 == 3 || i%100 == 7:
			words = append(words, "aurora", "zephyr", "cirrus", "stratus")
		}
		// "basalt" and "gneiss" each in two rows of nine, together in one of nine
		// (1,333 rows): as independent words their pair is expected in 593 rows, by
		// memory.PairsEstimate in 1,257, below memory.LargePairsMaxRows, so the pairs
		// pass reads them all; the independent estimate, which a bound of 500 once
		// met, sent such pairs to the newest rows.
		switch i % 9 {
		case 0:
			words = append(words, "basalt")
		case 1:
			words = append(words, "basalt", "gneiss")
		case 2:
			words = append(words, "gneiss")
		}
		texts[i] = strings.Join(words, " ")
	}
	textOf := e.seedOwner(texts)

	hasWord := func(text, word string) bool { return strings.Contains(" "+text+" ", " "+word+" ") }
	holds := func(id, word string) bool { return hasWord(textOf[id], word) }
	// Counted over the texts: textOf holds each text twice, a turn's and a memory's.
	rowsHolding := func(word string) (df float64) {
		for _, t := range texts {
			if hasWord(t, word) {
				df++
			}
		}
		return df
	}
	if est := memory.PairsEstimate(rowsHolding("basalt"), rowsHolding("gneiss"), n); est > memory.LargePairsMaxRows {
		t.Fatalf("basalt and gneiss expected together in %v rows, want at most %d", est, memory.LargePairsMaxRows)
	}

	for _, layer := range []string{"turns", "memories"} {
		for _, tc := range []struct {
			name, query string
			held        int // the answer is the full match's rows holding this many query terms or more (0: the full match)
		}{
			{"frequent terms only", "zorbel kintar vashop", 2},
			{"two frequent terms", "quelax mirivo", 2},
			{"two frequent terms, their pairs in many rows", "basalt gneiss", 2},
			{"three frequent terms held together", "glimmer tarn fjord", 3},
			{"four frequent terms, their pairs wide", "aurora zephyr cirrus stratus", 4},
			{"frequent terms that never meet", "sunward moonward", 0},
			{"one frequent term", "zorbel", 0},
		} {
			t.Run(layer+"/"+tc.name, func(t *testing.T) {
				// The reference: the full match of every row holding a term.
				full := e.keyword(layer, tc.query, n, nil)
				if len(full.ids) == 0 {
					t.Fatal("the full match found nothing")
				}
				for _, w := range strings.Fields(tc.query) {
					if !containsTerm(full.frequent, w, -1) {
						t.Fatalf("frequent terms %v, want %s (in more than 1 %% of %d rows)", full.frequent, w, n)
					}
				}
				for _, f := range full.frequent {
					if f.DF < memory.FrequentTermMinDF || f.DF < memory.FrequentMinDF(n) {
						t.Errorf("reported %v as frequent", f)
					}
				}
				const limit = 30
				if tc.held == 0 {
					// No pass of rarer rows answers: the last pass ranks the owner's
					// newest memory.LargeOwnerWindow rows, each with the full match's
					// score (every term's document frequency is known), best first.
					checkWindow(t, e, layer, tc.query, limit, full, nil)
					return
				}
				ref := full
				var want []string
				var wantScores []float64
				for i, id := range ref.ids {
					held := 0
					for _, w := range strings.Fields(tc.query) {
						if holds(id, w) {
							held++
						}
					}
					if held >= tc.held {
						want, wantScores = append(want, id), append(wantScores, ref.scores[i])
					}
				}
				if len(want) > limit {
					want, wantScores = want[:limit], wantScores[:limit]
				}
				got := e.keyword(layer, tc.query, limit, full.frequent)
				if strings.Join(got.ids, ",") != strings.Join(want, ",") {
					t.Fatalf("with frequent terms known:\n%v\n%v\nwant (full match %d rows):\n%v\n%v", got.ids, got.scores, len(full.ids), want, wantScores)
				}
				for i := range got.scores {
					if math.Abs(got.scores[i]-wantScores[i]) > 1e-9 {
						t.Errorf("score %d: %v, full match %v", i, got.scores[i], wantScores[i])
					}
				}
				if skipped := fullMatchSkipped(got.plan); skipped != (tc.held > 0) {
					t.Errorf("full match skipped: %v, want %v\n%s", skipped, tc.held > 0, got.plan)
				}
				if skipped := passSkipped(got.plan, "kcmatch"); skipped != (tc.held >= 3) {
					t.Errorf("pairs pass skipped: %v, want %v\n%s", skipped, tc.held >= 3, got.plan)
				}
				// The all-terms pass runs for the three words expected together
				// (AllFrequentCorrelation) and the four of wide pairs, not for three
				// independent words of about 6 % each (about 3 rows expected) nor for two.
				if skipped := passSkipped(got.plan, "kamatch"); skipped != (tc.held < 3) {
					t.Errorf("all-terms pass skipped: %v, want %v\n%s", skipped, tc.held < 3, got.plan)
				}
			})
		}
		t.Run(layer+"/rare term", func(t *testing.T) {
			full := e.keyword(layer, "zorbel ptarmigan", n, nil)
			got := e.keyword(layer, "zorbel ptarmigan", 30, full.frequent)
			var want []string
			for _, id := range full.ids {
				if holds(id, "ptarmigan") {
					want = append(want, id)
				}
			}
			if len(want) == 0 || strings.Join(got.ids, ",") != strings.Join(want, ",") {
				t.Fatalf("got %v, want the rows holding the rare term %v", got.ids, want)
			}
		})
	}
}

// checkWindow checks a large owner's keyword pass over its newest rows: the best limit
// of the owner's newest memory.LargeOwnerWindow rows holding a query term (and, with
// keep, that keep holds), with the full match's scores.
func checkWindow(t *testing.T, e *bm25Env, layer, query string, limit int, full keywordRun, keep func(id string) bool) {
	t.Helper()
	order := "updated_at DESC, id DESC"
	idCol := "id::text"
	if layer == "turns" {
		order, idCol = "occurred_at DESC", "turn_id"
	}
	window := map[string]bool{}
	err := pgx.BeginFunc(e.ctx, e.s.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(e.ctx, "SELECT set_config('engram.tenant', 'acme', true)"); err != nil {
			return err
		}
		rows, err := tx.Query(e.ctx, fmt.Sprintf(`SELECT %s FROM %s WHERE user_id = 'u1' ORDER BY %s LIMIT %d`,
			idCol, layer, order, memory.LargeOwnerWindow))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, id := range ids {
			window[id] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	score := map[string]float64{}
	var rest []float64 // the full match's scores of window rows
	for i, id := range full.ids {
		score[id] = full.scores[i]
		if window[id] && (keep == nil || keep(id)) {
			rest = append(rest, full.scores[i])
		}
	}
	got := e.keyword(layer, query, limit, full.frequent)
	if want := min(limit, len(rest)); len(got.ids) != want || want == 0 {
		t.Fatalf("%d rows, want %d (the window's %d matches of the full match's %d)", len(got.ids), want, len(rest), len(full.ids))
	}
	slices.Sort(rest)
	cut := rest[len(rest)-len(got.ids)] // the lowest score the best of the window reach
	for i, id := range got.ids {
		if !window[id] {
			t.Errorf("row %s is not among the newest %d", id, memory.LargeOwnerWindow)
		}
		if keep != nil && !keep(id) {
			t.Errorf("row %s should not be ranked", id)
		}
		if math.Abs(got.scores[i]-score[id]) > 1e-9 {
			t.Errorf("row %s: score %v, full match %v", id, got.scores[i], score[id])
		}
		if got.scores[i] < cut-1e-9 {
			t.Errorf("row %s: score %v below the window's best %d (%v)", id, got.scores[i], len(got.ids), cut)
		}
	}
}

// TestKeywordLargeOwnerWidePairs checks a large owner's pairs pass when its frequent
// terms' pairs are expected to hold more than memory.LargePairsMaxRows rows: it ranks
// the pairs among the owner's newest memory.LargeOwnerWindow rows only, with the full
// match's scores, and never reads the pairs of the whole owner.
func TestKeywordLargeOwnerWidePairs(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	const n = memory.LargeOwnerDocs + 2000
	rng := rand.New(rand.NewPCG(7, 11))
	// "amber" and "birch" each in about 40 % of the rows, independently: their pair is
	// expected in 3,036 rows (memory.PairsEstimate), above memory.LargePairsMaxRows.
	texts := make([]string, n)
	for i := range texts {
		// Rows of 1 to 4 other words: the pairs' scores differ, so the best pairs of the
		// whole owner are not those of the newest rows.
		words := vocabularyWords(rng, 1+rng.IntN(4))
		for _, w := range []string{"amber", "birch"} {
			if rng.IntN(5) < 2 {
				words = append(words, w)
			}
		}
		texts[i] = strings.Join(words, " ")
	}
	textOf := e.seedOwner(texts)
	both := func(id string) bool {
		t := " " + textOf[id] + " "
		return strings.Contains(t, " amber ") && strings.Contains(t, " birch ")
	}
	if est := memory.PairsEstimate(0.4*n, 0.4*n, n); est <= memory.LargePairsMaxRows {
		t.Fatalf("expected pairs %v, want above %d", est, memory.LargePairsMaxRows)
	}
	for _, layer := range []string{"turns", "memories"} {
		t.Run(layer, func(t *testing.T) {
			full := e.keyword(layer, "amber birch", n, nil)
			if len(full.frequent) != 2 {
				t.Fatalf("frequent terms %v, want amber and birch", full.frequent)
			}
			checkWindow(t, e, layer, "amber birch", 30, full, both)
			got := e.keyword(layer, "amber birch", 30, full.frequent)
			if !fullMatchSkipped(got.plan) {
				t.Errorf("the full match ran\n%s", got.plan)
			}
			if !ownerPairsSkipped(t, got.plan) {
				t.Errorf("the pairs of the whole owner were read\n%s", got.plan)
			}
		})
	}
}

// ownerPairsSkipped reports whether the pairs pass (kcmatch) left the whole owner
// alone and read the window: every scan of its first branch, the owner's rows, never
// executed, and a scan of its second (gated on "One-Time Filter: COALESCE(") did.
func ownerPairsSkipped(t *testing.T, plan string) bool {
	block := cteBlock(t, plan, "kcmatch\n")
	j := strings.Index(block, "One-Time Filter: COALESCE(")
	if j < 0 {
		return false
	}
	scans := func(part string) (ran, skipped int) {
		for _, line := range strings.Split(part, "\n") {
			if strings.Contains(line, " on turns ") || strings.Contains(line, " on memories ") {
				if strings.Contains(line, "never executed") {
					skipped++
				} else {
					ran++
				}
			}
		}
		return ran, skipped
	}
	ownerRan, ownerSkipped := scans(block[:j])
	windowRan, _ := scans(block[j:])
	return ownerRan == 0 && ownerSkipped > 0 && windowRan > 0
}
