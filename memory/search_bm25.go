package memory

import (
	"fmt"
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
type bm25Spec struct {
	prefix string // CTE name prefix, so two sides can share one statement
	text   string // placeholder of the search text (already through SearchText)
	// match selects id, tsv, tsv_len, keep and the order columns from the owner's rows
	// matching <prefix>q.q: the candidates and the base of document frequencies; keep
	// says whether the row passes the search's other filters (only kept rows are
	// ranked).
	match string
	// stats selects n and avgdl, the owner's document count and mean length.
	stats string
	// order breaks ties among equal scores (columns of match, after the score).
	order string
	limit string // placeholder of the candidate count
}

// ctes returns the side's CTEs: <prefix>scored holds id, the order columns and kr (the
// BM25 score) of every kept row; the last, <prefix>top, id, kr and rank (1 = best) of
// the best limit of them.
func (s bm25Spec) ctes() []string {
	p := s.prefix
	// A lexeme becomes a tsquery operand by quoting it (tsquery input syntax doubles a
	// quote and escapes a backslash), so it is matched as it is and never re-parsed.
	return []string{
		p + `terms AS MATERIALIZED (
	SELECT u.lexeme AS term,
		format('''%s''', replace(replace(u.lexeme, '\', '\\'), '''', ''''''))::tsquery AS tq
	FROM unnest(to_tsvector('english', ` + s.text + `)) u)`,
		p + `q AS MATERIALIZED (
	SELECT string_agg(tq::text, ' | ')::tsquery AS q FROM ` + p + `terms)`,
		p + `match AS MATERIALIZED (` + s.match + `)`,
		p + `stats AS MATERIALIZED (` + s.stats + `)`,
		// Which terms each match holds: one @@ per match and term, far cheaper than
		// unnesting every match's tsvector when a term is common. The rows carry what
		// the scoring reads, so no later stage joins back to match (CTE row counts are
		// unknown to the planner, which would nest such a join).
		fmt.Sprintf(`%[1]spost AS MATERIALIZED (
	SELECT %[2]s, m.tsv, m.tsv_len, m.keep, w.term AS lexeme
	FROM %[1]smatch m JOIN %[1]sterms w ON m.tsv @@ w.tq)`, p, orderColumns("m", s.order)),
		p + `idf AS MATERIALIZED (
	SELECT p.lexeme, ln(1 + (greatest(s.n, count(*)) - count(*) + 0.5) / (count(*) + 0.5)) AS idf
	FROM ` + p + `post p, ` + p + `stats s GROUP BY p.lexeme, s.n)`,
		// Stage one scores every kept match as if each term occurred once; stage two
		// rescores the best 4×limit of them with their term frequencies. A row below
		// stage one's cut reaches the top only through repeated terms, which short
		// texts (turns, memories) rarely have.
		fmt.Sprintf(`%[1]spre AS MATERIALIZED (
	SELECT %[6]s, p.tsv_len, (array_agg(p.tsv))[1] AS tsv,
		sum(i.idf) * %[2]g / (1 + %[3]g * (1 - %[4]g + %[4]g * p.tsv_len / greatest(s.avgdl, 1))) AS kr0
	FROM %[1]spost p JOIN %[1]sidf i ON i.lexeme = p.lexeme, %[1]sstats s
	WHERE p.keep
	GROUP BY %[6]s, p.tsv_len, s.avgdl ORDER BY kr0 DESC, p.id LIMIT 4 * %[5]s)`,
			p, BM25K1+1, BM25K1, BM25B, s.limit, orderColumns("p", s.order)),
		fmt.Sprintf(`%[1]sscored AS MATERIALIZED (
	SELECT %[3]s, sum(i.idf * x.tf * %[4]g / (x.tf + %[5]g * (1 - %[6]g + %[6]g * m.tsv_len / greatest(s.avgdl, 1)))) AS kr
	FROM %[1]spre m
	CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf FROM unnest(m.tsv) u) x
	JOIN %[1]sidf i ON i.lexeme = x.lexeme, %[1]sstats s
	GROUP BY %[3]s)`, p, s.order, orderColumns("m", s.order), BM25K1+1, BM25K1, BM25B),
		fmt.Sprintf(`%[1]stop AS (
	SELECT id, kr, row_number() OVER (ORDER BY kr DESC, %[2]s) AS rank FROM %[1]sscored
	ORDER BY kr DESC, %[2]s LIMIT %[3]s)`, p, s.order, s.limit),
	}
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
