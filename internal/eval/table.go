package eval

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
)

// table is a tabwriter that keeps the first write error, so report printers can
// write line after line and check once.
type table struct {
	tw  *tabwriter.Writer
	err error
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

func (t *table) printf(format string, args ...any) {
	if t.err != nil {
		return
	}
	_, t.err = fmt.Fprintf(t.tw, format, args...)
}

func (t *table) flush() error {
	if t.err != nil {
		return t.err
	}
	return t.tw.Flush()
}

// progress draws a one-line progress bar, redrawn in place with a carriage
// return, and ends it with a newline when done. On anything but a terminal (a file,
// a pipe, CI logs) it writes plain lines instead, one per tenth, so no carriage
// return lands in a file. A nil writer draws nothing.
type progress struct {
	w     io.Writer
	label string
	total int
	last  int // last drawn step, to redraw at most ~50 times per bar
	tty   bool
}

func newProgress(w io.Writer, label string, total int) *progress {
	p := &progress{w: w, label: label, total: total, last: -1, tty: isTerminal(w)}
	p.set(0)
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p *progress) set(n int) {
	if p == nil || p.w == nil {
		return
	}
	if !p.tty {
		if step := n * 10 / max(p.total, 1); step != p.last {
			p.last = step
			fmt.Fprintf(p.w, "%s: %d/%d\n", p.label, n, p.total)
		}
		return
	}
	const width = 30
	step := n * 50 / max(p.total, 1)
	if step == p.last && n != p.total {
		return
	}
	p.last = step
	filled := width
	if p.total > 0 {
		filled = n * width / p.total
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(".", width-filled), n, p.total)
	if n >= p.total {
		fmt.Fprintln(p.w)
	}
}
