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
	rows   [][]string
	indent string       // printed before every row
	right  map[int]bool // columns aligned right (numbers)
}

// newTable starts a table with its header row.
func newTable(header ...string) *table { return &table{rows: [][]string{header}} }

// alignRight aligns the given columns (from 0) to the right.
func (t *table) alignRight(cols ...int) *table {
	if t.right == nil {
		t.right = map[int]bool{}
	}
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

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
		b.WriteString(t.indent)
		for i, c := range r {
			switch {
			case t.right[i]:
				b.WriteString(runewidth.FillLeft(c, widths[i]))
			case i == len(r)-1:
				b.WriteString(c) // no trailing spaces
			default:
				b.WriteString(runewidth.FillRight(c, widths[i]))
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
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

// tabTable is text/tabwriter's interface (cells ended by '\t', rows by '\n', Flush)
// with columns measured in display cells. A row's last cell, when not ended by a tab,
// is printed as it is and does not widen its column.
type tabTable struct {
	w     io.Writer
	right bool // align every column right, as tabwriter.AlignRight
	buf   strings.Builder
}

func newTabWriter(w io.Writer, alignRight bool) *tabTable { return &tabTable{w: w, right: alignRight} }

func (t *tabTable) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered rows, aligned, two spaces between columns.
func (t *tabTable) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	type row struct {
		cells []string // tab-terminated cells
		tail  string
	}
	rows := make([]row, len(lines))
	var widths []int
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		rows[i] = row{cells: parts[:len(parts)-1], tail: parts[len(parts)-1]}
		for j, c := range rows[i].cells {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], runewidth.StringWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for j, c := range r.cells {
			if t.right {
				b.WriteString(runewidth.FillLeft(c, widths[j]))
			} else {
				b.WriteString(runewidth.FillRight(c, widths[j]))
			}
			if j < len(r.cells)-1 || r.tail != "" {
				b.WriteString("  ")
			}
		}
		b.WriteString(r.tail)
		b.WriteString("\n")
	}
	out := b.String()
	if !t.right {
		// No trailing spaces where a row ends before the last column.
		ls := strings.Split(out, "\n")
		for i := range ls {
			ls[i] = strings.TrimRight(ls[i], " ")
		}
		out = strings.Join(ls, "\n")
	}
	_, err := io.WriteString(t.w, out)
	return err
}
