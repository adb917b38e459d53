package extractor

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// People ask for help and tell a fact about themselves in the same breath: "Can you
// find me a recipe, I'm off dairy", "Since I'm colour-blind, which palette works?",
// "帮我挑本书吧，我在备考教资". The request or the question states nothing, but the aside
// does; told as its own sentence it is read as any statement is. A pronoun that opens a
// sentence about the one relation the sentence before named ("…for my uncle Rafe? He
// collects vinyl") is that relation.

var (
	// requestLeadEN and requestLeadZH open a request or a question.
	requestLeadEN = regexp.MustCompile(`(?i)^(?:(?:hey|hi|ok|so|also|and|ugh|quick question)[,!]?\s+)*(?:(?:can|could|would|will)\s+you|please|pls|help\s+me|any\s+(?:tips|ideas|advice|suggestions|recommendations)|what(?:'s|\s+is|\s+are|\s+would\s+be)|which|how\s+(?:do|can|should|would)|recommend|suggest|give\s+me|find\s+me|write|draft|polish|plan|book|remind\s+me)\b`)
	requestLeadZH = regexp.MustCompile(`^(?:帮我|帮忙|请|麻烦|给我|能不能|能否|可以|可不可以|推荐|有没有|求|想问|问一下)`)
	// asideEN is a statement of the speaker's after a comma: ", I'm applying for …".
	asideEN = regexp.MustCompile(`(?i),\s+((?:i'm|i am|i've|i have|i've been|i'll be|i work|i live|i just|i recently|i only|i can't|i don't|my\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|has|was)|we're|we are|we've|we have)\b[^?]*?)[.!]?$`)
	// asideZH is a statement of the speaker's after a comma: "，我最近在准备…".
	asideZH = regexp.MustCompile(`[，,](我(?:最近|现在|目前|平时|一直|正在|在|是|有|对|家|们)[^？?]*?)[。！!]?$`)
	// premiseEN is a question's premise: "Since I'm left-handed, which …?"
	premiseEN = regexp.MustCompile(`(?i)^(?:since|as|because|given\s+that|now\s+that|seeing\s+as)\s+((?:i'm|i am|i've|i have|i|my\s+[a-z]+|we're|we)\b[^,?]{3,80}),\s*[^,]+\?$`)
	// premiseAsEN is a question's premise told by what the speaker is: "As a diabetic,
	// what …?", "As a new parent, …?".
	premiseAsEN = regexp.MustCompile(`(?i)^as\s+(an?\s+[a-z][a-z -]{2,40}?),\s*[^,]+\?$`)
)

// maxAsideBytes bounds a sentence read for an aside, an idiom or a pronoun: they are told
// in short sentences, and a pathological long one costs every pattern its whole length.
const maxAsideBytes = 600

