package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// table prints rows in columns aligned by display width: a CJK character takes two
// terminal cells, which text/tabwriter (counting runes) gets wrong.
type table struct {
	rows [][]string
}

// newTable starts a table with its header row.
func newTable(header ...string) *table { return &table{rows: [][]string{header}} }

// add appends a row; values are formatted with %v.
func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = strings.Join(strings.Fields(fmt.Sprint(c)), " ")
	}
	t.rows = append(t.rows, row)
}

// write prints the table, two spaces between columns, no trailing spaces.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(runewidth.FillRight(c, widths[i]))
			b.WriteString("  ")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// clipWidth shortens s to at most n display cells, marking the cut with "…".
func clipWidth(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if runewidth.StringWidth(s) <= n {
		return s
	}
	return runewidth.Truncate(s, n, "…")
}
