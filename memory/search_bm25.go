package memory

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Okapi BM25 parameters of the keyword side: the textbook values (Robertson et al.),
// the same as the bm25-turns baseline of `engram eval locomo`.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// bm25Spec is one keyword side ranked by Okapi BM25 over full-text rows.
//
// Terms are the lexemes of the search text under the 'english' configuration, the one
// the tsv columns are made with: PostgreSQL's Snowball English stemmer and stopword
// list, so "went"/"going" and "cities"/"city" meet and "the" is not a term. Chinese
// reaches the parser as character bigrams (SearchText), so each bigram is a term. An
// identifier such as INV-7731 or ORD-2024-88123 is one lexeme of its own (the parser
// keeps a hyphenated word whole beside its parts), rare and so weighty: the exact id
// outranks a neighbour that shares only its prefix.
//
// The statistics are those of the owner being searched, never of another tenant or
// owner: N and the average length come from stats (one row: n, avgdl), and each term's
// document frequency is counted over match, the owner's rows that hold at least one
// term (every row holding a term is among them, so the count is exact). N may come
// from a cache (OwnerTextStats) and lag the rows: it is never taken below a term's
// document frequency, so an IDF stays positive.
//
// Frequent terms (Lucene's and Elasticsearch's "common terms"). A term held by much of
// an owner's rows (a word of every turn, the user's own name in every memory) makes an
// OR query read and score most of the owner, while its IDF is close to 0. When the
// caller knows such terms of the owner with their document frequencies
// (TextStats.Frequent, learnt from earlier searches of the owner and cached beside N),
// the side matches rows through the other terms only and scores them with every term,
// the frequent ones with their cached document frequencies: a frequent term adds to the
// score of a row the other terms found, but never makes a row a candidate by itself.
// When the other terms find nothing (or the query holds only frequent terms) the same
// statement falls back to the full match. Where the other terms' rows fill stage one's
// cut with scores above what a row of frequent terms alone could reach (the sum of
// their IDFs times (k1+1)/(1+k1(1-b))), the answer is exactly the full match's; below
// that, rows holding only frequent terms are left out, as the common-terms query does.
// A full match reports the frequent terms it counted (<prefix>freq), so the caller can
// cache them.
//
// Large owners (LargeOwnerDocs rows and more). A term in 2 % of an owner of 50,000
// turns is in 1,000 of them, and a query of four such terms read and scored 4,000
// rows (15 µs each): the cost grew with the owner. For them a term is frequent from
// LargeOwnerFrequentShare of the rows, and at most LargeOwnerFrequentMaxDF of them
// (the cutoff_frequency of Elasticsearch's guide; its reference's examples use 0.1 %).
// When the query's other terms find nothing, a pass of the rows holding at least two
// of its frequent terms (the GIN index intersects their posting lists) comes before
// the full match: a query of frequent terms alone ranks the rows holding several of
// them, as the common-terms query does with its high-frequency group (all of them, or
// minimum_should_match). Every term of that pass is known with its document
// frequency, so each row it ranks gets the full match's score; only rows holding one
// frequent term and nothing else are left out.
// Where the pairs are expected (PairsEstimate) in more than LargePairsMaxRows rows,
// that pass ranks those of the owner's newest LargeOwnerWindow rows only. Smaller
// owners keep the full match.
type bm25Spec struct {
	prefix string // CTE name prefix, so two sides can share one statement
	text   string // placeholder of the search text (already through SearchText)
	// match selects id, tsv, tsv_len, keep and the order columns from the owner's rows
	// matching the tsquery column q of the CTE named qcte: the candidates and the base
	// of document frequencies; keep says whether the row passes the search's other
	// filters (only kept rows are ranked).
	match func(qcte string) string
	// stats selects n and avgdl, the owner's document count and mean length.
	stats string
	// order breaks ties among equal scores (columns of match, after the score).
	order string
	limit string // placeholder of the candidate count
	// frequent and frequentDF, when set, are the placeholders of the owner's known
	// frequent terms (text[]) and their document frequencies (float8[]).
	frequent, frequentDF string
	// rowByID, when set, joins a matched row of alias m (by m.id) to its table as tv,
	// so only the rows stage two rescores read their tsv again (by primary key, with
	// lookupSQL);
	// otherwise every match carries its tsv through the scoring. Set only for owners
	// of RowByIDMinDocs rows and more (byID): carried through each (match, term) row
	// and each group, the tsv is most of a match's bytes when an owner's terms match
	// thousands of rows, while a small owner's few matches are cheaper to carry than
	// to read again.
	rowByID string
	// pairs adds the pass of rows holding two or more of the query's frequent terms
	// before the full match (a large owner's; needs frequent).
	pairs bool
	// window, when set, selects what match does from the owner's newest
	// LargeOwnerWindow rows only: a large owner's last pass (with pairs).
	window func(qcte string) string
}

