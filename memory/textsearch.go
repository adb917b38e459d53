package memory

import (
	"strings"
	"unicode"
)

// isCJK reports whether r belongs to a script written without spaces between words.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// SearchText prepares text for the full-text column. PostgreSQL's parsers treat an
// unbroken CJK run as one word, so each run becomes its space-separated character
// bigrams (a lone character stays as it is); everything else is kept for the parser.
// Queries go through the same function, so a two-character Chinese word matches.
func SearchText(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	var run []rune
	flush := func() {
		switch len(run) {
		case 0:
			return
		case 1:
			b.WriteString(" ")
			b.WriteRune(run[0])
			b.WriteString(" ")
		default:
			b.WriteString(" ")
			for i := 0; i+1 < len(run); i++ {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteRune(run[i])
				b.WriteRune(run[i+1])
			}
			b.WriteString(" ")
		}
		run = run[:0]
	}
	for _, r := range s {
		if isCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
		if unicode.IsPunct(r) && r != '-' && r != '.' && r != '@' && r != '_' && r != ':' && r != '/' {
			// CJK punctuation and the like separate words; ASCII id characters stay so
			// identifiers such as ORD-2024-88123 or a.b@x.com reach the parser whole.
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(r)
	}
	flush()
	return strings.Join(strings.Fields(b.String()), " ")
}
