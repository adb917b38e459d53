package extractor

import (
	"strings"
	"time"
	"unicode"

	"github.com/engramhq/engram/memory"
)

// addClauses adds to ds the facts of s's clause rules that ds does not hold yet (same key).
func (o *Offline) addClauses(ds []draft, s string, ref time.Time) []draft {
	return ds
}

// narrative is the episodic memory of a turn's statements about the speaker that no rule
// took: what they did, plan, feel or have, in the third person with dates made absolute.
func (o *Offline) narrative(story []string, ref time.Time) (draft, bool) {
	var parts []string
	zh := false
	for _, s := range story {
		s = o.clean(s)
		if s == "" {
			continue
		}
		if hasHan(s) {
			zh = true
			parts = append(parts, o.thirdPersonZH(s, memory.CatEvent, "event"))
			continue
		}
		parts = append(parts, upperFirst(o.pronounsEN(s, false)))
	}
	if len(parts) == 0 || !o.newsworthy(story, ref) {
		return draft{}, false
	}
	sep := ". "
	if zh {
		sep = "。"
	}
	content := strings.Join(parts, sep)
	d := draft{typ: memory.Episodic, cat: memory.CatEvent, content: o.finish(content, ref), importance: impEvent,
		confidence: confEvent, rule: "event", meta: map[string]any{}}
	d.expire = o.expiry(strings.Join(story, " "), ref)
	return d, true
}

// newsworthy reports a story that holds news rather than a passing remark ("Makes me
// happy."): an event, plan or possession of the speaker, a date, or a long enough account.
func (o *Offline) newsworthy(story []string, ref time.Time) bool {
	s := strings.Join(story, " ")
	if o.lex.event.MatchString(lowerText(s)) || len(o.lex.temporal.Find(s, ref)) > 0 {
		return true
	}
	han := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	return han >= minStoryHan || len(strings.Fields(s)) >= minStoryWords
}

// Chosen on the LoCoMo dev conversations (conv-26, conv-30): shorter stories without an
// event rarely hold an annotated observation.
const (
	minStoryWords = 10
	minStoryHan   = 8
)