// LargeOwnerWindow is how many of a large owner's newest rows its keyword side's last
// pass ranks, when no rarer pass answered: a query of one frequent term (a word of
// most rows, "user") matched every row holding it, and a 100,000-memory owner's
// search took 700 ms. BM25 ranks such rows by length alone, so the newest of them
// serve as well, at a bounded cost.
const LargeOwnerWindow = 5000

// LargeOwnerDocs is the owner size (documents of the layer searched) from which
// frequent terms start at LargeOwnerFrequentShare and a query of frequent terms alone
// ranks the rows holding two or more of them (bm25Spec).
const LargeOwnerDocs = 10_000

// AllFrequentMinRows is how many rows holding all of a query's frequent terms (three
// or more) answer a large owner's keyword side without the pairs pass: a search's
// default top_k. At 100,000 memories a pair of frequent terms can hold 4,600 rows,
// which the pairs pass reads and scores (50–60 ms); the rows holding all of them are
// a few dozen, and BM25 ranks those first unless the pairs' rows are much shorter.
const AllFrequentMinRows = 10

// AllFrequentCorrelation is how many times more rows than independence predicts a
// query's frequent terms are taken to share when deciding whether the all-terms pass
// is worth running: words of one text are not independent (LargePairsMaxRows: pairs
// held up to 23 times the independent estimate at 1,000,000 memories). At that size
// the pass found no row in every plan where it ran, after 4–14 ms. It costs about half
// a pairs pass, so it pays when it answers about half the time: it runs where the
// pairs are wide (their pass reads only the newest rows) or the rows expected to hold
// every term, times this, reach AllFrequentMinRows. Left out, the pairs pass answers
// (up to LargePairsMaxRows expected rows), ranking the all-terms rows among the rest
// as the full match does.
const AllFrequentCorrelation = 2

// LargePairsMaxRows is how many rows a large owner's pairs pass may expect to read
// (PairsEstimate, summed over the query's pairs of frequent terms) before it looks
// among the owner's newest LargeOwnerWindow rows instead: reading the window costs
// about what a pairs pass of 1,000–2,000 rows does (at 1,000,000 memories, a pass of
// 1,554 rows and the window 13–16 ms each; a pass of 3,916 rows 24–31 ms, the window
// 8–15). Words of one text are far from independent, so the estimate is not the
// independent one (df_a × df_b / N). In the bench's million-memory owner, of 11
// queries' pairs one held no row; the others held 1.2 to 23 times the independent
// estimate (3,916 rows where it said 168), 0.04 to 0.12 times the upper bound (every
// row of the rarer term holding the other) but one that held all of it, and 0.24 to
// 1.7 times their geometric mean, PairsEstimate.
const LargePairsMaxRows = 2000

// PairsEstimate is how many rows a pair of terms held by dfA and dfB of an owner's n
// rows is expected in: the geometric mean of the estimate as if the terms were
// independent and the upper bound, the rarer term's rows (see LargePairsMaxRows). N
// may come from a cache and lag the rows: it is never taken below a term's count (as
// for an IDF), so the estimate never exceeds the bound. pairsEstimateSQL is the same
// in SQL.
func PairsEstimate(dfA, dfB, n float64) float64 {
	return math.Sqrt(max(dfA*dfB/max(n, dfA, dfB, 1)*min(dfA, dfB), 0))
}

// pairsEstimateSQL is PairsEstimate of the SQL expressions a, b and n.
func pairsEstimateSQL(a, b, n string) string {
	return fmt.Sprintf("sqrt(greatest((%[1]s) * (%[2]s) / greatest(%[3]s, %[1]s, %[2]s, 1) * least(%[1]s, %[2]s), 0))", a, b, n)
}