// withAsides is sentences with the speaker's asides told as sentences of their own, after
// (or, for a premise, before) the request they were told in.
func withAsides(sentences []string) []string {
	out := make([]string, 0, len(sentences))
	for _, s := range sentences {
		if len(s) > maxAsideBytes {
			out = append(out, s)
			continue
		}
		if m := premiseEN.FindStringSubmatch(s); m != nil {
			out = append(out, upperFirst(m[1])+".", s)
			continue
		}
		if m := premiseAsEN.FindStringSubmatch(s); m != nil {
			out = append(out, "I'm "+strings.TrimSpace(m[1])+".", s)
			continue
		}
		if parts := relationClauses(s); len(parts) > 1 {
			// "…, and my dad needs a ground-floor room": a relation's fact is a sentence of its
			// own, one memory, outliving the plan it was told with.
			out = append(out, withAsides(parts)...)
			continue
		}
		if hasHan(s) {
			if requestLeadZH.MatchString(s) {
				if loc := asideZH.FindStringSubmatchIndex(s); loc != nil {
					out = append(out, s[:loc[0]]+"。", s[loc[2]:loc[3]]+"。")
					continue
				}
			}
			out = append(out, s)
			continue
		}
		if requestLeadEN.MatchString(s) {
			if i := strings.Index(s, ": "); i > 0 && i < 60 && firstPersonLead.MatchString(s[i+2:]) {
				// "Help me pack for Oslo: we fly on Friday, …": what follows the colon is told.
				out = append(out, s[:i]+".", upperFirst(s[i+2:]))
				continue
			}
			if loc := asideEN.FindStringSubmatchIndex(s); loc != nil {
				out = append(out, s[:loc[0]]+".", upperFirst(s[loc[2]:loc[3]])+".")
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// relationJoinEN and relationJoinZH join a clause about a relation of the speaker's to
// the one before: ", and my husband …", "，我婆婆…".
var (
	relationJoinEN = regexp.MustCompile(`,\s+(?:and|but|plus|also|while)\s+((?i:my|our)\s+(?:` + relEN + `)s?\b)`)
	relationJoinZH = regexp.MustCompile(`[，,]((?:我|我家|我们家)(?:` + relZH + `))`)
)

// relationClauses cuts s before each clause about a relation that follows another
// clause; s alone when there is none, or when the clause before is too short to stand.
func relationClauses(s string) []string {
	re, end := relationJoinEN, "."
	if hasHan(s) {
		re, end = relationJoinZH, "。"
	}
	locs := re.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return []string{s}
	}
	var out []string
	from := 0
	for _, loc := range locs {
		head := strings.TrimSpace(s[from:loc[0]])
		if len(strings.Fields(head)) < 3 && !hasHan(head) || hasHan(head) && utf8.RuneCountInString(head) < 4 {
			continue
		}
		out = append(out, head+end)
		from = loc[2]
	}
	out = append(out, upperFirst(strings.TrimSpace(s[from:])))
	return out
}

// firstPersonLead opens a clause about the speaker.
var firstPersonLead = regexp.MustCompile(`(?i)^(?:i|i'm|i've|i'll|we|we're|we've|we'll|my|our)\b`)

var (
	femaleRelEN     = regexp.MustCompile(`(?i)\bmy\s+((?:(?:little|older|younger|big|baby|eldest|youngest|oldest)\s+)?(?:sister|wife|mom|mother|mum|daughter|girlfriend|aunt|niece|grandma|grandmother|fianc[ée]e|stepmom|stepmother|stepdaughter|mother-in-law|sister-in-law|daughter-in-law)(?:\s+\p{Lu}[\p{Ll}'-]+)?)\b`)
	maleRelEN       = regexp.MustCompile(`(?i)\bmy\s+((?:(?:little|older|younger|big|baby|eldest|youngest|oldest)\s+)?(?:brother|husband|dad|father|son|boyfriend|uncle|nephew|grandpa|grandfather|fianc[ée]|stepdad|stepfather|stepson|father-in-law|brother-in-law|son-in-law)(?:\s+\p{Lu}[\p{Ll}'-]+)?)\b`)
	sentencePronoun = regexp.MustCompile(`^(She|He)('s|\s+is|\s+has|\s+was|\s+loves|\s+likes|\s+hates|\s+works|\s+lives|\s+just|\s+really|\s+can't|\s+doesn't|\s+does|\s+only|\s+always|\s+never|\s+prefers|\s+enjoys|\s+collects|\s+plays|\s+turned|\s+turns|\s+will|\s+started|\s+moved|\s+got)\b`)
	femaleRelZH     = `老婆|妻子|太太|媳妇|妈妈|母亲|老妈|女儿|闺女|姐姐|妹妹|女朋友|奶奶|外婆|姥姥|婆婆|岳母|丈母娘|未婚妻|姑姑|姨妈|小姨|舅妈|嫂子|妈`
	maleRelZH       = `老公|丈夫|爸爸|父亲|老爸|儿子|哥哥|弟弟|男朋友|爷爷|外公|姥爷|公公|岳父|老丈人|未婚夫|舅舅|叔叔|姐夫|妹夫|爸`
	femaleZH        = regexp.MustCompile(`^我(?:的|家)?(` + femaleRelZH + `)`)
	maleZH          = regexp.MustCompile(`^我(?:的|家)?(` + maleRelZH + `)`)
	// laterPronounZH is a clause after the first that opens with 她 or 他 and a verb of
	// liking, doing or being.
	laterPronounZH = regexp.MustCompile(`([，,])(她|他)((?:最|很|特别|比较|一直|平时|也)?(?:喜欢|爱|讨厌|不吃|不喝|不能|在|是|对|过敏|怕|想要|想|属|今年))`)
)

// withAntecedents is sentences with a pronoun that opens a sentence (or, in Chinese, a
// later clause) replaced by the one relation of its gender the sentence before (or the
// clause before) named: "…for my sister Noor? She's into pottery" → "My sister Noor's
// into pottery".
func withAntecedents(sentences []string) []string {
	out := make([]string, len(sentences))
	copy(out, sentences)
	for i, s := range out {
		if len(s) > maxAsideBytes {
			continue
		}
		if hasHan(s) {
			re := femaleZH
			m := re.FindStringSubmatch(s)
			if m == nil {
				re = maleZH
				m = re.FindStringSubmatch(s)
			}
			if m == nil {
				continue
			}
			want := "她"
			if re == maleZH {
				want = "他"
			}
			out[i] = laterPronounZH.ReplaceAllStringFunc(s, func(c string) string {
				sm := laterPronounZH.FindStringSubmatch(c)
				if sm[2] != want {
					return c
				}
				return sm[1] + "我" + m[1] + sm[3]
			})
			continue
		}
		if i == 0 {
			continue
		}
		p := sentencePronoun.FindStringSubmatch(s)
		if p == nil {
			continue
		}
		re := femaleRelEN
		if p[1] == "He" {
			re = maleRelEN
		}
		rels := re.FindAllStringSubmatch(out[i-1], 3)
		if len(rels) != 1 || (femaleRelEN.MatchString(out[i-1]) && maleRelEN.MatchString(out[i-1])) {
			continue // none, or more than one it could be
		}
		// The relation without the name the sentence before told: "My sister is …".
		who := strings.TrimSpace(rels[0][1])
		if f := strings.Fields(who); len(f) > 1 && f[len(f)-1] != "" && strings.ToUpper(f[len(f)-1][:1]) == f[len(f)-1][:1] {
			who = strings.Join(f[:len(f)-1], " ")
		}
		rest := s[len(p[1]):]
		if strings.HasPrefix(rest, "'s") {
			rest = " is" + rest[2:]
		}
		out[i] = "My " + who + rest
	}
	return out
}

// People say what they like and cannot stand in idioms: "I'm partial to …", "can't get
// enough of …", "not big on …", "… and I don't get along", "…是我的天敌". Each is said
// again in the plain verb the rules read, the thing as told.
var plainIdioms = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i'm|i\s+am)\s+(?:(?:very|really|quite|a\s+bit|rather|always\s+been)\s+)?partial\s+to\s+`), "I like "},
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i\s+)?(?:can't|cannot)\s+get\s+enough\s+of\s+`), "I love "},
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i'm|i\s+am)\s+(?:such\s+)?a\s+sucker\s+for\s+`), "I love "},
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i\s+)?(?:have|'ve\s+got)\s+a\s+soft\s+spot\s+for\s+`), "I like "},
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i'm\s+|i\s+am\s+)?not\s+(?:really\s+|that\s+|too\s+|very\s+)?big\s+on\s+`), "I don't like "},
	{regexp.MustCompile(`(?i)^(?:(?:honestly|tbh|ok|so),?\s+)?(?:i'm\s+|i\s+am\s+)?not\s+(?:really\s+|much\s+of\s+)?a\s+fan\s+of\s+`), "I don't like "},
}

// dislikedAsEN and dislikedAsZH are a thing told first, then disliked: "Spicy food and I
// don't get along", "香菜是我的天敌".
var (
	dislikedAsEN = regexp.MustCompile(`(?i)^([a-z][a-z -]{1,40}?)\s+(?:and\s+i\s+(?:don't|do\s+not)\s+get\s+along|(?:doesn't|does\s+not|don't|do\s+not)\s+agree\s+with\s+me|(?:is|are)\s+(?:just\s+)?not\s+for\s+me|(?:is|are)\s+my\s+(?:nemesis|kryptonite|enemy))\b`)
	dislikedAsZH = regexp.MustCompile(`^(\p{Han}{1,6}?)(?:是|就是)?(?:我的)?(?:天敌|死敌|克星)|^我(?:跟|和)(\p{Han}{1,6}?)(?:不对付|合不来)|^(\p{Han}{1,6}?)我(?:实在|真的)?(?:吃不来|喝不惯|吃不惯|受不了)`)
)

// withPlainIdioms is sentences with the idioms of liking said plainly.
func withPlainIdioms(sentences []string) []string {
	out := make([]string, len(sentences))
	for i, s := range sentences {
		out[i] = s
		if len(s) > maxAsideBytes {
			continue
		}
		if hasHan(s) {
			if m := dislikedAsZH.FindStringSubmatch(s); m != nil {
				out[i] = "我讨厌" + m[1] + m[2] + m[3] + "。"
			}
			continue
		}
		for _, p := range plainIdioms {
			if loc := p.re.FindStringIndex(s); loc != nil {
				out[i] = p.with + s[loc[1]:]
				break
			}
		}
		if m := dislikedAsEN.FindStringSubmatch(out[i]); m != nil && !nameStop[strings.ToLower(strings.Fields(m[1])[0])] {
			out[i] = "I don't like " + strings.ToLower(m[1]) + "."
		}
	}
	return out
}

// A self-introduction is often a label and a list: "Quick background: 41, nurse, from
// Derry, living in Leeds". Each item is a sentence about the speaker, its "I'm" left out.
var (
	backgroundLeadEN = regexp.MustCompile(`(?i)^(?:(?:a\s+)?quick\s+|some\s+|brief\s+|a\s+bit\s+of\s+)?(?:background|context|bio|intro|about\s+me|me\s+in\s+brief|tl;?dr)\s*[:\-–—]\s*(.+)$`)
	itemVerbEN       = regexp.MustCompile(`(?i)^(?:originally|from|living|based|working|a|an|the|currently|now|recently|born|raised)\b|^(?:married|single|divorced|engaged|retired|widowed)$`)
	itemStatementEN  = regexp.MustCompile(`(?i)^(?:i|i'm|my|we|we're|our)\b`)
	itemVerbLeadEN   = regexp.MustCompile(`(?i)^(?:have|got|love|like|hate|work|live|run|own|speak|study|teach)\b`)
	itemCountEN      = regexp.MustCompile(`(?i)^(?:one|two|three|four|five|six|\d)\s+\w+`)
	itemAgeEN        = regexp.MustCompile(`^\d{2}$`)
)

// withBackgroundItems is sentences with a labelled self-introduction told item by item.
func withBackgroundItems(sentences []string) []string {
	out := make([]string, 0, len(sentences))
	for _, s := range sentences {
		if len(s) > maxAsideBytes {
			out = append(out, s)
			continue
		}
		m := backgroundLeadEN.FindStringSubmatch(s)
		if m == nil || hasHan(s) {
			out = append(out, s)
			continue
		}
		for _, item := range strings.Split(trimEnd(m[1]), ",") {
			item = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(item), "and "))
			switch {
			case item == "":
			case itemAgeEN.MatchString(item):
				out = append(out, "I'm "+item+".")
			case itemStatementEN.MatchString(item):
				out = append(out, upperFirst(item)+".")
			case itemVerbLeadEN.MatchString(item):
				out = append(out, "I "+item+".")
			case itemCountEN.MatchString(item):
				out = append(out, "I have "+item+".") // "two grandkids"
			case itemVerbEN.MatchString(item):
				out = append(out, "I'm "+item+".")
			case len(strings.Fields(item)) <= 3 && strings.ToLower(item) == item:
				out = append(out, "I'm "+article(item)+item+".") // "civil engineer"
			default:
				out = append(out, upperFirst(item)+".")
			}
		}
	}
	return out
}
