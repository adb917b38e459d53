package extractor

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/memory"
)

// A child's or a parent's age changes every year, and a later one must replace the
// earlier: "my niece is 7" then, a year on, "she turned 8". The age is a slot of the
// relation (relation.<who>.age); told by a name alone ("Mira turned 8") the extractor
// cannot know whose name it is, so the candidate carries the name ("aged") and the
// resolver retires the earlier age told of that name.

const numberWordEN = `\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety`

var (
	// "my youngest daughter Ines is 9", "our son just turned three", "my dad's 70 now"
	relAgeEN = regexp.MustCompile(`(?i:\b(?:my|our)\s+(?:(?:little|older|younger|big|baby|eldest|youngest|oldest|middle|twin)\s+)?)(` + relEN + `)(?:\s+(\p{Lu}[\p{Ll}'-]+))?,?\s+(?i:is|'s|’s|just\s+turned|turned|has\s+(?:just\s+)?turned|is\s+now|'s\s+now|will\s+be)\s+(?i:(?:now|already|almost|nearly|only|just)\s+)?(?i:(` + numberWordEN + `)(\s+(?:years?|yrs?|months?|weeks?)(?:\s+old)?|(?:-year-old))?)(?:\s+(?i:now|today|and|but|so|this|last|next)\b|\s*[,.;!?]|$)`)
	// "Mira turned 8 on Sunday", "Theo is now 12"
	nameAgeEN = regexp.MustCompile(`(?:^|[,;]\s*|\b(?:and|so|but)\s+)(\p{Lu}[\p{Ll}'-]+)\s+(?:(?:just|finally|officially)\s+)?(?:turned|is\s+now|'s\s+now|has\s+turned)\s+(?i:(` + numberWordEN + `))(?:\s+(?i:years?\s+old))?\b`)
	// "我女儿今年6岁", "闺女上周满6岁了", "我妈明年就七十了"
	relAgeZH = regexp.MustCompile(`(?:^|[，,。；;\s])(?:我|我家|我们家)?(?:的)?(?:大|小|二)?(` + relZH + `)(?:\p{Han}{2,3}?)?(?:今年|现在|已经|刚刚?|上个?月|下个?月|上周|明年|马上|都|也)*(?:就|才|已)?(?:满|快|到|过了)?(\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁`)
)

// injuryEN is an injury of the speaker's, told by what happened or by the recovery:
// "I tore my hamstring", "I'm still recovering from a broken wrist". The group is the
// part of the body.
var injuryEN = regexp.MustCompile(`(?i)\b(?:(?:i|i've|i\s+have)\s+(?:just\s+|recently\s+|badly\s+)?(?:tore|torn|broke|broken|sprained|pulled|strained|injured|hurt|twisted|fractured|dislocated|busted|messed\s+up)\s+my|(?:i'm|i\s+am|i've\s+been)\s+(?:still\s+)?(?:recovering|healing|rehabbing)\s+(?:from\s+)?(?:a|an|my)\s+(?:[a-z]+\s+)?(?:torn|broken|sprained|pulled|strained|injured|fractured|dislocated|bad)?\s*)\s*(left\s+|right\s+)?(back|knee|ankle|wrist|shoulder|neck|hip|foot|leg|arm|elbow|hand|hamstring|calf|achilles|spine|toe|finger|rib|acl|meniscus|rotator\s+cuff|groin|quad|shin)s?\b`)

