package eval

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strings"
)

// The HTML form of the reports (engram eval … --html FILE): one self-contained page,
// inline SVG and CSS, nothing fetched, so a change in quality is seen at a glance.

// series is one line of a chart: a system's value at each x.
type series struct {
	Name   string
	Values []float64
}

// chart is an inline SVG line chart of series over labelled x positions, y in [0, 1].
type chart struct {
	Title  string
	XLabel string
	X      []string
	Series []series
}

// chartColours are the series' colours, in order.
const chartColours = "#2b5fd9 #d9822b #2f9e5a #a23bd6 #c23b4a #5c6577"

// SVG renders the chart.
func (c chart) SVG() template.HTML {
	const w, h, left, right, top, bottom = 480.0, 280.0, 44.0, 160.0, 16.0, 40.0
	pw, ph := w-left-right, h-top-bottom
	xAt := func(i int) float64 {
		if len(c.X) <= 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(len(c.X)-1)
	}
	yAt := func(v float64) float64 { return top + ph*(1-min(max(v, 0), 1)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`,
		w, h, w, h, template.HTMLEscapeString(c.Title))
	for i := 0; i <= 4; i++ {
		v := float64(i) / 4
		y := yAt(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e6ec"/>`, left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#5c6577">%.0f%%</text>`, left-6, y+4, v*100)
	}
	for i, x := range c.X {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#5c6577">%s</text>`,
			xAt(i), top+ph+16, template.HTMLEscapeString(x))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#5c6577">%s</text>`,
		left+pw/2, h-4, template.HTMLEscapeString(c.XLabel))
	colours := strings.Fields(chartColours)
	for si, s := range c.Series {
		col := colours[si%len(colours)]
		var pts []string
		for i, v := range s.Values {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(i), yAt(v)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, col, strings.Join(pts, " "))
		for i, v := range s.Values {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %.1f%%</title></circle>`,
				xAt(i), yAt(v), col, template.HTMLEscapeString(s.Name), template.HTMLEscapeString(c.X[min(i, len(c.X)-1)]), v*100)
		}
		ly := top + 14 + float64(si)*18
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="12" height="3" fill="%s"/><text x="%.1f" y="%.1f" font-size="11" fill="#1d2433">%s</text>`,
			left+pw+12, ly-4, col, left+pw+28, ly, template.HTMLEscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text in it was escaped above
}

// htmlTable is a table of the page: a header row and rows of cells.
type htmlTable struct {
	Title string
	Head  []string
	Rows  [][]string
}

type htmlPage struct {
	Title   string
	Summary []string
	Charts  []chart
	Tables  []htmlTable
}

const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; color: #1d2433; margin: 1.5rem auto; max-width: 1000px; padding: 0 1rem; }
text { font-family: system-ui, sans-serif; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 1.6rem; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
th, td { border: 1px solid #d9dee7; padding: .25rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #eef1f5; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: .3rem; }
ul { padding-left: 1.2rem; }
.wide { overflow-x: auto; }
</style></head><body>
<h1>{{.Title}}</h1>
<ul>{{range .Summary}}<li>{{.}}</li>{{end}}</ul>
<div class="charts">{{range .Charts}}<figure><figcaption>{{.Title}}</figcaption>{{.SVG}}</figure>{{end}}</div>
{{range .Tables}}<h2>{{.Title}}</h2>
<div class="wide"><table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table></div>{{end}}
</body></html>
`

func (p htmlPage) write(w io.Writer) error {
	t, err := template.New("page").Parse(pageHTML)
	if err != nil {
		return fmt.Errorf("parsing the HTML report's template: %w", err)
	}
	if err := t.Execute(w, p); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

// recallSeries is a system's recall at each k of ks.
func recallSeries(name string, s RetrievalScores, ks []int, cat int) series {
	out := series{Name: name}
	for _, k := range ks {
		st := s.RecallAt[k]
		v := st.Overall
		if cat > 0 {
			v = st.ByCategory[cat]
		}
		out.Values = append(out.Values, v)
	}
	return out
}

// categoryName names a LoCoMo question category.
func categoryName(c int) string {
	switch c {
	case 1:
		return "multi-hop"
	case 2:
		return "temporal"
	case 3:
		return "open-domain"
	case 4:
		return "single-hop"
	case 5:
		return "adversarial"
	}
	return "other"
}

// WriteHTML writes the report as a self-contained page: recall@k curves of engram and
// each baseline, overall and per category, and the per-category table.
func (r LoCoMoReport) WriteHTML(w io.Writer) error {
	ks := slices.Clone(r.Ks)
	sort.Ints(ks)
	x := make([]string, len(ks))
	for i, k := range ks {
		x[i] = fmt.Sprintf("@%d", k)
	}
	systems := []struct {
		name string
		s    RetrievalScores
	}{
		{"engram (hybrid)", r.RetrievalScores},
		{"engram memories only", r.Baselines.MemoriesOnly},
		{"keyword only", r.Baselines.Keyword},
		{"vector only", r.Baselines.Vector},
		{"BM25 over turns", r.Baselines.BM25Turns},
	}
	curves := func(title string, cat int) chart {
		c := chart{Title: title, XLabel: "evidence recall at k", X: x}
		for _, s := range systems {
			c.Series = append(c.Series, recallSeries(s.name, s.s, ks, cat))
		}
		return c
	}
	p := htmlPage{Title: "engram on LoCoMo: " + strings.Join(r.Conversations, ", ")}
	p.Summary = []string{
		fmt.Sprintf("%d questions (categories 1-4 with evidence in recall; %d without evidence), %d turns", r.Questions, r.NoEvidence, r.Turns),
		fmt.Sprintf("layers %s; context %.0f tokens a question against %.0f for the whole conversation", strings.Join(r.Layers, ", "),
			r.ContextTokensMean, r.FullContextTokensMean),
		fmt.Sprintf("nDCG@10: engram %.3f, BM25 over turns %.3f", r.NDCGAt10, r.Baselines.BM25Turns.NDCGAt10),
		fmt.Sprintf("%d LLM calls (%.2f a turn); tokens estimated by %s", r.LLMCalls, r.LLMCallsPerTurn, r.Estimator),
	}
	if a := r.Answer; a != nil {
		p.Summary = append(p.Summary, fmt.Sprintf("answers: J %s (%d of %d correct, %d errors), answered by %s, judged by %s",
			pct(a.J), a.Correct, a.Questions, a.Errors, a.AnswerModel, a.JudgeModel))
	}
	p.Charts = append(p.Charts, curves("All categories (1-4)", 0))
	var cats []int
	for c := range r.QuestionsByCategory {
		if c >= 1 && c <= 4 {
			cats = append(cats, c)
		}
	}
	sort.Ints(cats)
	for _, c := range cats {
		p.Charts = append(p.Charts, curves(fmt.Sprintf("Category %d (%s)", c, categoryName(c)), c))
	}
	t := htmlTable{Title: "Per category", Head: []string{"category", "questions"}}
	for _, s := range systems {
		for _, k := range ks {
			t.Head = append(t.Head, fmt.Sprintf("%s R@%d", s.name, k))
		}
	}
	t.Head = append(t.Head, "engram nDCG@10")
	if r.Answer != nil {
		t.Head = append(t.Head, "answer J")
	}
	row := func(label string, n int, cat int) []string {
		cells := []string{label, fmt.Sprint(n)}
		for _, s := range systems {
			for _, v := range recallSeries(s.name, s.s, ks, cat).Values {
				cells = append(cells, pct(v))
			}
		}
		nd := r.NDCGAt10
		if cat > 0 {
			nd = r.NDCGByCategory[cat]
		}
		cells = append(cells, fmt.Sprintf("%.3f", nd))
		if a := r.Answer; a != nil {
			j := a.J
			if cat > 0 {
				j = a.JByCategory[cat]
			}
			cells = append(cells, pct(j))
		}
		return cells
	}
	total := 0
	for _, c := range cats {
		total += r.QuestionsByCategory[c]
		t.Rows = append(t.Rows, row(fmt.Sprintf("%d %s", c, categoryName(c)), r.QuestionsByCategory[c], c))
	}
	t.Rows = append(t.Rows, row("all (1-4)", total, 0))
	p.Tables = append(p.Tables, t)
	if r.Category5.Questions > 0 {
		c5 := htmlTable{Title: "Category 5 (adversarial, outside the headline)", Head: []string{"system"}}
		for _, k := range ks {
			c5.Head = append(c5.Head, fmt.Sprintf("R@%d", k))
		}
		cells := []string{fmt.Sprintf("engram (hybrid), %d questions", r.Category5.Questions)}
		for _, v := range recallSeries("", r.Category5.RetrievalScores, ks, 0).Values {
			cells = append(cells, pct(v))
		}
		c5.Rows = append(c5.Rows, cells)
		p.Tables = append(p.Tables, c5)
	}
	return p.write(w)
}

// WriteHTML writes the golden report as a self-contained page: the hit rate of
// engram and of the baselines (no memory, full replay) by case tag, as curves and
// as a table, and the failed cases.
func (r GoldenReport) WriteHTML(w io.Writer) error {
	type acc struct{ facts, hits, replay, none, forbidden, cases, passed int }
	byTag := map[string]*acc{}
	all := &acc{}
	for _, c := range r.Details {
		tags := c.Tags
		if len(tags) == 0 {
			tags = []string{"(untagged)"}
		}
		targets := []*acc{all}
		for _, t := range tags {
			if byTag[t] == nil {
				byTag[t] = &acc{}
			}
			targets = append(targets, byTag[t])
		}
		for _, a := range targets {
			a.cases++
			if c.Passed {
				a.passed++
			}
			for _, q := range c.Queries {
				a.facts += q.Facts
				a.hits += q.Hits
				a.replay += q.ReplayHits
				a.none += q.NoMemoryHits
				a.forbidden += len(q.ForbiddenFound)
			}
		}
	}
	tags := make([]string, 0, len(byTag))
	for t := range byTag {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	p := htmlPage{Title: "engram on the golden set"}
	p.Summary = []string{
		fmt.Sprintf("%d of %d cases passed; %d queries; %d of %d expected facts found (%s)", r.CasesPassed, r.Cases, r.Queries,
			r.Hits, r.Facts, pct(r.HitRate)),
		fmt.Sprintf("baselines on the same expectations: full replay %s, no memory %s", pct(r.Baselines.FullReplay.HitRate),
			pct(r.Baselines.NoMemory.HitRate)),
		fmt.Sprintf("forbidden facts returned: engram %d, full replay %d", r.ForbiddenHits, r.Baselines.FullReplay.ForbiddenHits),
		fmt.Sprintf("tokens a query: engram %.0f, full replay %.0f; %d LLM calls for %d turns", r.Tokens.EngramMean,
			r.Tokens.FullReplayMean, r.LLMCalls, r.Turns),
	}
	c := chart{Title: "Hit rate by tag", XLabel: "case tag", X: tags}
	eng, rep, none := series{Name: "engram"}, series{Name: "full replay"}, series{Name: "no memory"}
	t := htmlTable{Title: "Per tag", Head: []string{"tag", "cases", "passed", "facts", "engram", "full replay", "no memory", "forbidden returned"}}
	row := func(name string, a *acc) []string {
		return []string{name, fmt.Sprint(a.cases), fmt.Sprint(a.passed), fmt.Sprint(a.facts), pct(rate(a.hits, a.facts)),
			pct(rate(a.replay, a.facts)), pct(rate(a.none, a.facts)), fmt.Sprint(a.forbidden)}
	}
	for _, tag := range tags {
		a := byTag[tag]
		eng.Values = append(eng.Values, rate(a.hits, a.facts))
		rep.Values = append(rep.Values, rate(a.replay, a.facts))
		none.Values = append(none.Values, rate(a.none, a.facts))
		t.Rows = append(t.Rows, row(tag, a))
	}
	t.Rows = append(t.Rows, row("all", all))
	c.Series = []series{eng, rep, none}
	if len(tags) > 0 {
		p.Charts = append(p.Charts, c)
	}
	p.Tables = append(p.Tables, t)
	failed := htmlTable{Title: "Failed cases", Head: []string{"case", "file", "error or missing facts"}}
	for _, c := range r.Details {
		if c.Passed {
			continue
		}
		why := c.Error
		if why == "" {
			var parts []string
			for _, q := range c.Queries {
				for _, m := range q.Missing {
					parts = append(parts, strings.Join(m, " | "))
				}
				parts = append(parts, q.ForbiddenFound...)
			}
			why = strings.Join(parts, "; ")
		}
		failed.Rows = append(failed.Rows, []string{c.Name, c.File, why})
	}
	if len(failed.Rows) > 0 {
		p.Tables = append(p.Tables, failed)
	}
	return p.write(w)
}
