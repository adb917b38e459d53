package eval

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressWithoutTerminal: written to a file or a pipe, progress is plain lines
// (one per tenth), never a bar redrawn with carriage returns.
func TestProgressWithoutTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "ingesting", 20)
	for i := 1; i <= 20; i++ {
		p.set(i)
	}
	out := b.String()
	if strings.Contains(out, "\r") || strings.Contains(out, "[") {
		t.Fatalf("a bar in a file: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 11 || lines[0] != "ingesting: 0/20" || lines[10] != "ingesting: 20/20" {
		t.Fatalf("want 11 lines from 0/20 to 20/20, got %q", lines)
	}
}