// The speaker's own age: "I'm 52", "just turned 40", "我今年32岁", "上周刚满35".
var (
	selfTurnedEN = regexp.MustCompile(`(?i)^(?:(?:so|well|btw|also|and),?\s+)?(?:i\s+)?(?:just\s+|finally\s+|officially\s+|recently\s+)?(?:turned|turn|am\s+turning|'m\s+turning|will\s+be|'ll\s+be)\s+(\d{2}|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b(.{0,12})`)
	selfAgeEN    = regexp.MustCompile(`(?i)\b(?:i'm|i\s+am)\s+(\d{2}|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)((?:\s+years?\s+old)?(?:\s*[,.;!?]|$|\s+(?:and|but|so|now|this|next|with|going)\b))`)
	selfAgeZH    = regexp.MustCompile(`(?:^|我)(?:今年|现在|已经|上个?月|去年|刚刚?|下个?月|马上|快|也)*(?:就)?(?:满|到|过了)?(\d{2}|[二三四五六七八九]十[一二三四五六七八九]?)(?:岁|周岁)|(?:^|我)(?:今年|上个?月|去年|刚刚?)*(?:刚)?满(\d{2}|[二三四五六七八九]十[一二三四五六七八九]?)(?:[，。！,.]|了|$)`)
	// notAgeEN follows a number that counts something else: "turned 30 minutes late".
	notAgeEN = regexp.MustCompile(`(?i)^\s*(?:%|percent|minutes?|mins?|hours?|hrs?|seconds?|days?|weeks?|months?|feet|ft|foot|inches|cm|kg|kgs|lbs?|pounds?|miles?|km|times|degrees|bucks|dollars|euros|k\b)`)
)

// selfAge is the speaker's age sentence s tells, "" for none.
func selfAge(s string) string {
	if hasHan(s) {
		m := selfAgeZH.FindStringSubmatchIndex(s)
		if m == nil {
			return ""
		}
		if relAgeZH.MatchString(s) || startsWithRelationZH(strings.TrimPrefix(s, "我")) != "" || strings.ContainsAny(s[:m[0]], "他她") {
			return "" // a relation's age
		}
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				return s[m[g]:m[g+1]]
			}
		}
		return ""
	}
	for _, re := range []*regexp.Regexp{selfTurnedEN, selfAgeEN} {
		if m := re.FindStringSubmatch(s); m != nil && !notAgeEN.MatchString(m[2]) {
			return strings.ToLower(m[1])
		}
	}
	return ""
}

// ageFacts are the relations' ages sentence s states.
func (o *Offline) ageFacts(s string) []fact {
	c := o.lex.clauses
	var out []fact
	if a := selfAge(s); a != "" {
		content := "The user is " + a + " years old"
		if hasHan(s) {
			content = "用户" + a + "岁"
		}
		out = append(out, fact{key: "user.age", content: content, cat: memory.CatProfile})
	}
	if hasHan(s) {
		if m := relAgeZH.FindStringSubmatch(s); m != nil && !strings.ContainsAny(m[0], "他她") {
			out = append(out, fact{key: "relation." + c.rel(m[1]) + ".age", content: "用户的" + m[1] + "现在" + m[2] + "岁", cat: memory.CatRelationship})
		}
		return out
	}
	if m := injuryEN.FindStringSubmatch(s); m != nil {
		// In the slot of the part of the body, so that "it's fully healed" ends it.
		part := strings.ToLower(strings.Join(strings.Fields(m[2]), "_"))
		out = append(out, fact{key: "user.health.injury." + part, content: o.toldWhole(s), cat: memory.CatFact})
	}
	if m := relAgeEN.FindStringSubmatch(s); m != nil && (m[2] == "" || !c.notName[m[2]]) {
		who := strings.ToLower(m[1])
		name := ""
		if m[2] != "" {
			name = " " + m[2]
		}
		unit := " years old"
		if u := strings.ToLower(strings.TrimSpace(m[4])); strings.HasPrefix(u, "month") || strings.HasPrefix(u, "week") {
			unit = " " + strings.Fields(u)[0] + " old"
		}
		out = append(out, fact{key: "relation." + slugify(c.rel(who)) + ".age", content: "The user's " + who + name + " is " + m[3] + unit, cat: memory.CatRelationship})
	}
	return out
}

// agedNames are the names sentence s tells a new age of ("Mira turned 8"), for the
// resolver to retire the age told of them before.
func agedNames(s string, notName map[string]bool) []string {
	var out []string
	for _, m := range nameAgeEN.FindAllStringSubmatch(s, 4) {
		if !notName[m[1]] && !nameStop[strings.ToLower(m[1])] {
			out = append(out, m[1])
		}
	}
	return out
}
