package extractor

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

func TestBatchBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("长", 10) // 30 bytes, 3 per rune
	tests := []struct {
		name    string
		content string
		limit   int
		want    string
	}{
		{"short kept", "tea", 8, "tea"},
		{"exact kept", "12345678", 8, "12345678"},
		{"ascii cut", "123456789", 8, "12345678"},
		{"cut before a split rune", long, 8, strings.Repeat("长", 2)},
		{"cut on a rune boundary", long, 9, strings.Repeat("长", 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			orig := Batch{New: []memory.Turn{{TurnID: "a", Content: tt.content}}, Window: []memory.Turn{{TurnID: "w", Content: tt.content}}}
			got := orig.bounded(tt.limit)
			for _, tr := range append(got.New, got.Window...) {
				if tr.Content != tt.want || !utf8.ValidString(tr.Content) {
					t.Fatalf("turn %s content %q, want %q", tr.TurnID, tr.Content, tt.want)
				}
			}
			if orig.New[0].Content != tt.content || orig.Window[0].Content != tt.content {
				t.Fatal("bounded changed the caller's turns")
			}
		})
	}
}
