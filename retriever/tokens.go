package retriever

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// EstimateTokens approximates how many cl100k_base tokens s encodes to, without the
// tokenizer's 100k-entry vocabulary. It is calibrated against exact cl100k counts
// (tokens_test.go lists its samples and how they were counted): over the samples the
// totals are within 3% for English, Chinese and mixed text, single paragraphs within
// 18%; it leans slightly high so that budgets it enforces hold.
//
// The model, per run of characters:
//   - Han characters: 1 token for the 549 characters cl100k holds as single tokens
//     (cl100kSingleHan), 1.7 for any other: those are 2-3 byte-level tokens, and
//     neighbouring characters sometimes merge. Everyday Chinese averages 1.1-1.3 tokens
//     per character in cl100k (newer vocabularies such as o200k need fewer).
//   - kana 1.0 and Hangul 1.3 per character, CJK punctuation 1 each, a space before
//     CJK text 0.5.
//   - a run of ASCII letters (a word, with its leading space): 1 token up to 8
//     letters, then one more per 8 letters; an apostrophe inside a word ("it's")
//     joins the suffix, which counts as a word of its own.
//   - a run of digits: one token per 3 digits (cl100k splits numbers in groups of 3).
//   - ASCII punctuation: 1 token, or 0.4 when it follows punctuation ("),", "://" merge).
//   - a newline run: 1; spaces attach to the next word, but a run of 2+ spaces is 1.
//   - other letters (accented Latin, Cyrillic …) count half a token per UTF-8 byte,
//     and any other symbol is 1 token (2 for 4-byte ones such as emoji).
func EstimateTokens(s string) int {
	var t float64
	i := 0
	prevPunct := false
	for i < len(s) {
		c := s[i]
		switch {
		case isASCIILetter(c) || (c >= utf8.RuneSelf && isWordRune(s[i:])):
			letters, extra := 0, 0
			for i < len(s) {
				if isASCIILetter(s[i]) {
					letters++
					i++
					continue
				}
				if s[i] >= utf8.RuneSelf {
					r, n := utf8.DecodeRuneInString(s[i:])
					if unicode.IsLetter(r) && !isCJK(r) {
						// Non-ASCII letters fall outside most merges: count bytes.
						extra += n
						i += n
						continue
					}
				}
				break
			}
			t += wordTokens(letters) + float64(extra)*0.5
			prevPunct = false
		case c >= '0' && c <= '9':
			n := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				n++
				i++
			}
			t += math.Ceil(float64(n) / 3)
			prevPunct = false
		case c == '\n' || c == '\r':
			for i < len(s) && (s[i] == '\n' || s[i] == '\r') {
				i++
			}
			t++
			prevPunct = false
		case c == ' ' || c == '\t':
			n := 0
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				n++
				i++
			}
			switch {
			case n > 1:
				t++
			case i < len(s) && s[i] >= utf8.RuneSelf && !isWordRune(s[i:]):
				// A space before CJK text is often a token of its own.
				t += spaceBeforeCJK
			}
		case c == '\'' && i > 0 && i+1 < len(s) && isASCIILetter(s[i-1]) && isASCIILetter(s[i+1]):
			// Contractions ("'s", "'re", "'ll") are one token with their letters.
			i++
			prevPunct = false
		case c < utf8.RuneSelf:
			// ASCII punctuation and symbols.
			if prevPunct {
				t += punctAfterPunct
			} else {
				t++
			}
			prevPunct = true
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			i += n
			switch {
			case unicode.Is(unicode.Han, r):
				t += hanTokens(r)
			case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
				t += 1.0
			case unicode.Is(unicode.Hangul, r):
				t += 1.3
			default:
				// CJK and other punctuation, symbols, emoji.
				if n >= 4 {
					t += 2
				} else {
					t++
				}
			}
			prevPunct = false
		}
	}
	return int(math.Ceil(t))
}

// hanTokens is the expected cost of one Han character: 1 for the characters cl100k
// holds as single tokens, else 2 (most byte-level pairs; rarer characters take 3, and
// adjacent characters sometimes merge, which roughly cancels out on everyday text).
func hanTokens(r rune) float64 {
	if r < 0x4E00 || r > 0x9FFF {
		return hanOther
	}
	var b [3]byte
	utf8.EncodeRune(b[:], r)
	lo, hi := 0, len(cl100kSingleHan)/3
	for lo < hi {
		m := (lo + hi) / 2
		c := cl100kSingleHan[m*3 : m*3+3]
		switch {
		case c == string(b[:]):
			return 1
		case c < string(b[:]):
			lo = m + 1
		default:
			hi = m
		}
	}
	return hanOther
}

// wordTokens is the expected token count of an ASCII word of n letters.
func wordTokens(n int) float64 {
	if n <= wordOneToken {
		return 1
	}
	return 1 + float64(n-wordOneToken)/wordExtraPer
}

// Calibration constants (see tokens_test.go).
const (
	hanOther        = 1.7
	spaceBeforeCJK  = 0.5
	punctAfterPunct = 0.4
	wordOneToken    = 8
	wordExtraPer    = 8.0
)

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) && !isCJK(r)
}

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