// LargeOwnerFrequentShare is the share of a large owner's rows from which a term is
// frequent, up to LargeOwnerFrequentMaxDF rows.
const LargeOwnerFrequentShare = 0.01

// LargeOwnerFrequentMaxDF caps a large owner's frequent-term threshold: a term held
// by that many rows is frequent however large the owner. A share alone let the rare
// pass grow with the owner: at 1,000,000 memories a term in 0.9 % of them (9,000
// rows) was read and scored in full, and the owner's search took 300 ms at p95.
// With the cap the rare pass reads at most about that many rows per term, as it does
// at 100,000 memories, where 1 % is the same 1,000 rows.
const LargeOwnerFrequentMaxDF = 1000

// FrequentMinDF is the document frequency from which a term is frequent in an owner of
// n rows (besides FrequentTermMinDF): FrequentTermShare of them, or for a large owner
// LargeOwnerFrequentShare of them up to LargeOwnerFrequentMaxDF. frequentMinDFSQL is
// the same in SQL.
func FrequentMinDF(n float64) float64 {
	if n >= LargeOwnerDocs {
		return min(n*LargeOwnerFrequentShare, LargeOwnerFrequentMaxDF)
	}
	return n * FrequentTermShare
}

// frequentMinDFSQL is FrequentMinDF of n (an SQL expression), in SQL.
func frequentMinDFSQL(n string) string {
	return fmt.Sprintf("(CASE WHEN %[1]s >= %[2]d THEN least(%[1]s * %[3]g, %[4]d) ELSE %[1]s * %[5]g END)",
		n, LargeOwnerDocs, LargeOwnerFrequentShare, LargeOwnerFrequentMaxDF, FrequentTermShare)
}

// RowByIDMinDocs is the owner size (documents of the layer searched) from which the
// keyword side reads the rescored rows' tsv again by primary key instead of carrying
// every match's (bm25Spec.rowByID). Measured interleaved, one query after the other
// (keyword side of turns, 400 queries): an owner of 51,000 turns p95 71.1 → 65.6 and
// 77.1 → 73.3 ms (p50 equal); an owner of 1,000 p50 5.6 → 6.0 and 6.6 → 6.9 ms.
const RowByIDMinDocs = 10_000

// byID returns join when the owner's statistics say it has RowByIDMinDocs documents
// or more, else "" (unknown statistics: "").
func byID(stats *TextStats, join string) string {
	if stats == nil || stats.N < RowByIDMinDocs {
		return ""
	}
	return join
}

// FrequentTermMinDF and FrequentTermShare decide which terms a keyword search reports
// as frequent for its owner: held by at least that many of the owner's rows and that
// share of them (for a large owner FrequentMinDF's share and cap).
const (
	FrequentTermMinDF = 50
	FrequentTermShare = 0.125
)

// TermDF is one term's document frequency among an owner's rows.
type TermDF struct {
	Term string
	DF   float64
}

// lexemeQuery is the tsquery of the lexeme u.lexeme alone: quoted (tsquery input syntax
// doubles a quote and escapes a backslash), so it is matched as it is and never re-parsed.
const lexemeQuery = `format('''%s''', replace(replace(u.lexeme, '\', '\\'), '''', ''''''))::tsquery`

