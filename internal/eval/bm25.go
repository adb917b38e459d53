package eval

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Okapi BM25 parameters of the bm25-turns baseline: the textbook values, not tuned.
const (
	bm25k1 = 1.2
	bm25b  = 0.75
)

// bm25Tokenisation says how the bm25-turns baseline cuts text, for reports.
const bm25Tokenisation = "lower-cased runs of letters and digits, split at apostrophes; NLTK's English " +
	"stopword list removed; Han characters as overlapping bigrams; no stemming. A turn is indexed as " +
	"\"<speaker>: <text> <image caption>\", as engram ingests it"

// bm25Stopwords is NLTK's English stopword list (179 words, apostrophes split as
// the tokeniser splits them). A plain keyword search drops them; with them kept,
// BM25 over LoCoMo turns loses about six points of recall@5.
const bm25Stopwords = "i me my myself we our ours ourselves you your yours yourself yourselves he him his " +
	"himself she her hers herself it its itself they them their theirs themselves what which who whom this " +
	"that these those am is are was were be been being have has had having do does did doing a an the and " +
	"but if or because as until while of at by for with about against between into through during before " +
	"after above below to from up down in out on off over under again further then once here there when " +
	"where why how all any both each few more most other some such no nor not only own same so than too " +
	"very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn " +
	"ma mightn mustn needn shan shouldn wasn weren won wouldn"

// bm25Tokens cuts text for the baseline: lower-cased runs of letters and digits
// (an apostrophe ends a word: "Caroline's" → "caroline", "s"), stopwords
// dropped, and runs of Han characters as overlapping bigrams (a lone character
// stays a unigram). No stemming: the baseline is the plain keyword search a
// developer would write in forty lines.
func bm25Tokens(s string, stop map[string]bool) []string {
	var out []string
	var word, han []rune
	flushWord := func() {
		if w := string(word); len(word) > 0 && !stop[w] {
			out = append(out, w)
		}
		word = word[:0]
	}
	flushHan := func() {
		switch {
		case len(han) == 1:
			out = append(out, string(han))
		case len(han) > 1:
			for i := 0; i+1 < len(han); i++ {
				out = append(out, string(han[i:i+2]))
			}
		}
		han = han[:0]
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			flushWord()
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushHan()
			word = append(word, unicode.ToLower(r))
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
	return out
}

// bm25Index is an in-memory Okapi BM25 index over a fixed set of documents,
// built without engram: the baseline a memory layer has to beat.
type bm25Index struct {
	stop   map[string]bool
	ids    []string
	tf     []map[string]int
	length []int
	df     map[string]int
	avgLen float64
}

// newBM25Index indexes docs (texts) under ids (same length, same order).
func newBM25Index(ids, docs []string) *bm25Index {
	stop := map[string]bool{}
	for _, w := range strings.Fields(bm25Stopwords) {
		stop[w] = true
	}
	x := &bm25Index{stop: stop, ids: ids, tf: make([]map[string]int, len(docs)), length: make([]int, len(docs)), df: map[string]int{}}
	total := 0
	for i, d := range docs {
		toks := bm25Tokens(d, x.stop)
		tf := make(map[string]int, len(toks))
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			x.df[t]++
		}
		x.tf[i], x.length[i] = tf, len(toks)
		total += len(toks)
	}
	if len(docs) > 0 {
		x.avgLen = float64(total) / float64(len(docs))
	}
	return x
}

// search returns the ids of the k best documents for query, best first. Ties keep
// document order; documents that share no term with the query are not returned.
func (x *bm25Index) search(query string, k int) []string {
	terms := map[string]int{}
	for _, t := range bm25Tokens(query, x.stop) {
		terms[t]++
	}
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i := range x.tf {
		if score := x.score(i, terms); score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]string, len(hits))
	for j, h := range hits {
		out[j] = x.ids[h.i]
	}
	return out
}

// score is document i's Okapi BM25 score for the query terms (term → count).
func (x *bm25Index) score(i int, terms map[string]int) float64 {
	n := float64(len(x.ids))
	norm := 1 - bm25b + bm25b*float64(x.length[i])/max(x.avgLen, 1)
	var score float64
	for t, qf := range terms {
		f := float64(x.tf[i][t])
		if f == 0 {
			continue
		}
		df := float64(x.df[t])
		// The "+1" form of IDF (Lucene's) stays positive for terms in most documents.
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		// A term repeated in the query counts once per repetition, as in the classic formula.
		score += float64(qf) * idf * f * (bm25k1 + 1) / (f + bm25k1*norm)
	}
	return score
}

// bm25TurnText is a LoCoMo turn as the baseline indexes it: the speaker's name,
// the text and the image caption, the words engram's own turn holds.
func bm25TurnText(d Dialog) string {
	s := d.Speaker + ": " + d.Text
	if d.BlipCaption != "" {
		s += " " + d.BlipCaption
	}
	return s
}

// newTurnsBM25 indexes a conversation's raw turns under their engram turn ids.
func newTurnsBM25(c Conversation) *bm25Index {
	var ids, docs []string
	for _, s := range c.Sessions {
		for _, d := range s.Turns {
			ids = append(ids, locomoTurnID(c.ID, d.DiaID))
			docs = append(docs, bm25TurnText(d))
		}
	}
	return newBM25Index(ids, docs)
}

// bm25Ranking is the baseline's ranking for a question, in the harness's form.
func bm25Ranking(x *bm25Index, question string, k int) [][]string {
	ids := x.search(strings.TrimSpace(question), k)
	out := make([][]string, len(ids))
	for i, id := range ids {
		out[i] = []string{id}
	}
	return out
}
