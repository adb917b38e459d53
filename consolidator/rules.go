package consolidator

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// relation is how a candidate relates to one memory the owner already has.
type relation int

const (
	relUnrelated     relation = iota // a different fact: add
	relDuplicate                     // the same meaning: confirm
	relRefinement                    // the same fact with more or corrected detail: update
	relContradiction                 // the new statement replaces the old: supersede
)

func (r relation) String() string {
	switch r {
	case relDuplicate:
		return "duplicate"
	case relRefinement:
		return "refinement"
	case relContradiction:
		return "contradiction"
	}
	return "unrelated"
}

// minExtraTokens is how many tokens a candidate must add to an otherwise contained
// memory to count as a refinement rather than a restatement: one extra word is
// usually a qualifier ("The user's brother works at Google" is not a refinement of
// "The user works at Google"), two or more carry detail.
const minExtraTokens = 2

// refineGrowth is how much longer a refinement is than the memory it refines: added
// detail takes room, while a rephrasing of the same length (住在上海 / 现居上海) is a
// restatement even when it shares most tokens.
const refineGrowth = 1.25

// scored is a neighbour with its similarity to the candidate.
type scored struct {
	mem     memory.Memory
	sim     float64
	sameKey bool
	related bool // in a slot the candidate's may rule out (see slots.go)
}

// ruleMatch is the rules' verdict on one neighbour.
type ruleMatch struct {
	rel    relation
	reason string
}

