package eval

import (
	"regexp"
	"strings"
	"unicode"
)

// citation is how engram's context names what a line comes from ([memory_ref: id],
// [turn: id], [task: id]). An id is no fact: a memory's random UUID held "199", a
// forbidden price, once in a few hundred runs.
var citation = regexp.MustCompile(`\[(?:memory_ref|turn|task): [^\]]*\]`)

// fold normalises text for matching: lower case (which only affects cased
// scripts, so Chinese is untouched), full-width ASCII to ASCII, typographic
// apostrophes straightened, and every run of white space made one space.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r >= '！' && r <= '～': // full-width ASCII block
			r -= 0xFEE0
		case r == '\u3000':
			r = ' '
		case r == '’' || r == '‘':
			r = '\''
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// firstFound returns the first alternative that occurs in the folded text, or "".
func firstFound(folded string, alternatives []string) string {
	for _, a := range alternatives {
		if f := fold(strings.TrimSpace(a)); f != "" && strings.Contains(folded, f) {
			return a
		}
	}
	return ""
}

// unconfirmedMarker is how engram's context marks a pending (unconfirmed) memory.
const unconfirmedMarker = "(unconfirmed)"

// withoutUnconfirmed drops the lines engram marks as unconfirmed: a claim shown as
// unconfirmed is not surfacing as a fact.
func withoutUnconfirmed(text string) string {
	if !strings.Contains(text, unconfirmedMarker) {
		return text
	}
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, unconfirmedMarker) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// judgement is how one text fares against a query's expectations.
type judgement struct {
	hits      int
	missing   [][]string // expect items with no alternative found
	forbidden []string   // forbid alternatives found
}

func (j judgement) passed() bool { return len(j.missing) == 0 && len(j.forbidden) == 0 }

// judge checks expect items (each found when any alternative occurs) and forbid
// items (each violated when any alternative occurs) against text.
func judge(text string, expect, forbid [][]string, unconfirmedOK bool) judgement {
	var j judgement
	text = citation.ReplaceAllString(text, "")
	folded := fold(text)
	for _, alts := range expect {
		if firstFound(folded, alts) != "" {
			j.hits++
		} else {
			j.missing = append(j.missing, alts)
		}
	}
	forbidText := folded
	if unconfirmedOK {
		forbidText = fold(withoutUnconfirmed(text))
	}
	for _, alts := range forbid {
		if a := firstFound(forbidText, alts); a != "" {
			j.forbidden = append(j.forbidden, a)
		}
	}
	return j
}