// ctes returns the side's CTEs: <prefix>scored holds id, the order columns and kr (the
// BM25 score) of every kept row; <prefix>top, id, kr and rank (1 = best) of the best
// limit of them; <prefix>freq (terms, dfs), the frequent terms a full match counted.
func (s bm25Spec) ctes() []string {
	p := s.prefix
	// fdf is a term's document frequency when the caller knows it as frequent.
	fdf := "NULL::float8"
	if s.frequent != "" {
		// Looked up by position, one lexeme at a time: a join sorted the owner's list
		// (collation-aware, 0.6 ms for 1,024 terms and 2–4 ms for 2,064, against 0.2 by
		// position). A term the caller lists twice counts with its first entry, and
		// each lexeme stays one row: ord stays 1..n.
		fdf = `(` + s.frequentDF + `::float8[])[array_position(` + s.frequent + `::text[], u.lexeme)]`
	}
	// ord numbers the query's distinct lexemes 1..n, so stage one looks a term's IDF
	// up in an array (<x>idfa) instead of joining by lexeme.
	out := []string{p + `terms AS MATERIALIZED (
	SELECT u.lexeme AS term, ` + lexemeQuery + ` AS tq, ` + fdf + ` AS fdf, u.ord::int AS ord
	FROM unnest(to_tsvector('english', ` + s.text + `)) WITH ORDINALITY u(lexeme, positions, weights, ord))`,
		p + `q AS MATERIALIZED (
	SELECT string_agg(tq::text, ' | ')::tsquery AS q FROM ` + p + `terms)`,
		p + `stats AS MATERIALIZED (` + s.stats + `)`,
	}
	if s.frequent == "" {
		out = append(out, s.side(p, p, s.match(p+"q"), "", false)...)
		return append(out, s.freq(p, p), s.top(p))
	}
	r, f := p+"r", p+"f"
	// With no other term the rare query is NULL, which matches nothing: the full
	// match runs.
	out = append(out, r+`q AS MATERIALIZED (
	SELECT string_agg(tq::text, ' | ')::tsquery AS q FROM `+p+`terms WHERE fdf IS NULL)`)
	out = append(out, s.side(p, r, s.match(r+"q"), "", true)...)
	// Each later pass runs only when no pass before it found a kept row (its gate),
	// and <p>scored takes the rows of the pass that answered.
	ok := func(x string, rows int) (string, string) {
		return fmt.Sprintf(`%[1]sok AS MATERIALIZED (SELECT count(*) >= %[2]d AS ok FROM (SELECT 1 FROM %[1]spre LIMIT %[2]d) o)`, x, rows),
			"(SELECT ok FROM " + x + "ok)"
	}
	okCTE, answered := ok(r, 1)
	out = append(out, okCTE)
	passes, answers, none := []string{r}, []string{answered}, "NOT "+answered
	if s.pairs {
		c := p + "c"
		// wide: the pairs are expected in more than LargePairsMaxRows rows, so their
		// pass looks among the owner's newest rows only (below).
		wide := "false"
		if s.window != nil {
			out = append(out, fmt.Sprintf(`%[1]swide AS MATERIALIZED (
	SELECT coalesce(sum(%[4]s), 0) > %[3]d AS wide
	FROM %[2]sterms a JOIN %[2]sterms b ON a.term < b.term, %[2]sstats s
	WHERE a.fdf IS NOT NULL AND b.fdf IS NOT NULL GROUP BY s.n)`, c, p, LargePairsMaxRows, pairsEstimateSQL("a.fdf", "b.fdf", "s.n")))
			wide = "coalesce((SELECT wide FROM " + c + "wide), false)"
		}
		// The all-terms pass: rows holding every one of three or more frequent terms
		// (their posting lists intersected). It answers when it finds
		// AllFrequentMinRows; fewer, and the pairs pass (which holds them too) runs.
		// It is left out where it is not expected to answer (AllFrequentCorrelation).
		a := p + "a"
		out = append(out, fmt.Sprintf(`%[1]sq AS MATERIALIZED (
	SELECT CASE WHEN count(*) >= 3 AND (%[3]s OR
		sum(ln(greatest(fdf, 1))) - (count(*) - 1) * ln(greatest((SELECT n FROM %[2]sstats), 1)) >= ln(%[4]g))
		THEN string_agg(tq::text, ' & ')::tsquery END AS q FROM %[2]sterms WHERE fdf IS NOT NULL)`,
			a, p, wide, float64(AllFrequentMinRows)/AllFrequentCorrelation))
		// Gated on its query too, so a pass left out never starts its scan.
		out = append(out, s.side(p, a, s.match(a+"q"), none+" AND (SELECT q IS NOT NULL FROM "+a+"q)", true)...)
		okCTE, answered := ok(a, AllFrequentMinRows)
		out = append(out, okCTE)
		passes, answers, none = append(passes, a), append(answers, none+" AND "+answered), none+" AND NOT "+answered

		// The pairs pass: rows holding two or more of the query's frequent terms, as
		// one tsquery of their pairs (NULL, so matching nothing, under two of them).
		out = append(out, c+`q AS MATERIALIZED (
	SELECT string_agg('(' || a.tq::text || ' & ' || b.tq::text || ')', ' | ')::tsquery AS q
	FROM `+p+`terms a JOIN `+p+`terms b ON a.term < b.term WHERE a.fdf IS NOT NULL AND b.fdf IS NOT NULL)`)
		match := s.match(c + "q")
		if s.window != nil {
			// Pairs expected to hold more than LargePairsMaxRows rows (PairsEstimate)
			// are looked for in the owner's newest rows only: the pass's cost stays
			// bounded however large the owner. Its counts may then be the window's;
			// they are never above the rare pass's exact ones, which freq keeps.
			match = `SELECT * FROM (` + match + `) o WHERE NOT ` + wide + `
	UNION ALL SELECT * FROM (` + s.window(c+"q") + `) w WHERE ` + wide
		}
		out = append(out, s.side(p, c, match, none, true)...)
		okCTE, answered = ok(c, 1)
		out = append(out, okCTE)
		passes, answers, none = append(passes, c), append(answers, none+" AND "+answered), none+" AND NOT "+answered
	}
	// The passes whose counts are reported: the rare pass's are the owner's exactly, the
	// others' (of fewer rows, or of the window) never above them, and freq keeps the
	// largest count of a term.
	counted := slices.Clone(passes)
	if s.pairs && s.window != nil {
		// A large owner's last pass ranks its newest LargeOwnerWindow rows only, with
		// the known document frequencies (a term no earlier pass found is counted in
		// the window); its counts, of the window, are not reported.
		out = append(out, s.side(p, f, s.window(p+"q"), none, true)...)
	} else {
		out = append(out, s.side(p, f, s.match(p+"q"), none, false)...)
		counted = append(counted, f)
	}
	passes, answers = append(passes, f), append(answers, none)
	union := make([]string, len(passes))
	for i, x := range passes {
		union[i] = "SELECT * FROM " + x + "scored WHERE " + answers[i]
	}
	// The rare pass counts exactly the terms the caller did not know (every row
	// holding one is among its matches), so a term found frequent there is reported
	// too, whichever pass answers.
	return append(out, s.freq(p, counted...),
		p+"scored AS MATERIALIZED (\n\t"+strings.Join(union, "\n\tUNION ALL ")+")",
		s.top(p))
}