// relate decides, deterministically, how candidate c relates to neighbour n. The
// signals are the embedding similarity, the keys, token containment (does one text
// hold the other's words?), polarity (negations and negative verbs in Chinese and
// English) and change cues ("now", "instead", 改成, 不再 …). Embeddings of a hashing
// model see shared words, not meaning, so the rules lean on those lexical signals.
func (cfg ResolverConfig) relate(c memory.Candidate, cf textFeatures, n scored, nf textFeatures) ruleMatch {
	sim := n.sim
	shared := 0
	for t := range cf.tokens {
		if _, ok := nf.tokens[t]; ok {
			shared++
		}
	}
	oldIn, newIn := ratio(shared, len(nf.tokens)), ratio(shared, len(cf.tokens))
	extraNew := len(cf.tokens) - shared
	flip := cf.negative != nf.negative
	keyed := c.Key != "" && n.mem.Key != ""
	sameKey := keyed && (n.sameKey || sameSlot(c.Key, n.mem.Key))
	diffKey := keyed && !sameKey
	episodic := c.Type == memory.Episodic || n.mem.Type == memory.Episodic
	why := func(format string, args ...any) string {
		return fmt.Sprintf("%s (cosine %.2f, old-in-new %.2f, new-in-old %.2f)", fmt.Sprintf(format, args...), sim, oldIn, newIn)
	}

	switch {
	case corrects(c, n.mem):
		return ruleMatch{relContradiction, why("corrects %q, which the memory holds", correctedValue(c))}
	case dietRulesOut(c, n.mem):
		return ruleMatch{relContradiction, why("the diet %s rules out %s", c.Key, n.mem.Key)}
	case c.Key == "" && n.mem.Key != "" && c.Metadata["rule"] == "detail",
		c.Key != "" && n.mem.Key == "" && n.mem.Metadata["rule"] == "detail":
		// A sentence told together with several slots (the extractor's "detail") stays
		// beside their memories: merged into one slot it would keep the other slots' values
		// there when they change. It is retired when it retells a value that changed.
		return ruleMatch{relUnrelated, why("a sentence told together with slot values, kept beside the slot %s", cmp.Or(c.Key, n.mem.Key))}
	case !sameKey && topicChange(c, cf, n.mem, nf):
		// "these days I catch the 6:55" after "takes the 7:20 bus": a change told of
		// the same thing in other words, whatever rule told each.
		return ruleMatch{relContradiction, why("a change told of the same thing (%s)", strings.Join(topicWords(cf, nf), ", "))}
	case diffKey && sim < cfg.DuplicateSim:
		// Keys name single-valued slots: two different slots never replace each other.
		return ruleMatch{relUnrelated, why("different keys %s and %s", c.Key, n.mem.Key)}
	case episodic && c.Type != memory.Episodic && !keyed && extraNew > 0 && revises(cf, c, n.mem):
		// "仓库那边现在换成小李对接了" after an event that named who did it: the new standing
		// fact revises the thing the event was about.
		return ruleMatch{relContradiction, why("revises %q, which the event told of", revisedThing(c.Content))}
	case episodic:
		// Events do not contradict or refine each other: two trips to Tokyo are two
		// events. Only a restatement of the same event is merged.
		if !flip && (sim >= cfg.DuplicateSim || (oldIn >= cfg.Containment && newIn >= cfg.Containment)) {
			return ruleMatch{relDuplicate, why("restates the same event")}
		}
		return ruleMatch{relUnrelated, why("a different event")}
	case cf.change && movedDay(cf, nf) && (shareName(cf, nf) || shared >= 2):
		// "Nico swims on Thursdays now instead" of "lessons are on Tuesdays": the same
		// thing, named by a shared name or words, on another day (whatever the polarity
		// of the rest: "so don't book my Saturdays" moves with it).
		return ruleMatch{relContradiction, why("change cue and another day of the week")}
	case flip && (sameKey || sim >= cfg.ContradictSim):
		return ruleMatch{relContradiction, why("polarity flips (negation or opposite verb)")}
	case flip:
		return ruleMatch{relUnrelated, why("opposite polarity but not similar enough to be the same fact")}
	case !keyed && extraNew > 0 && revises(cf, c, n.mem):
		// "X改成Y" / "switched X to Y" with X in the memory: the same thing, a new value.
		return ruleMatch{relContradiction, why("revises %q, which the memory is about", revisedThing(c.Content))}
	case cf.change && extraNew > 0 && (sameKey || sim >= cfg.ContradictSim):
		// "now", "instead", 改成 … with something new: the value changed.
		return ruleMatch{relContradiction, why("change cue with a new value")}
	case numbersConflict(cf, nf) && (sameKey || sim >= cfg.ContradictSim):
		return ruleMatch{relContradiction, why("a number changed")}
	case namesConflict(cf, nf) && !sameKey:
		// Another person or place ("plays tennis with Alice" / "with Bob"): without a
		// shared slot both can be true.
		return ruleMatch{relUnrelated, why("names a different person or place")}
	case sim >= cfg.RefineSim && oldIn >= cfg.Containment && extraNew >= minExtraTokens &&
		float64(cf.runes) >= refineGrowth*float64(nf.runes) && !namesConflict(cf, nf):
		return ruleMatch{relRefinement, why("contains the memory and adds %d tokens", extraNew)}
	case sameKey && c.Metadata["correction"] == true && c.Content != n.mem.Content && extraNew > 0:
		// "说错了，我导师叫欧阳剑华": a correction of the slot, however alike the two read.
		return ruleMatch{relContradiction, why("corrects the value of %s", c.Key)}
	case !namesConflict(cf, nf) && (sim >= cfg.DuplicateSim ||
		sim >= cfg.RefineSim && newIn >= cfg.Containment ||
		oldIn >= cfg.Containment && newIn >= cfg.Containment):
		return ruleMatch{relDuplicate, why("same meaning")}
	case sameKey:
		return ruleMatch{relContradiction, why("same key %s with a different value", c.Key)}
	}
	return ruleMatch{relUnrelated, why("different fact")}
}

// strongChange is a change cue that says a standing thing is now otherwise: "these days",
// "now", "instead", "switched", 现在都, 改成 (not "started", which also opens news).
var strongChange = regexp.MustCompile(`(?i)\b(?:now|these\s+days|nowadays|instead|switched|changed|moved|anymore|any\s+more|no\s+longer|lately|replaced|finished|ended)\b|现在|如今|改成|改坐|改用|改去|改在|换成|换到|换了|不再|都在|迁到|搬到|读完|看完|追完|用完`)

// topicGeneric are shared words that say nothing of what a memory is about.
var topicGeneric = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`user usually take takes get gets go goes do does make use uses like likes love want need start started
		stop new old also still late lately these day days time week weeks month year thing way now just really back each every around
		about their they them said say told tell has have had is are was were been being one two usual prefer prefers current always
		现在 最近 一般 都在 每天 开始 改成 平时 已经 以后 用户 的是 一个 时候 今天 这个`) {
		m[ruleStem(w)] = true
		m[w] = true
	}
	return m
}()

