package extractor

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/memory"
)

// A user often corrects what they just said with the new value alone: "sorry, I meant
// the 14th", "typo, it's 4417", "说错了，是7月12号", "No wait, make it Saturday". The value
// it replaces is the one of the same shape (a date, a weekday, a time, a code, a name) in
// the user's statement just before. corrected rewrites such a turn as that statement with
// the new value, told against the old ("…the 14th, not the 12th"), so that the rules give
// it the statement's slots and the resolver retires the memory holding the old value.

var (
	correctionCueEN = regexp.MustCompile(`(?i)^(?:(?:ugh|oops|sorry|argh|whoops|no|nope|wait)[,!.]?\s+)*(?:sorry[,!]?\s+)?(?:i\s+meant|i\s+mean|no\s+wait|wait|typo|autocorrect|correction|scratch\s+that|scratch|make\s+it|actually[,]?\s+(?:it's|it\s+is|make\s+it)|not\s+[^,]{1,30},|my\s+bad|my\s+mistake|wrong\s+\w+)\b|^\p{Lu}[\p{L}-]+(?:'s|\s+is)\s+(?:off|out|not\s+happening|a\s+no-go)\s*[,;:]`)
	correctionCueZH = regexp.MustCompile(`^(?:(?:哎呀|啊|嗯|哦|不好意思|抱歉)[，,！!]?)*(?:说错了|打错了|写错了|记错了|不对|更正一下|更正|纠正一下|等一下|等等|改成|改为|应该是|其实是|口误)|^\p{Han}{1,8}?(?:不行了|去不了了|不去了|没戏了|泡汤了)[，,]`)

	// The shapes a corrected value takes, tried in this order.
	shapeDateEN = regexp.MustCompile(`(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b`)
	shapeDateZH = regexp.MustCompile(`\d{1,2}月\d{1,2}[号日]?|[一二三四五六七八九十]+月[一二三四五六七八九十]+[号日]?|\d{1,2}[号日]`)
	shapeDayEN  = regexp.MustCompile(`(?i)\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b`)
	shapeDayZH  = regexp.MustCompile(`(?:周|星期|礼拜)[一二三四五六日天]`)
	shapeTime   = regexp.MustCompile(`(?i)\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|(?:上午|下午|晚上|早上|中午)?[一二三四五六七八九十两\d]{1,2}点(?:半)?`)
	shapeCode   = regexp.MustCompile(`\b[A-Z]{0,5}-?\d{3,}[A-Z\d-]*\b`)
	shapeNameEN = regexp.MustCompile(`\b\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?`)
	shapeNameZH = regexp.MustCompile(`(?:是|叫|在|去|改去|定在)(\p{Han}{2,3}?)(?:[，,。！!；;区市县]|$)`)

	// "not Leeds", "不是西城": the old value, told.
	notValueEN = regexp.MustCompile(`(?i)\bnot\s+([^,.;!?]{1,30}?)(?:[,.;!?]|$)|\bscratch\s+(\p{Lu}[\p{L}-]+)|^(\p{Lu}[\p{L}-]+)(?:'s|\s+is)\s+(?:off|out|not\s+happening|a\s+no-go)\b`)
	notValueZH = regexp.MustCompile(`不是([^，,。！!；;]{1,10})|^(\p{Han}{1,8}?)(?:不行了|去不了了|不去了|没戏了|泡汤了)`)
)

// maxCorrectionBytes bounds a turn read as a correction of the one before.
const maxCorrectionBytes = 240

// corrected returns t rewritten as the statement it corrects (see above), or t as it is.
func (o *Offline) corrected(t memory.Turn, earlier []memory.Turn) memory.Turn {
	if t.Role != memory.RoleUser || len(t.Content) > maxCorrectionBytes {
		return t // a correction is short; a long turn is a statement of its own
	}
	text := spokenText(t)
	zh := hasHan(text)
	if zh && !correctionCueZH.MatchString(text) || !zh && !correctionCueEN.MatchString(text) || isQuestion(text) {
		return t // "wait, what should I wear?" corrects nothing
	}
	var prev string
	for i, seen := len(earlier)-1, 0; i >= 0 && seen < 2; i-- {
		if earlier[i].Role == memory.RoleUser {
			prev = spokenText(earlier[i])
			break
		}
		if earlier[i].Role == memory.RoleAssistant {
			seen++
		}
	}
	if prev == "" || hasHan(prev) != zh {
		return t
	}
	if s := correctedStatement(prev, text, zh); s != "" {
		t.Content = s
	}
	return t
}

// correctedStatement is prev with the value correction gives in place of the old one, told
// against it; "" when no value of one shape is in both.
func correctedStatement(prev, correction string, zh bool) string {
	told := ""
	if zh {
		if m := notValueZH.FindStringSubmatch(correction); m != nil {
			told = m[1] + m[2]
		}
	} else if m := notValueEN.FindStringSubmatch(correction); m != nil {
		told = strings.TrimSpace(m[1] + m[2] + m[3])
	}
	rest := correction
	if told != "" {
		rest = strings.Replace(correction, told, "", 1)
	}
	shapes := []*regexp.Regexp{shapeDateEN, shapeDayEN, shapeTime, shapeCode, shapeNameEN}
	if zh {
		shapes = []*regexp.Regexp{shapeDateZH, shapeDayZH, shapeTime, shapeCode, shapeNameZH}
	}
	for _, sh := range shapes {
		newVal := shapeValue(sh, rest, "")
		if newVal == "" {
			continue
		}
		old := told
		if old == "" || !strings.Contains(prev, old) {
			old = shapeValue(sh, prev, newVal)
		}
		if old == "" || old == newVal || !strings.Contains(prev, old) {
			continue
		}
		body := strings.TrimRight(strings.TrimSpace(strings.Replace(prev, old, newVal, 1)), ".。!！")
		if zh {
			return body + "，不是" + old + "。"
		}
		return body + ", not " + old + "."
	}
	return ""
}

// shapeValue is the first value of shape sh in s other than not; a name is a capitalised
// word that does not open a sentence and is no cue.
func shapeValue(sh *regexp.Regexp, s, not string) string {
	for _, loc := range sh.FindAllStringSubmatchIndex(s, -1) {
		v := s[loc[0]:loc[1]]
		if len(loc) > 2 && loc[2] >= 0 {
			v = s[loc[2]:loc[3]]
		}
		if v == not || v == "" {
			continue
		}
		if sh == shapeNameEN {
			if loc[0] == 0 || strings.HasSuffix(strings.TrimSpace(s[:loc[0]]), ".") || nameCueWords[strings.ToLower(strings.Fields(v)[0])] {
				continue
			}
		}
		return v
	}
	return ""
}

// nameCueWords are capitalised words of a correction that are no value.
var nameCueWords = map[string]bool{"i": true, "i'm": true, "sorry": true, "typo": true, "correction": true, "no": true, "wait": true,
	"scratch": true, "ugh": true, "oops": true, "actually": true, "not": true, "make": true, "my": true}