// side is one pass of the keyword side under CTE prefix x (p: the spec's, which names
// terms and stats): match the rows of qcte (only when gate holds, if there is one),
// post their terms, count document frequencies (a frequent term's from the caller
// when known), and score in two stages into <x>scored.
func (s bm25Spec) side(p, x, match, gate string, known bool) []string {
	if gate != "" {
		// An uncorrelated condition: PostgreSQL evaluates it once and, when false,
		// never runs the scan below it.
		match = `SELECT * FROM (` + match + `) g WHERE ` + gate
	}
	df := "count(*)"
	if known {
		df = "coalesce(p.fdf, count(*))"
	}
	postTSV, preTSV, tsv, tsvJoin := "m.tsv, ", "(array_agg(p.tsv))[1] AS tsv,\n\t\t", "m.tsv", ""
	if s.rowByID != "" {
		postTSV, preTSV, tsv, tsvJoin = "", "", "tv.tsv", "\n\t"+s.rowByID
	}
	return []string{
		x + `match AS MATERIALIZED (` + match + `)`,
		// Which terms each match holds: one @@ per match and term, far cheaper than
		// unnesting every match's tsvector when a term is common. The rows carry what
		// the scoring reads, so no later stage joins back to match (CTE row counts are
		// unknown to the planner, which would nest such a join).
		fmt.Sprintf(`%[1]spost AS MATERIALIZED (
	SELECT %[2]s, %[4]sm.tsv_len, m.keep, w.term AS lexeme, w.fdf, w.ord
	FROM %[1]smatch m JOIN %[3]sterms w ON m.tsv @@ w.tq)`, x, orderColumns("m", s.order), p, postTSV),
		fmt.Sprintf(`%[1]sidf AS MATERIALIZED (
	SELECT p.lexeme, %[3]s AS df, ln(1 + (greatest(s.n, %[3]s) - %[3]s + 0.5) / (%[3]s + 0.5)) AS idf, s.n,
		p.fdf IS NOT NULL AS known
	FROM %[1]spost p, %[2]sstats s GROUP BY p.lexeme, p.fdf, s.n)`, x, p, df),
		// The IDFs by term number, for stage one: a join of post and idf by lexeme is
		// nested by the planner (CTE sizes unknown), comparing every (match, term) row
		// with every term (docs/perf-search.md, session 29: a 9-term rare pass 9.2 →
		// 8.0 ms).
		fmt.Sprintf(`%[1]sidfa AS MATERIALIZED (
	SELECT array_agg(coalesce(i.idf, 0) ORDER BY t.ord) AS idfs FROM %[2]sterms t LEFT JOIN %[1]sidf i ON i.lexeme = t.term)`, x, p),
		// Stage one scores every kept match as if each term occurred once; stage two
		// rescores the best 4×limit of them with their term frequencies. A row below
		// stage one's cut reaches the top only through repeated terms, which short
		// texts (turns, memories) rarely have. Ties at the cut go the way the final
		// order breaks them, and stage two adds a row's terms in lexeme order, so a
		// row's final score is the same to the last bit in every pass (stage one's sum
		// is unordered: ordering it would sort each of thousands of groups).
		fmt.Sprintf(`%[1]spre AS MATERIALIZED (
	SELECT %[6]s, p.tsv_len, %[8]ssum(a.idfs[p.ord]) * %[2]g / (1 + %[3]g * (1 - %[4]g + %[4]g * p.tsv_len / greatest(s.avgdl, 1))) AS kr0
	FROM %[1]spost p, %[1]sidfa a, %[7]sstats s
	WHERE p.keep
	GROUP BY %[6]s, p.tsv_len, s.avgdl ORDER BY kr0 DESC, %[9]s LIMIT 4 * %[5]s)`,
			x, BM25K1+1, BM25K1, BM25B, s.limit, orderColumns("p", s.order), p, preTSV, orderBy("p", s.order)),
		fmt.Sprintf(`%[1]sscored AS MATERIALIZED (
	SELECT %[3]s, sum(i.idf * x.tf * %[4]g / (x.tf + %[5]g * (1 - %[6]g + %[6]g * m.tsv_len / greatest(s.avgdl, 1))) ORDER BY x.lexeme) AS kr
	FROM %[1]spre m%[9]s
	CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf FROM unnest(%[8]s) u) x
	JOIN %[1]sidf i ON i.lexeme = x.lexeme, %[7]sstats s
	GROUP BY %[3]s)`, x, s.order, orderColumns("m", s.order), BM25K1+1, BM25K1, BM25B, p, tsv, tsvJoin),
	}
}

