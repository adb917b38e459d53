package console

import (
	"strings"
	"testing"
)

func TestWordDiff(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"likes green tea", "likes black tea", "=likes |-green |+black |=tea"},
		{"same", "same", "=same"},
		{"", "new text", "+new text"},
		{"old text", "", "-old text"},
		{"café au lait", "café crème", "=café |-au lait|+crème"},
	} {
		var parts []string
		var a, b strings.Builder
		for _, p := range wordDiff(tc.a, tc.b) {
			parts = append(parts, p.Op+p.Text)
			if p.Op != "+" {
				a.WriteString(p.Text)
			}
			if p.Op != "-" {
				b.WriteString(p.Text)
			}
		}
		if got := strings.Join(parts, "|"); got != tc.want {
			t.Errorf("wordDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
		if a.String() != tc.a || b.String() != tc.b {
			t.Errorf("wordDiff(%q, %q) does not add back up: %q, %q", tc.a, tc.b, a.String(), b.String())
		}
	}
	// Past the table's bound, the diff is a whole replacement.
	long := strings.Repeat("w ", 4000)
	if d := wordDiff(long, long+"x"); len(d) != 2 || d[0].Op != "-" || d[1].Op != "+" {
		t.Errorf("long diff: %d parts", len(d))
	}
}