// topicWords are the words two memories share that name what they are about: not a
// number, not one CJK character, not a generic word.
func topicWords(cf, nf textFeatures) []string {
	var out []string
	for t := range cf.tokens {
		if _, ok := nf.tokens[t]; !ok || topicGeneric[t] {
			continue
		}
		if _, num := cf.numbers[t]; num {
			continue
		}
		if hasHan(t) && utf8.RuneCountInString(t) < 2 || !hasHan(t) && len(t) < 3 {
			continue
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// keyFamily is who a key's slot belongs to: "relation", "person", "pet" or "" for the
// speaker's own.
func keyFamily(k string) string {
	for _, f := range []string{"relation.", "person.", "pet."} {
		if strings.HasPrefix(k, f) {
			return strings.TrimSuffix(f, ".")
		}
	}
	return ""
}

// topicChange reports candidate c, a slot's value told with a strong change cue, telling
// a new value of what the older standing memory m is about: they share a word that names the thing, each
// holds words the other does not (the old value, the new one), and both are the
// speaker's.
func topicChange(c memory.Candidate, cf textFeatures, m memory.Memory, nf textFeatures) bool {
	if m.Type != memory.Semantic || c.Key == "" || c.Source != memory.SourceUser || m.Source != memory.SourceUser ||
		c.ValidFrom.IsZero() || !m.ValidFrom.Before(c.ValidFrom) || !strongChange.MatchString(c.Content) ||
		m.Category == memory.CatProfile && c.Key == "" || keyFamily(m.Key) != keyFamily(c.Key) || strings.HasPrefix(c.Key, "person.") {
		return false
	}
	subject := map[string]bool{}
	for _, t := range []string{c.Content, m.Content} {
		if f := strings.Fields(strings.ToLower(t)); len(f) > 0 {
			subject[ruleStem(strings.Trim(f[0], ",.:;!?'’s"))] = true // "Gina …": whom it is told of
		}
	}
	if !slices.ContainsFunc(topicWords(cf, nf), func(w string) bool {
		_, cn := cf.names[w]
		_, nn := nf.names[w]
		// A name shared is who the memories are told of ("Gina …"), unless a slot is named
		// by it (habit.watch.<show>).
		return !subject[w] && (!cn && !nn || strings.Contains(c.Key+" "+m.Key, w))
	}) {
		return false
	}
	newOnly, oldOnly := 0, 0
	for t := range cf.tokens {
		if _, ok := nf.tokens[t]; !ok {
			newOnly++
		}
	}
	for t := range nf.tokens {
		if _, ok := cf.tokens[t]; !ok {
			oldOnly++
		}
	}
	return newOnly > 0 && oldOnly > 0
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// textFeatures are the lexical signals the rules read from a text.
type textFeatures struct {
	tokens   map[string]struct{} // stemmed words, CJK characters and bigrams, function words dropped
	numbers  map[string]struct{} // the tokens that are numbers
	names    map[string]struct{} // capitalised words inside sentences (see properNames)
	runes    int                 // length of the normalised text
	days     map[int]struct{}    // the weekdays named (Tuesdays, 周二 …), Monday = 1
	negative bool                // a negation or a negative verb (not, hate, 不, 讨厌 …)
	change   bool                // a change cue (now, instead, switched, 改成, 不再 …)
}

// Negation and change cues. Chinese has no word boundaries, so the phrases that
// contain 不/没 without negating (不错, 没关系 …) are removed before looking.
var (
	zhNotNegation = strings.NewReplacer("不错", " ", "不过", " ", "不少", " ", "不仅", " ", "不但", " ",
		"不管", " ", "不断", " ", "不久", " ", "不同", " ", "不如", " ", "差不多", " ", "没关系", " ",
		"没问题", " ", "要不要", " ", "不得不", " ", "特别", " ", "区别", " ", "别人", " ", "分别", " ",
		"类别", " ", "级别", " ", "性别", " ")
	zhNegation = regexp.MustCompile(`不|没|别|讨厌|反感|厌恶|避开|避免|拒绝|戒掉|停止|受不了`)
	zhChange   = regexp.MustCompile(`改成|改为|改用|改坐|改到|挪到|调到|推迟|推到|延到|提前到|延期|换成|换了|换到|换工作|不再|现在|如今|已经|搬到|搬去|搬家|转到|转去|开始|以后|今后|从此|也可以|可以了|不.*了$`)
	enNegation = map[string]bool{"not": true, "no": true, "never": true, "dont": true, "doesnt": true,
		"didnt": true, "cant": true, "cannot": true, "wont": true, "isnt": true, "arent": true, "wasnt": true,
		"werent": true, "shouldnt": true, "nor": true, "hate": true, "hates": true, "hated": true,
		"dislike": true, "dislikes": true, "disliked": true, "avoid": true, "avoids": true, "avoided": true,
		"stop": true, "stopped": true, "quit": true, "quitted": true, "anymore": true, "refuse": true, "refuses": true}
	enChange = map[string]bool{"now": true, "instead": true, "changed": true, "change": true, "switched": true,
		"switch": true, "moved": true, "move": true, "anymore": true, "longer": true, "stopped": true, "quit": true,
		"became": true, "become": true, "started": true, "starting": true, "nowadays": true, "replaced": true,
		"bumped": true, "rescheduled": true, "postponed": true, "pushed": true, "delayed": true, "reshuffled": true}
	enWeekday = map[string]int{"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5,
		"saturday": 6, "sunday": 7}
	zhWeekday = regexp.MustCompile(`(?:周|星期|礼拜)([一二三四五六日天])`)
	// zhBreak are function characters that split CJK runs before bigramming, so that
	// word order around them (王磊是用户的经理 / 用户的经理是王磊) does not matter.
	zhBreak = "的了是在和与及都也就还很会吗呢吧啊着过一个把被给让对要想"
	// enSynonyms map stemmed English words that memories use interchangeably to one
	// token; zhSynonyms do the same on Chinese text before it is cut into bigrams.
	// Both are small on purpose: frequent vocabulary of preferences and profiles.
	enSynonyms = map[string]string{"lov": "lik", "enjoy": "lik", "prefer": "lik", "fond": "lik",
		"answer": "reply", "respons": "reply", "allergic": "allergy", "born": "birthday",
		"kid": "child", "children": "child", "job": "work", "employ": "work"}
	zhSynonyms = strings.NewReplacer("偏好", "喜欢", "喜爱", "喜欢", "偏爱", "喜欢", "爱喝", "喜欢喝", "爱吃", "喜欢吃",
		"早晨", "早上", "沟通", "交流", "上班", "工作", "素食者", "吃素", "素食", "吃素", "现居", "住在",
		"居住在", "住在", "目前", "", "通常", "", "一般", "")
)

func features(text string) textFeatures {
	lower := strings.ToLower(text)
	f := textFeatures{tokens: map[string]struct{}{}, numbers: map[string]struct{}{}, names: properNames(text),
		days: map[int]struct{}{}}
	// The Chinese patterns match only Han characters: most texts skip them (they were a
	// fifth of the resolver's CPU, run on every neighbour of every candidate).
	if hasHan(lower) {
		zh := zhNotNegation.Replace(lower)
		f.negative = zhNegation.MatchString(zh)
		f.change = zhChange.MatchString(strings.TrimRight(zh, "。.!！ "))
		for _, m := range zhWeekday.FindAllStringSubmatch(lower, -1) {
			// 日 and 天 both name Sunday (7).
			f.days[min(strings.Index("一二三四五六日天", m[1])/len("一"), 6)+1] = struct{}{}
		}
	}
	// "用户" (the user) opens nearly every extracted sentence: it carries no content.
	lower = zhSynonyms.Replace(strings.ReplaceAll(lower, "用户", " "))
	f.runes = utf8.RuneCountInString(strings.TrimSpace(lower))

	var word []byte
	var run []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if enNegation[w] {
			f.negative = true
		}
		if enChange[w] {
			f.change = true
		}
		if d, ok := enWeekday[strings.TrimSuffix(w, "s")]; ok {
			f.days[d] = struct{}{}
		}
		if ruleStopword(w) {
			return
		}
		w = ruleStem(w)
		if s, ok := enSynonyms[w]; ok {
			w = s
		}
		if isDigits(w) {
			f.numbers[w] = struct{}{}
		}
		f.tokens[w] = struct{}{}
	}
	// CJK runs give characters and bigrams: bigrams carry most word meaning, and
	// characters keep containment working when a rephrasing breaks a bigram
	// (周末喜欢去爬山 / 周末常去爬山).
	flushRun := func() {
		for i := range run {
			f.addCJK(string(run[i]))
			if i+1 < len(run) {
				f.addCJK(string(run[i : i+2]))
			}
		}
		run = run[:0]
	}
	for _, r := range lower {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
			r -= 0xFEE0
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				flushRun()
				word = utf8.AppendRune(word, unicode.ToLower(r))
			} else {
				flushWord()
				flushRun()
			}
		case r == '\'' || r == '\u2019':
			// "don't" → "dont", keeping the negation a single word.
		case unicode.Is(unicode.Han, r):
			flushWord()
			if strings.ContainsRune(zhBreak, r) {
				flushRun()
				continue
			}
			run = append(run, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushRun()
			word = utf8.AppendRune(word, r)
		default:
			flushWord()
			flushRun()
		}
	}
	flushWord()
	flushRun()
	lowerText := strings.ToLower(text)
	if f.negative && enNegPhrase.MatchString(lowerText) {
		f.change = true
	}
	if (strings.Contains(lowerText, " up") || strings.Contains(lowerText, "cut out")) && enGiveUp.MatchString(lowerText) {
		f.negative, f.change = true, true
	}
	return f
}

// enNegPhrase marks negations that also announce a change ("no longer").
var enNegPhrase = regexp.MustCompile(`\bno longer\b|\bnot any ?more\b`)

// enGiveUp is giving something up: a negation and a change at once.
var enGiveUp = regexp.MustCompile(`\b(?:gave|given|give|giving) up\b|\bcut out\b`)

// correctedValue is the value a correction says was wrong (the extractor's "corrects"
// metadata: "it's Mira, not Myra" → Myra), or "".
func correctedValue(c memory.Candidate) string {
	v, _ := c.Metadata["corrects"].(string)
	return strings.TrimSpace(v)
}

// correctedTo is the right value a correction gives ("it's Mira, not Myra" → Mira), or "".
func correctedTo(c memory.Candidate) string {
	v, _ := c.Metadata["corrected_to"].(string)
	return strings.TrimSpace(v)
}

// replaceValue is text with every whole-word occurrence of wrong (any case; a substring
// in Han) replaced by right.
func replaceValue(text, wrong, right string) string {
	var b strings.Builder
	last := 0
	for _, sp := range valueSpans(text, wrong) {
		b.WriteString(text[last:sp[0]])
		b.WriteString(right)
		last = sp[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// corrects reports a correction c of the value memory m holds: m names the wrong value
// and c does not repeat it.
func corrects(c memory.Candidate, m memory.Memory) bool {
	if v := correctedValue(c); v != "" && holdsValue(m.Content, v) && !holdsValue(c.Content, v) {
		return true
	}
	// A correction giving only the right identifier ("it's actually B2213") corrects the
	// memory holding a different identifier of its shape (B2231): the same letters, the
	// same length, a few digits apart or swapped.
	return correctsID(c, m)
}

// idTokens are the identifiers in text: runs of letters, digits and dashes holding a digit.
func idTokens(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-'))
	}) {
		if strings.ContainsAny(w, "0123456789") && len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

// sameShapeID reports identifiers a and b that differ but share letters and length and
// differ in at most two digit positions or by the same digits in another order: the
// mistakes people make copying a number.
func sameShapeID(a, b string) bool {
	if strings.EqualFold(a, b) || len(a) != len(b) {
		return false
	}
	diff := 0
	for i := range len(a) {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x < '0' || x > '9' || y < '0' || y > '9' {
			return false // a letter differs: another kind of identifier
		}
		diff++
	}
	if diff <= 2 {
		return true
	}
	sa, sb := []byte(a), []byte(b)
	slices.Sort(sa)
	slices.Sort(sb)
	return string(sa) == string(sb)
}

// holdsValue reports text naming v: as a word in Latin script, as a substring in Han.
func holdsValue(text, v string) bool { return len(valueSpans(text, v)) > 0 }

// valueSpans are the byte spans, in text, of v as a whole word in any case (anywhere,
// for a value holding Han, which has no word boundaries), in order and not overlapping.
func valueSpans(text, v string) [][2]int {
	lt, lv := strings.ToLower(text), strings.ToLower(v)
	if lv == "" {
		return nil
	}
	han := strings.ContainsFunc(lv, func(r rune) bool { return unicode.Is(unicode.Han, r) })
	// Beside Han text a Latin or digit value ("是3月14号", "门牌1308号") is bounded by the
	// characters around it, which are words of their own.
	boundary := func(r rune) bool { return !isWordRune(r) || unicode.Is(unicode.Han, r) }
	var out [][2]int
	for i := 0; i+len(lv) <= len(lt); {
		j := strings.Index(lt[i:], lv)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(lv)
		before, _ := utf8.DecodeLastRuneInString(lt[:start])
		after, _ := utf8.DecodeRuneInString(lt[end:])
		if han || (boundary(before) && boundary(after)) {
			out = append(out, [2]int{start, end})
			i = end
		} else {
			i = start + 1
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func (f *textFeatures) addCJK(tok string) { f.tokens[tok] = struct{}{} }

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// namesConflict reports that each text names someone or something (a capitalised
// word inside a sentence: Alice, Berlin, Google) the other does not.
func namesConflict(a, b textFeatures) bool {
	return hasOutside(a.names, b.names) && hasOutside(b.names, a.names)
}

// properNames collects the capitalised Latin words of text that do not open a
// sentence, lower-cased and stemmed like the tokens.
func properNames(text string) map[string]struct{} {
	out := map[string]struct{}{}
	sentenceStart := true
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:()\"“”", r)
	}) {
		core := strings.TrimRightFunc(w, func(r rune) bool { return strings.ContainsRune(".!?。！？", r) })
		first, _ := utf8.DecodeRuneInString(core)
		if !sentenceStart && unicode.IsUpper(first) && core != "I" && !unicode.Is(unicode.Han, first) {
			out[ruleStem(strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(core, "'s"), "’s")))] = struct{}{}
		}
		sentenceStart = core != w || strings.ContainsAny(w, "。！？")
	}
	return out
}

// slotValue is what an old statement of a slot holds that its replacement does not: the
// proper names in Latin script, the runs of two or more Han characters in Chinese.
type slotValue struct {
	names map[string]struct{}
	runs  []string
	words []string // lower-case words of a value told without names ("senior engineer")
}

// oldValues is the value old holds and new does not ("Tokyo" of "lives in Tokyo" replaced
// by "lives in Frankfurt"; 东京常驻 of 用户家在东京常驻).
func oldValues(old, new string) slotValue {
	v := slotValue{names: properNames(old)}
	for n := range properNames(new) {
		delete(v.names, n)
	}
	for n := range v.names {
		if containsWord(new, n, true) {
			delete(v.names, n) // a name the new statement opens with is no old value
		}
	}
	var run []rune
	flush := func() {
		if len(run) >= 2 {
			v.runs = append(v.runs, string(run))
		}
		run = run[:0]
	}
	for _, r := range strings.ReplaceAll(old, "用户", " ") {
		if unicode.Is(unicode.Han, r) && !strings.ContainsRune(new, r) {
			run = append(run, r)
			continue
		}
		flush()
	}
	flush()
	if len(v.names) == 0 && len(v.runs) == 0 {
		// A value without a name ("is a senior engineer"): the words of the old statement
		// the new one does not hold, beside the template's.
		have := map[string]bool{}
		for _, w := range valueWord.FindAllString(strings.ToLower(new), -1) {
			have[w] = true
		}
		for _, w := range valueWord.FindAllString(strings.ToLower(old), -1) {
			if !have[w] && !templateWords[w] && !slices.Contains(v.words, w) {
				v.words = append(v.words, w)
			}
		}
	}
	return v
}

// valueWord is a lower-case word of three letters or more.
var valueWord = regexp.MustCompile(`\b[a-z][a-z'-]{2,}\b`)

// templateWords are the words a slot's statement is written with, not its value.
var templateWords = map[string]bool{"the": true, "user": true, "user's": true, "is": true, "are": true, "was": true, "and": true,
	"works": true, "lives": true, "their": true, "they": true, "now": true, "has": true, "have": true, "with": true, "for": true,
	"at": true, "in": true, "on": true, "of": true, "to": true, "an": true, "named": true, "called": true, "uses": true, "drives": true}

func (v slotValue) empty() bool { return len(v.names) == 0 && len(v.runs) == 0 && len(v.words) == 0 }

// heldBy reports text holding the whole value: every name and every run.
func (v slotValue) heldBy(text string) bool {
	names := properNames(text)
	for n := range v.names {
		if _, ok := names[n]; !ok {
			return false
		}
	}
	for _, r := range v.runs {
		if !strings.Contains(text, r) {
			return false
		}
	}
	if len(v.words) > 0 {
		have := map[string]bool{}
		for _, w := range valueWord.FindAllString(strings.ToLower(text), -1) {
			have[w] = true
		}
		for _, w := range v.words {
			if !have[w] {
				return false
			}
		}
	}
	return true
}

// movedDay reports that new and old name weekdays and one names a day the other does
// not ("moved to Sundays, so Saturdays are free again" names the old day too).
func movedDay(new, old textFeatures) bool {
	return len(new.days) > 0 && len(old.days) > 0 && (hasOutside(old.days, new.days) || hasOutside(new.days, old.days))
}

// shareName reports a proper name both texts hold.
func shareName(a, b textFeatures) bool {
	for n := range a.names {
		if _, ok := b.names[n]; ok {
			return true
		}
	}
	return false
}

// numbersConflict reports that each text has a number the other lacks (7点 / 6点,
// UTC+8 / UTC-5): a changed value, however similar the rest.
func numbersConflict(a, b textFeatures) bool {
	return hasOutside(a.numbers, b.numbers) && hasOutside(b.numbers, a.numbers)
}

func hasOutside[K comparable](a, b map[K]struct{}) bool {
	for n := range a {
		if _, ok := b[n]; !ok {
			return true
		}
	}
	return false
}

// ruleStopword reports English words that carry no fact. Negations are kept out of
// the tokens (polarity is tracked separately) but are not stopwords of the embedder.
func ruleStopword(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from",
		"as", "into", "about", "is", "are", "was", "were", "be", "been", "being", "am", "i", "im", "me", "my",
		"we", "our", "us", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they", "them", "their",
		"this", "that", "these", "those", "do", "does", "did", "will", "would", "should", "can", "could",
		"so", "if", "then", "than", "there", "here", "please", "just", "also", "very", "s", "t", "user", "users",
		"really", "truly", "quite", "pretty", "actually", "definitely", "totally", "much", "still", "too",
		"indeed", "has", "have", "had", "now", "no", "not", "never", "dont", "doesnt", "didnt", "cant",
		"cannot", "wont", "isnt", "arent", "wasnt", "werent", "anymore", "longer", "instead", "who", "which":
		return true
	}
	return false
}

// ruleStem strips common English inflections (prefers/preferred/preferring → prefer).
func ruleStem(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch n := len(w); {
	case strings.HasSuffix(w, "ing") && n-3 >= 3:
		w = undoubled(w[:n-3])
	case strings.HasSuffix(w, "ed") && n-2 >= 3:
		w = undoubled(w[:n-2])
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func undoubled(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// chooseRule picks the neighbour the candidate should act on: a neighbour in the
// same key slot first (keys make conflicts deterministic), then the most similar one
// that is related at all.
func (cfg ResolverConfig) chooseRule(c memory.Candidate, ns []scored) (int, ruleMatch) {
	cf := features(c.Content)
	best, bestMatch := -1, ruleMatch{rel: relUnrelated, reason: "no similar memory"}
	bestScore := -1.0
	for i, n := range ns {
		nf := features(n.mem.Content)
		if n.sim < cfg.NeighbourFloor && !n.sameKey && !n.related && !revises(cf, c, n.mem) && !corrects(c, n.mem) &&
			!topicChange(c, cf, n.mem, nf) {
			continue
		}
		m := cfg.relate(c, cf, n, nf)
		if m.rel == relUnrelated {
			if best < 0 {
				bestMatch = m
			}
			continue
		}
		score := n.sim
		if n.sameKey {
			score += 1
		}
		if score > bestScore {
			best, bestMatch, bestScore = i, m, score
		}
	}
	return best, bestMatch
}