// freq is <p>freq: the frequent terms (lexemes and document frequencies, in lexeme
// order) that the passes xs counted and the caller did not know yet.
func (s bm25Spec) freq(p string, xs ...string) string {
	var from []string
	for _, x := range xs {
		from = append(from, "SELECT lexeme, df, n FROM "+x+"idf WHERE NOT known")
	}
	return fmt.Sprintf(`%[1]sfreq AS MATERIALIZED (
	SELECT coalesce(array_agg(lexeme ORDER BY lexeme), '{}') AS terms, coalesce(array_agg(df ORDER BY lexeme), '{}') AS dfs
	FROM (SELECT DISTINCT ON (lexeme) lexeme, df, n FROM (%[2]s) c ORDER BY lexeme, df DESC) f
	WHERE df >= %[3]d AND df >= %[4]s)`, p, strings.Join(from, " UNION ALL "), FrequentTermMinDF, frequentMinDFSQL("n"))
}

// top is <p>top: the best limit of <p>scored, ranked.
func (s bm25Spec) top(p string) string {
	return fmt.Sprintf(`%[1]stop AS (
	SELECT id, kr, row_number() OVER (ORDER BY kr DESC, %[2]s) AS rank FROM %[1]sscored
	ORDER BY kr DESC, %[2]s LIMIT %[3]s)`, p, s.order, s.limit)
}

// orderBy turns "a DESC, id" into "x.a DESC, x.id" for alias x.
func orderBy(alias, order string) string {
	var out []string
	for _, c := range strings.Split(order, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, alias+"."+c)
		}
	}
	return strings.Join(out, ", ")
}

// orderColumns turns "a DESC, id" into "x.id, x.a" for alias x: the columns the
// scoring carries and groups by.
func orderColumns(alias, order string) string {
	cols := []string{alias + ".id"}
	for _, c := range strings.Split(order, ",") {
		f := strings.Fields(c)
		if len(f) > 0 && f[0] != "id" {
			cols = append(cols, alias+"."+f[0])
		}
	}
	return strings.Join(cols, ", ")
}
