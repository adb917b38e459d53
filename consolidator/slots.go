package consolidator

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Slot rules: keys that differ and still meet. A plan named by its kind (plan.flight)
// is the plan of that kind named in full (plan.flight.oslo); a diet rules out the
// tastes it excludes (food.diet "vegan" and taste.bacon), so that going vegan
// leaves "adores bacon" in history, not in the answer.

// samePlanSlot reports plan keys of one plan: equal, or one the other plus a qualifier.
func samePlanSlot(a, b string) bool {
	if a == b {
		return a != ""
	}
	if !strings.HasPrefix(a, "plan.") || !strings.HasPrefix(b, "plan.") {
		return false
	}
	return strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

// sameSlot reports keys that name the same slot.
func sameSlot(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b || samePlanSlot(a, b) || petFoodSlot(a) && petFoodSlot(b) && (a == "pet.food" || b == "pet.food") || sameAttrHead(a, b) || slotNoun(a) != "" && slotNoun(a) == slotNoun(b) {
		return true
	}
	t := thingOf(a)
	return t != "" && t == thingOf(b)
}

// slotNoun is the thing a topic, habit or plan slot of one word is about: user.attr.康复,
// habit.康复 and plan.康复 are one recurring thing, whichever rule told it.
func slotNoun(k string) string {
	for _, p := range []string{"user.attr.", "habit.", "plan."} {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" && !strings.Contains(rest, ".") {
			return rest
		}
	}
	return ""
}

// sameAttrHead reports two topic slots of one thing, one named with a modifier the other
// leaves out: "my coffee order" (user.attr.coffee_order) and "my order" (user.attr.order),
// 工资卡 and 新工资卡.
func sameAttrHead(a, b string) bool {
	x, okx := strings.CutPrefix(a, "user.attr.")
	y, oky := strings.CutPrefix(b, "user.attr.")
	if !okx || !oky || x == y {
		return false
	}
	if len(x) > len(y) {
		x, y = y, x
	}
	if hasHan(x) {
		return utf8.RuneCountInString(x) >= 2 && strings.HasSuffix(y, x)
	}
	return len(x) >= 4 && strings.HasSuffix(y, "_"+x)
}

// petFoodSlot reports the slot of what a pet eats: pet.<name or kind>.food, or pet.food
// when the sentence named no pet ("the vet switched it to a prescription diet"), which
// meets every pet's.
func petFoodSlot(k string) bool {
	return k == "pet.food" || strings.HasPrefix(k, "pet.") && strings.HasSuffix(k, ".food") && strings.Count(k, ".") == 2
}

// personOf is the name of a person.<name>.<what> slot ("" for another key): someone the
// speaker told of by name alone ("Maya started 4th grade").
func personOf(k string) string {
	rest, ok := strings.CutPrefix(k, "person.")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return name
}

// containsWord reports text holding w as a word, case folded: whole, or at the start of a
// word when prefix is set (a stem: "lott" in "Lotte"). It runs per neighbour, where
// compiling a pattern per call would cost more than the check.
func containsWord(text, w string, prefix bool) bool {
	text, w = strings.ToLower(text), strings.ToLower(w)
	if w == "" {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(w); unicode.Is(unicode.Han, r) {
		return strings.Contains(text, w) // Chinese has no spaces between words
	}
	wordRune := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for from := 0; ; {
		i := strings.Index(text[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if (i == 0 || !wordRune(before)) && (prefix || i+len(w) == len(text) || !wordRune(after)) {
			return true
		}
		from = i + len(w)
	}
}

// meets reports m in candidate c's slot: the same key (sameSlot), or a relation's slot
// and the slot of the same thing of someone named in it ("my daughter Maya is in 3rd
// grade", relation.daughter.school, and "Maya started 4th grade", person.maya.school).
func meets(c memory.Candidate, m memory.Memory) bool {
	if sameSlot(c.Key, m.Key) {
		return true
	}
	namedIn := func(personKey, relKey, content string) bool {
		name := personOf(personKey)
		if name == "" || !strings.HasPrefix(relKey, "relation.") {
			return false
		}
		_, what, _ := strings.Cut(strings.TrimPrefix(personKey, "person."), ".")
		rel := strings.Split(relKey, ".")
		return len(rel) == 3 && rel[2] == what && containsWord(content, name, false)
	}
	return namedIn(c.Key, m.Key, m.Content) || namedIn(m.Key, c.Key, c.Content)
}

// thingFamilies are the key prefixes of a stance towards one thing: liking it, drinking
// it, doing it regularly. "Loves espresso" (taste.coffee), "drinks coffee every morning"
// (drink.coffee) and "can't drink coffee anymore" are one slot, so that giving a thing up
// retires the liking or the habit whichever rule told it.
var thingFamilies = []string{"taste.", "drink.", "food.ingredient.", "food.cuisine.", "habit."}

// thingOf is the thing a stance key is about (its last part, a plural s dropped), or "".
// habit.<verb>.<object> is about the object, habit.<verb> about the activity itself.
func thingOf(k string) string {
	for _, p := range thingFamilies {
		if !strings.HasPrefix(k, p) {
			continue
		}
		rest := k[len(p):]
		if i := strings.LastIndexByte(rest, '.'); i >= 0 {
			rest = rest[i+1:]
		}
		if len(rest) > 3 {
			rest = strings.TrimSuffix(rest, "s")
		}
		return rest
	}
	return ""
}

// Diets and what they exclude. The classes are of the language (meat and animal words in
// English and the Chinese characters that name them), not of any conversation.
var (
	dietPlant      = regexp.MustCompile(`(?i)\bvegetarian\b|\bvegan\b|\bplant-based\b|吃素|素食|纯素`)
	dietVegan      = regexp.MustCompile(`(?i)\bvegan\b|纯素`)
	dietNoNeg      = regexp.MustCompile(`(?i)\bno longer\b|\bnot\b|\bquit\b|\bstopped\b|\banymore\b|不吃素|不再吃素|不素`)
	meatWords      = regexp.MustCompile(`(?i)\b(?:meat|steaks?|beef|pork|bacon|ham|chicken|lamb|mutton|veal|turkey|duck|sausages?|salami|brisket|burgers?|hamburgers?|ribs|pepperoni|prosciutto|jerky|fish|salmon|tuna|seafood|shrimps?|prawns?|lobster|crab|oysters?|sushi|bbq|barbecue)\b|肉|牛排|鸡|鸭|鹅|猪|牛|羊|鱼|虾|蟹|排骨|香肠|火腿|培根|烤串|海鲜`)
	animalProducts = regexp.MustCompile(`(?i)\b(?:eggs?|milk|cheese|cheddar|mozzarella|parmesan|brie|gouda|feta|camembert|ricotta|butter|cream|yogh?urt|dairy|honey|ice cream|omelet(?:te)?s?)\b|蛋|奶|芝士|奶酪|黄油|酸奶|蜂蜜`)
)

// tasteSlot reports keys of a liking for a thing to eat or drink.
func tasteSlot(k string) bool {
	return strings.HasPrefix(k, "taste.") || strings.HasPrefix(k, "food.cuisine.") || strings.HasPrefix(k, "food.ingredient.")
}

// dietRulesOut reports that candidate c, a plant diet taken up, rules out memory m, a
// liking of meat (or, for a vegan diet, of animal products).
func dietRulesOut(c memory.Candidate, m memory.Memory) bool {
	if who := relationDiet(c.Key); who != "" {
		// A relation's diet rules out that relation's tastes ("my partner is vegetarian
		// now", once "my partner loves steak"), never the speaker's.
		if !strings.HasPrefix(m.Key, who+"taste.") && !strings.HasPrefix(m.Key, who+"food.") || !dietPlant.MatchString(c.Content) || dietNoNeg.MatchString(c.Content) {
			return false
		}
		what := strings.ReplaceAll(strings.TrimPrefix(m.Key, who), "_", " ") + " " + m.Content
		return meatWords.MatchString(what) || dietVegan.MatchString(c.Content) && animalProducts.MatchString(what)
	}
	if c.Key != "food.diet" || !tasteSlot(m.Key) && !likingOf(m) && !habitOf(m) || !dietPlant.MatchString(c.Content) || dietNoNeg.MatchString(c.Content) {
		return false
	}
	what := strings.ReplaceAll(m.Key[strings.Index(m.Key, ".")+1:], "_", " ") + " " + m.Content
	if meatWords.MatchString(what) {
		return true
	}
	return dietVegan.MatchString(c.Content) && animalProducts.MatchString(what)
}

// relationDiet is "relation.<who>." for a relation's diet slot (relation.<who>.diet or
// relation.<who>.food.diet), "" for any other key.
func relationDiet(k string) string {
	if !strings.HasPrefix(k, "relation.") {
		return ""
	}
	for _, suf := range []string{".food.diet", ".diet"} {
		if rest, ok := strings.CutSuffix(k, suf); ok && strings.Count(rest, ".") == 1 {
			return rest + "."
		}
	}
	return ""
}

// A restriction on something to eat or drink ("can't eat spicy food anymore", "对花生过敏",
// "不能吃辣了") names what it rules out: the object of the negated verb of eating or
// drinking, or of an allergy. Any liking that names that object then goes to history.
var (
	restrictEN   = regexp.MustCompile(`(?i)(?:\b(?:can(?:'|’)?t|cannot|can no longer|could no longer|(?:am|'m|is|are)\s+not\s+(?:allowed|supposed)\s+to|shouldn't|should not|mustn't|must not|won't|will not|no longer|not)\s+(?:be\s+)?(?:eat|eating|drink|drinking|have|having|touch|touching|digest|stomach)|\b(?:gave|give|giving|given)\s+up|\bquit|\bcut\s+out|\b(?:am|'m|is|are|became|become|got|turned)\s+(?:very\s+|severely\s+|mildly\s+)?(?:allergic|intolerant)\s+to|\b(?:gone|went|going)\s+(?:right\s+|completely\s+|totally\s+|kind\s+of\s+)?off|\bsick\s+of|\bdone\s+with)\s+(?:any\s+|anything\s+|much\s+|more\s+)?((?:[a-z][a-z-]*\s+){0,2}[a-z][a-z-]*)`)
	restrictDoZH = regexp.MustCompile(`(?:别|不能|不可以|不能再|不再|别再|不许|不让|没法|禁止)(?:再)?((?:打|踢|练|跳)\p{Han}{1,3}?|跑|游泳|骑车|爬山|滑雪|健身|撸铁|举铁)(?:步|了|[，。,.!！；;]|$)`)
	restrictDoEN = regexp.MustCompile(`(?i)\b(?:can't|cannot|can no longer|shouldn't|should not|not allowed to|told not to|no more|banned from|stop|stopped|quit|gave\s+up)\s+(?:go(?:ing)?\s+)?(running|jogging|cycling|climbing|skiing|lifting|swimming|surfing|drinking|smoking|vaping)\b`)
	// notAnymoreDoEN is an activity the speaker has stopped: "she doesn't ski anymore".
	notAnymoreDoEN = regexp.MustCompile(`(?i)\b(?:don't|do\s+not|doesn't|does\s+not|no\s+longer|can't|cannot)\s+(run|swim|cycle|bike|climb|ski|lift|surf|drink|smoke|vape|golf|dance|skate|row|hike)\s*(?:any\s?more|any\s+longer|[,.;!]|$)`)
	// notDoZH is the same in Chinese: "他如今不滑雪了".
	notDoZH = regexp.MustCompile(`(?:^|[，,我用户现在也都近后期])不(?:再)?(跑步|游泳|骑车|爬山|滑雪|健身|打球|喝酒|抽烟)了`)
	// notDoTopicZH is an activity told as the topic, then stopped: "羽毛球不打了", "钢琴早就不弹了".
	notDoTopicZH = regexp.MustCompile(`(?:^|[，,我用户现在也都近后期])(\p{Han}{2,4}?)(?:也|都|已经|早就)?不(?:再)?(?:打|踢|练|弹|玩|跳|游|骑|跑|下|画|唱|学)了`)
	// quitZH is a habit of a substance given up: "戒烟三个月了", "戒酒了".
	quitZH    = regexp.MustCompile(`戒(烟|酒)`)
	anymoreEN = regexp.MustCompile(`(?i)\b(?:any\s?more|any\s+longer|no\s+longer)\b`)
	// habitStuff are the things a habit of drinking or smoking is told by.
	habitStuff = map[string]*regexp.Regexp{
		"drinking": regexp.MustCompile(`(?i)\b(?:drink(?:s|ing)?|beers?|ipas?|ales?|lagers?|stouts?|wines?|cocktails?|whiske?y|bourbon|vodka|gin|tequila|rum|pints?|pubs?|bars?|brewer(?:y|ies)|booze)\b|酒`),
		"smoking":  regexp.MustCompile(`(?i)\b(?:smok(?:e|es|ing)|cigarettes?|cigars?|pack\s+a\s+day)\b|烟`),
		"vaping":   regexp.MustCompile(`(?i)\b(?:vap(?:e|es|ing)|e-?cig(?:arette)?s?|juul)\b`),
		"烟":        regexp.MustCompile(`烟|smok`),
		"酒":        regexp.MustCompile(`酒|drink`),
	}
	restrictZH = regexp.MustCompile(`(?:不能|不可以|不能再|不可再|不再|别再|不许|没法|戒了?|忌)(?:吃|喝|碰)([^了的\P{Han}]\p{Han}{0,3}?)(?:了|的|东西|食物|饮料|[，。,.!！；;]|$)|对(\p{Han}{1,4}?)(?:严重|有点|有些)?过敏`)
	// The object told before the verb ("甜的一口都不能碰了") or as an allergy ("a shellfish
	// allergy", "花生过敏").
	restrictTopicZH = regexp.MustCompile(`(\p{Han}{1,4})的?(?:东西|食物)?(?:一口|一点|一滴)?(?:都|也)?(?:不能|不可以|不敢|不许)(?:再)?(?:吃|碰|喝)`)
	// "no pistachios or pistachio ice cream for us from now on": the end of a thing, told without a verb.
	restrictNoEN      = regexp.MustCompile(`(?i)\bno\s+((?:[a-z][a-z-]*\s+){0,2}?[a-z][a-z-]*)\s+(?:(?:or|and)\s+(?:[a-z][a-z-]*\s+){0,3}?)?(?:for\s+(?:me|us|them|him|her)\s+)?(?:anymore|any more|from now on|ever again)\b`)
	restrictAllergyTo = regexp.MustCompile(`(?i)\b(?:allergy|intolerance|allergic reaction)\s+to\s+([a-z-]+)`)
	restrictAllergyEN = regexp.MustCompile(`(?i)\b(?:an?\s+)?((?:[a-z-]+\s+)?[a-z-]+)\s+(?:allergy|intolerance)\b`)
	restrictLeadZH    = []string{"用户", "医生说", "以后", "今后", "现在", "从此", "从今往后", "说", "后", "再"}
	// restrictStop are words the English pattern can take for the object that are not one.
	restrictStop = map[string]bool{"anymore": true, "any": true, "more": true, "it": true, "that": true, "this": true, "them": true, "now": true, "food": true, "foods": true, "things": true, "stuff": true, "because": true, "since": true, "for": true, "last": true, "next": true, "every": true, "in": true, "on": true, "at": true, "after": true, "ago": true, "today": true, "these": true, "days": true, "lately": true, "either": true, "again": true, "the": true, "a": true, "an": true, "my": true, "much": true,
		"completely": true, "totally": true, "entirely": true, "altogether": true, "they": true, "all": true, "really": true}
)

// stoppedTopic is the activity of notDoTopicZH without the subject the match may start
// with ("用户网球" is 网球).
func stoppedTopic(t string) string {
	for _, p := range []string{"用户", "我", "现在", "最近"} {
		t = strings.TrimPrefix(t, p)
	}
	return t
}

// restricted is the thing a restriction candidate names (a word for English, the
// characters for Chinese), or "" when it names none.
func restricted(content string) string {
	// Each language's patterns need a letter of its script to match, so a text without
	// one skips them (reading a restriction was a tenth of the resolver's Go time, run
	// for every candidate of a preference or constraint); the order among those that
	// run is unchanged.
	zh, en := hasHan(content), hasASCIILetter(content)
	// A sport or habit ruled out ("医生说半年别跑了", "can't go running anymore") ends
	// the habit of it as a food restriction ends a liking.
	if m := find(zh, restrictDoZH, content); m != nil {
		return m[1]
	}
	if m := find(en, restrictDoEN, content); m != nil {
		return strings.ToLower(m[1])
	}
	if m := find(zh, quitZH, content); m != nil {
		return m[1]
	}
	if m := find(en, notAnymoreDoEN, content); m != nil && anymoreEN.MatchString(content) {
		// no object after the verb: the activity itself, not a thing to eat or drink
		return strings.ToLower(m[1])
	}
	if m := find(zh, notDoZH, content); m != nil {
		return strings.TrimSuffix(m[1], "步") // "跑步": a habit told as "跑十公里" too
	}
	if m := find(zh, notDoTopicZH, content); m != nil {
		return stoppedTopic(m[1])
	}
	if m := find(zh, restrictZH, content); m != nil {
		if m[1] != "" {
			return m[1]
		}
		return m[2]
	}
	if m := find(zh, restrictTopicZH, content); m != nil {
		v := m[1]
		for trimmed := true; trimmed; {
			trimmed = false
			for _, lead := range restrictLeadZH {
				if strings.HasPrefix(v, lead) && len(v) > len(lead) {
					v, trimmed = v[len(lead):], true
				}
			}
		}
		// "海鲜和虾蟹都不能吃了": the pattern reaches back into a list; its last thing is
		// whole.
		for _, and := range []string{"和", "与", "跟", "及", "、"} {
			if i := strings.LastIndex(v, and); i >= 0 && i+len(and) < len(v) {
				v = v[i+len(and):]
			}
		}
		return v
	}
	if !en {
		return ""
	}
	m := restrictEN.FindStringSubmatch(content)
	if m == nil {
		m = restrictNoEN.FindStringSubmatch(content)
	}
	if m == nil {
		a := restrictAllergyTo.FindStringSubmatch(content)
		if a == nil {
			a = restrictAllergyEN.FindStringSubmatch(content)
		}
		if a != nil {
			words := strings.Fields(strings.ToLower(a[1]))
			if head := words[len(words)-1]; !restrictStop[head] && head != "food" && head != "severe" && head != "mild" {
				return head
			}
		}
		return ""
	}
	// The head of the object: its last word before a stop word ("raw fish anymore").
	head := ""
	for _, w := range strings.Fields(strings.ToLower(m[1])) {
		if restrictStop[w] {
			break
		}
		head = w
	}
	return head
}

// find is re.FindStringSubmatch(s) when may is true, nil otherwise.
func find(may bool, re *regexp.Regexp, s string) []string {
	if !may {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// hasASCIILetter reports whether s holds a letter a–z or A–Z: every English pattern
// needs one (their words are not all k and s, the letters case folding lets other
// runes match).
func hasASCIILetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// restrictionRulesOut reports that c, a believed restriction on eating or drinking a
// thing, rules out m, a liking that names that thing: "loves spicy hotpot" once the
// user "can't eat spicy food anymore".
func restrictionRulesOut(c memory.Candidate, m memory.Memory) bool {
	return newRuling(c).restriction(m)
}

// ruling is what a candidate may rule out, read from it once: its patterns are the
// costly part, and it is checked against every neighbour.
type ruling struct {
	c memory.Candidate
	// what a constraint or preference restricts (restricted), "" for none. The key is
	// not required: what the extractor keyed a restriction by varies with its wording,
	// what it restricts does not.
	what string
	// parted names the speaker's own thing they sold or gave away ("my old van", "this
	// van", "has a cabin", "the Hillside Tennis Club"), nil for none.
	parted *regexp.Regexp
	// departed are the names of the people or things the candidate says left the
	// speaker's life (the extractor's "departed" metadata): Latin names as whole words
	// with their capitals, Han names as they are written.
	departed []*regexp.Regexp
	// instead is the verb of a habit the candidate gave up for another ("cycling to
	// work instead of driving"), its forms as a pattern; nil for none.
	instead *regexp.Regexp
	// warmedTo is what the candidate now likes after avoiding it ("came around on
	// cilantro", "香菜其实也挺香的"), "" for none.
	warmedTo string
	// healed is the part of the body the candidate says has recovered ("my knee is
	// fully healed", "腰已经好了"), as a pattern; nil for none.
	healed *regexp.Regexp
	// aged are the names whose new age the candidate tells ("Mira turned 8"), as
	// patterns.
	aged []*regexp.Regexp
	// activity is the sport or instrument the candidate says the speaker changed to ("switched to
	// swimming", 改成打羽毛球了), "" for none.
	activity string
}

func newRuling(c memory.Candidate) ruling {
	r := ruling{c: c}
	if p, _ := c.Metadata["parted_with"].(string); p != "" {
		q := regexp.QuoteMeta(p)
		r.parted = regexp.MustCompile(`(?i:\b(?:my|this|that|our|their|the user's|his|her)\s+(?:old\s+|new\s+)?` + q + `s?)\b` +
			// had as one's own, or a named one of its kind
			`|(?i:\b(?:has|have|owns?|keeps?)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}` + q + `s?)\b|\b(?:\p{Lu}[\p{Ll}'-]+\s+){1,3}(?i:` + q + `)\b`)
	}
	for _, n := range departedNames(c) {
		// As written, capital and all: "Will retired" is not about what the user will do.
		r.departed = append(r.departed, wordPattern(n, ""))
	}
	if c.Category == memory.CatConstraint || c.Category == memory.CatPreference {
		r.what = restricted(c.Content)
	} else if c.Category == memory.CatEvent && c.Source == memory.SourceUser {
		// "用户如今不打球了，…" told as news: an activity the speaker stopped ends its habit
		// as a rule about it does. Only a stop of an activity, not a food told in passing.
		if m := notDoZH.FindStringSubmatch(c.Content); m != nil {
			r.what = strings.TrimSuffix(m[1], "步")
		} else if m := notDoTopicZH.FindStringSubmatch(c.Content); m != nil {
			r.what = stoppedTopic(m[1])
		} else if m := notAnymoreDoEN.FindStringSubmatch(c.Content); m != nil && anymoreEN.MatchString(c.Content) {
			r.what = strings.ToLower(m[1])
		}
	}
	if m := insteadOfEN.FindStringSubmatch(c.Content); m != nil {
		r.instead = verbForms(strings.ToLower(m[1] + m[2])) // "… instead of driving", "swapped fishing for …"
	}
	for _, n := range metaNames(c, "aged") {
		r.aged = append(r.aged, wordPattern(n, ""))
	}
	if loc := quitThenCue.FindStringIndex(c.Content); loc != nil && c.Source == memory.SourceUser && nowCue.MatchString(c.Content[loc[1]:]) {
		// "gave up rugby, she fences now": the activity after the stop is the new one.
		if sp := activityPattern.FindString(c.Content[loc[1]:]); sp != "" {
			r.activity = activityOf(sp)
		}
	} else if loc := activityChangeCue.FindStringIndex(c.Content); loc != nil && c.Source == memory.SourceUser {
		from := loc[0]
		if strings.Contains(strings.ToLower(c.Content[loc[0]:loc[1]]), "from") {
			if i := strings.Index(c.Content[loc[1]:], " to "); i >= 0 {
				from = loc[1] + i // "switched from piano to drums": the new one is after "to"
			}
		}
		if sp := activityPattern.FindString(c.Content[from:]); sp != "" {
			r.activity = activityOf(sp)
		}
	}
	r.warmedTo = warmedTo(c.Content)
	if m := healedEN.FindStringSubmatch(c.Content); m != nil {
		r.healed = wordPattern(m[1], "(?i)")
	} else if m := healedZH.FindStringSubmatch(c.Content); m != nil {
		r.healed = wordPattern(m[1], "")
	}
	return r
}

// wordPattern matches word w, with flags: a Latin word whole, Han characters as written.
func wordPattern(w, flags string) *regexp.Regexp {
	if hasHan(w) {
		return regexp.MustCompile(flags + regexp.QuoteMeta(w))
	}
	return regexp.MustCompile(flags + `\b` + regexp.QuoteMeta(w) + `\b`)
}

// bodyPartEN and bodyPartZH name the parts of the body an injury and its recovery are
// told of.
const (
	bodyPartEN = `back|knees?|ankles?|wrists?|shoulders?|neck|hips?|foot|feet|legs?|arms?|elbows?|hands?|hamstrings?|achilles|spine|toes?|fingers?|ribs?`
	bodyPartZH = `腰椎|颈椎|膝盖|脚踝|手腕|肩膀|脖子|腰|胃|背|腿|脚|膝|踝|肩`
)

var (
	healedEN    = regexp.MustCompile(`(?i)\b(` + bodyPartEN + `)\s+(?:is|are|has|have|'s)\s+(?:now\s+|fully\s+|completely\s+|finally\s+|all\s+|totally\s+)*(?:healed|recovered|better|fine|fixed|back\s+to\s+normal)\b`)
	healedZH    = regexp.MustCompile(`(` + bodyPartZH + `)(?:伤|的伤)?(?:已经|都|也)?(?:完全|彻底|基本)?(?:好了|恢复了|痊愈了|没事了|养好了)`)
	injuryWords = regexp.MustCompile(`(?i)\b(?:injur\w*|hurt\w*|sprain\w*|strain\w*|wreck\w*|broken|break|pain\w*|sore|bad|surgery|recovering|no\s+(?:lifting|running|jumping))\b|伤|扭|疼|痛|别|不能|不要|手术`)
)

// insteadOfEN is a habit given up for another: "… instead of driving".
var insteadOfEN = regexp.MustCompile(`(?i)\binstead\s+of\s+([a-z]{3,}ing)\b|\b(?:swapped|traded|exchanged|ditched)\s+([a-z]{3,}ing)\s+(?:for|with)\b`)

// verbForms matches the forms of the verb of an -ing word ("driving": drive, drives,
// drove is not guessed).
func verbForms(ing string) *regexp.Regexp {
	stem := strings.TrimSuffix(ing, "ing")
	if n := len(stem); n >= 3 && stem[n-1] == stem[n-2] && !strings.ContainsRune("aeiouls", rune(stem[n-1])) {
		stem = stem[:n-1] // "running" → "run"
	}
	return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(stem) + `(?:e|es|ed|ing|s|d)?\b`)
}

// warmedTo is the thing content says the speaker now likes after avoiding it.
func warmedTo(content string) string {
	if m := warmedEN.FindStringSubmatch(content); m != nil {
		return strings.ToLower(m[1] + m[2])
	}
	if m := warmedZH.FindStringSubmatch(content); m != nil {
		w := m[1] + m[2]
		for _, lead := range []string{"觉得", "发现", "感觉", "说", "我", "用户"} {
			if rest, ok := strings.CutPrefix(w, lead); ok && rest != "" {
				w = rest // "…说榴莲其实也挺香": the verb before the thing is not it
			}
		}
		return w
	}
	return ""
}

var (
	warmedEN = regexp.MustCompile(`(?i)\b(?:come|came|coming)\s+(?:a)?round\s+(?:on|to)\s+([a-z][a-z-]+)|\b([a-z][a-z-]+)\s+is\s+back\s+on\s+(?:the\s+menu|the\s+table|my\s+list)\b`)
	warmedZH = regexp.MustCompile(`(\p{Han}{1,3}?)(?:其实)?(?:也|现在也)(?:挺|很|还挺|蛮)(?:香|好吃|好喝|不错)|(?:不用|不必)(?:再)?(?:备注)?(?:不要|不放|别放)(\p{Han}{1,3}?)(?:了|[，。,.!！；;]|$)`)
	// avoidance is a memory of not wanting a thing: "never put X in", "不吃X".
	avoidance = regexp.MustCompile(`(?i)\b(?:never|no|don't|do not|doesn't|hates?|can't stand|dislikes?|avoids?|not a fan of)\b|不吃|不要|不喝|讨厌|别放|不放|受不了`)
)

// departedNames are the names in c's "departed" metadata (the extractor's, "|" between
// them), each of two runes or more.
func departedNames(c memory.Candidate) []string {
	return metaNames(c, "departed")
}

// metaNames are the names in c's metadata field f ("|" between them), each of two
// runes or more.
func metaNames(c memory.Candidate, f string) []string {
	d, _ := c.Metadata[f].(string)
	var out []string
	for _, n := range strings.Split(d, "|") {
		if n = strings.TrimSpace(n); utf8.RuneCountInString(n) >= 2 {
			out = append(out, n)
		}
	}
	return out
}

// departedFrom reports m, told before the candidate, naming someone or something the
// candidate says left ("Gary does the user's taxes", once "Gary retired"; 小新 once
// "小新送人了"): what it said held while they were there. Events too: "the ThinkPad's fan
// screams" describes a machine the speaker no longer has.
func (r ruling) departedFrom(m memory.Memory) bool {
	if len(r.departed) == 0 || r.c.ValidFrom.IsZero() || !m.ValidFrom.Before(r.c.ValidFrom) {
		return false
	}
	for _, re := range r.departed {
		if loc := re.FindStringIndex(m.Content); loc != nil && !toldLeaving.MatchString(m.Content[loc[1]:]) {
			return true
		}
	}
	return false
}

// toldLeaving is the departure told right after a name: a memory that itself says the
// person left ("Gerald retired from the fire department") is that news, not stale.
var toldLeaving = regexp.MustCompile(`^(?:\S*\s+){0,3}?(?:retired|resigned|quit|left|moved on|moved away|passed away|is gone|'s gone|was fired|got fired|laid off|let go|transferred|replaced)\b|^\p{Han}{0,6}(?:退休|离职|辞职|调走|走人|去世|送人|送给|卖了|卖掉|转手|转给|捐|退掉|处理掉)`)

// rulesOut reports that the candidate, once believed, retires m: a diet or a
// restriction excluding what m likes, a thing the speaker parted with, or someone or
// something named that left.
func (r ruling) rulesOut(m memory.Memory) bool {
	return dietRulesOut(r.c, m) || r.restriction(m) || r.partedWith(m) || r.departedFrom(m) || r.gaveUpFor(m) || r.warmedUp(m) || r.recoveredFrom(m) || r.agedOut(m) || r.switchedActivity(m)
}

// What a speaker does is often one of a few sports or instruments, and a change to another ("改成打羽毛球了",
// "switched to swimming") ends the habit of the one before, which the change need not
// name. activityPattern names them, activityChangeCue the change; activityOf folds an activity's forms
// into one name.
var (
	activityPattern   = regexp.MustCompile(`(?i)\b(?:piano|guitar|violin|cello|drums|flute|saxophone|sax|trumpet|ukulele|clarinet|bass)\b|钢琴|吉他|小提琴|大提琴|架子鼓|长笛|萨克斯|小号|尤克里里|古筝|二胡|琵琶|\b(?:run|runs|running|ran|jog|jogs|jogging|swim|swims|swimming|cycle|cycles|cycling|bike|bikes|biking|lift|lifts|lifting|weightlifting|yoga|pilates|climb|climbs|climbing|bouldering|hike|hikes|hiking|rowing|boxing|spin|spinning|crossfit|tennis|squash|badminton|basketball|soccer|football|rugby|cricket|hockey|volleyball|baseball|netball|fencing|fences|taekwondo|gymnastics|surfing|sailing|archery|golf|skiing|skating|dancing|karate|judo|tai chi)\b|跑步|慢跑|夜跑|晨跑|游泳|骑车|骑行|健身|撸铁|举铁|瑜伽|普拉提|攀岩|徒步|爬山|划船|拳击|动感单车|网球|羽毛球|乒乓球|篮球|足球|排球|跆拳道|击剑|柔道|空手道|高尔夫|滑雪|滑冰|跳舞|跳绳|太极`)
	activityChangeCue = regexp.MustCompile(`(?i)改成|换成|改为|改去|改练|改打|改跑|改学|改弹|\bswitched\s+from\b|\bswitched\s+(?:over\s+)?to\b|\bchanged\s+to\b|\bmoved\s+(?:over\s+)?to\b|\btook\s+up\b|\bstarted\b[^.;]*\binstead\b|\binstead\b`)
)

// quitThenCue is a stop of an activity and the clause after it; nowCue marks that clause
// as what is done now ("gave up rugby, she fences now", "不踢球了，现在练跆拳道").
var (
	quitThenCue = regexp.MustCompile(`(?i)\b(?:quit|dropped|gave\s+up|stopped)\b[^.;。；]*?[,，;；]\s*|(?:不练|不学|不打|不踢|不弹|不跑)了?[,，;；]\s*`)
	nowCue      = regexp.MustCompile(`(?i)\b(?:now|instead|these days)\b|现在|改|换成`)
)

// instrument are the activities that are instruments (activityOf's names); the others are
// sports. A switch ends an activity of its own kind only.
var instrument = map[string]bool{"piano": true, "guitar": true, "violin": true, "cello": true, "drums": true, "flute": true,
	"saxophone": true, "trumpet": true, "ukulele": true, "clarinet": true, "bass": true, "古筝": true, "二胡": true, "琵琶": true}

// activityOf is the name of activity word w: its forms, and both languages, as one.
func activityOf(w string) string {
	w = strings.ToLower(w)
	for _, g := range [][]string{
		{"run", "runs", "running", "ran", "jog", "jogs", "jogging", "跑步", "慢跑", "夜跑", "晨跑"},
		{"swim", "swims", "swimming", "游泳"},
		{"cycle", "cycles", "cycling", "bike", "bikes", "biking", "spin", "spinning", "骑车", "骑行", "动感单车"},
		{"lift", "lifts", "lifting", "weightlifting", "健身", "撸铁", "举铁", "crossfit"},
		{"climb", "climbs", "climbing", "bouldering", "攀岩"},
		{"hike", "hikes", "hiking", "徒步", "爬山"},
		{"yoga", "瑜伽"}, {"pilates", "普拉提"}, {"rowing", "划船"}, {"boxing", "拳击"}, {"tennis", "网球"},
		{"badminton", "羽毛球"}, {"basketball", "篮球"}, {"soccer", "football", "足球"}, {"volleyball", "排球"}, {"taekwondo", "跆拳道"},
		{"fencing", "fences", "击剑"}, {"judo", "柔道"}, {"karate", "空手道"}, {"golf", "高尔夫"}, {"skiing", "滑雪"},
		{"skating", "滑冰"}, {"dancing", "跳舞"}, {"tai chi", "太极"},
		{"piano", "钢琴"}, {"guitar", "吉他"}, {"violin", "小提琴"}, {"cello", "大提琴"}, {"drums", "架子鼓"}, {"flute", "长笛"},
		{"saxophone", "sax", "萨克斯"}, {"trumpet", "小号"}, {"ukulele", "尤克里里"}, {"clarinet"}, {"bass"}, {"古筝"}, {"二胡"}, {"琵琶"},
	} {
		if slices.Contains(g, w) {
			return g[0]
		}
	}
	return w
}

// switchedActivity reports m, an earlier standing memory of doing another activity, once
// the candidate says the speaker changed to its activity ("每天早上跑步", once "改成打羽毛球了").
func (r ruling) switchedActivity(m memory.Memory) bool {
	if r.activity == "" || m.Type != memory.Semantic || r.c.ValidFrom.IsZero() || !m.ValidFrom.Before(r.c.ValidFrom) {
		return false
	}
	if m.Category != memory.CatPreference && m.Category != memory.CatFact && m.Category != memory.CatRelationship && !strings.HasPrefix(m.Key, "habit.") {
		return false // a relation's lessons are the relation's standing fact
	}
	if whoseOf(r.c.Content) != whoseOf(m.Content) {
		return false // the son's lessons are not the speaker's
	}
	other := false
	for _, w := range activityPattern.FindAllString(m.Content, -1) {
		if instrument[activityOf(w)] != instrument[r.activity] {
			continue // taking up the guitar ends no run, nor the reverse
		}
		if activityOf(w) == r.activity {
			return false // the new activity's own memory, or one of both
		}
		other = true
	}
	return other && !watchingSport.MatchString(m.Content)
}

// whoseOf is the relation a memory is told of ("the user's son …", "用户的女儿…"), "" for
// the speaker.
func whoseOf(content string) string {
	if m := whoseRel.FindStringSubmatch(content); m != nil {
		return strings.ToLower(m[1] + m[2])
	}
	return ""
}

var whoseRel = regexp.MustCompile(`(?i)\bthe user's\s+(?:older\s+|younger\s+|little\s+)?(son|daughter|kids?|child|children|wife|husband|partner|spouse|mom|mother|mum|dad|father|brother|sister|girlfriend|boyfriend|friend)\b|用户的?(儿子|女儿|孩子|老公|老婆|妻子|丈夫|对象|爸爸|妈妈|爸|妈|哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|闺女)`)

// watchingSport is a sport followed, not done: "loves watching tennis", 看球.
var watchingSport = regexp.MustCompile(`(?i)\b(?:watch|watches|watching|fan\s+of|follows?)\b|看\p{Han}{0,4}(?:比赛|球)|球迷`)

// ageTold is an age stated in a memory: "is 7", "turned seven", "7 years old", "7岁".
var ageTold = regexp.MustCompile(`(?i)\b(?:is|'s|turned|turns|turning|now)\s+(?:now\s+|only\s+|almost\s+)?(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b|\b\d{1,3}\s*(?:years?|yrs?)\s+old\b|\d{1,3}岁`)

// agedOut reports m, told before the candidate, stating the age of someone whose new
// age the candidate tells ("Mira is 7", once "Mira turned 8").
func (r ruling) agedOut(m memory.Memory) bool {
	if len(r.aged) == 0 || r.c.ValidFrom.IsZero() || !m.ValidFrom.Before(r.c.ValidFrom) || !ageTold.MatchString(m.Content) {
		return false
	}
	for _, re := range r.aged {
		if re.MatchString(m.Content) {
			return true
		}
	}
	return false
}

// recoveredFrom reports m, an earlier standing memory of an injury of the part of the
// body the candidate says has healed, or of what it ruled out ("no lifting with this
// back", once "my back is fully healed").
func (r ruling) recoveredFrom(m memory.Memory) bool {
	if r.healed == nil || m.Type == memory.Episodic || r.c.ValidFrom.IsZero() || !m.ValidFrom.Before(r.c.ValidFrom) {
		return false
	}
	if healedEN.MatchString(m.Content) || healedZH.MatchString(m.Content) {
		return false
	}
	return r.healed.MatchString(m.Content) && injuryWords.MatchString(m.Content)
}

// gaveUpFor reports m, an earlier standing memory of the habit the candidate gave up for
// another ("drives to the office every day", once "cycling to work instead of driving").
func (r ruling) gaveUpFor(m memory.Memory) bool {
	return r.instead != nil && m.Type == memory.Semantic && !r.c.ValidFrom.IsZero() &&
		m.ValidFrom.Before(r.c.ValidFrom) && r.instead.MatchString(m.Content) && !insteadOfEN.MatchString(m.Content)
}

// warmedUp reports m, an earlier avoidance of the thing the candidate now likes ("never
// put cilantro in", once the user "came around on cilantro").
func (r ruling) warmedUp(m memory.Memory) bool {
	if r.warmedTo == "" || r.c.ValidFrom.IsZero() || !m.ValidFrom.Before(r.c.ValidFrom) || warmedTo(m.Content) != "" {
		return false
	}
	return strings.Contains(strings.ToLower(m.Content), r.warmedTo) && avoidance.MatchString(m.Content)
}

// partedWith reports m, told before the candidate, speaking of the speaker's own thing the
// candidate says they parted with ("hates this van", once "sold my old van"): it
// described something they no longer have.
func (r ruling) partedWith(m memory.Memory) bool {
	return r.parted != nil && !r.c.ValidFrom.IsZero() && m.ValidFrom.Before(r.c.ValidFrom) && r.parted.MatchString(m.Content)
}

func (r ruling) restriction(m memory.Memory) bool {
	what := r.what
	if what == "" || !likingOf(m) && !habitOf(m) || sameLiking(r.c, m) {
		return false
	}
	content := strings.ToLower(m.Content)
	if stuff := habitStuff[what]; stuff != nil {
		// "stopped drinking": the habit is told by what is drunk ("a couple of IPAs").
		return stuff.MatchString(m.Content)
	}
	if hasHan(what) {
		return strings.Contains(content, what)
	}
	for _, w := range wordsOf(content) {
		if w == what || w == what+"s" || w+"s" == what || w == what+"es" {
			return true
		}
	}
	return false
}

// sameLiking reports c restating m's own liking (not a restriction of it): a candidate
// that is itself a liking of the thing.
func sameLiking(c memory.Candidate, m memory.Memory) bool {
	return c.Key != "" && c.Key == m.Key && !restrictEN.MatchString(c.Content) && restrictZH.FindString(c.Content) == ""
}

// foodKey reports the keys of eating and drinking.
func foodKey(k string) bool {
	return strings.HasPrefix(k, "food.") || strings.HasPrefix(k, "taste.") || strings.HasPrefix(k, "drink.")
}

// likingOf reports a memory of liking something to eat or drink.
// A liking may be told with a demand beside it ("loves it so much the hot one is a must")
// and be filed as a constraint: its verb says what it is.
func likingOf(m memory.Memory) bool {
	if m.Category == memory.CatPreference && (tasteSlot(m.Key) || strings.HasPrefix(m.Key, "drink.") || strings.HasPrefix(m.Key, "food.")) {
		return true
	}
	return (m.Category == memory.CatPreference || m.Category == memory.CatConstraint || m.Category == memory.CatFact) &&
		likeWords.MatchString(m.Content) && !restrictEN.MatchString(m.Content) && restrictZH.FindString(m.Content) == ""
}

// habitOf reports a memory of something done as a rule ("a bowl of porridge every
// night", "每晚吃两块黑巧克力"): a giving-up of its thing ends the habit too.
func habitOf(m memory.Memory) bool {
	return habitWords.MatchString(m.Content) && !restrictEN.MatchString(m.Content) && restrictZH.FindString(m.Content) == ""
}

var habitWords = regexp.MustCompile(`(?i)\b(?:every|each)\s+(?:morning|day|night|evening|week|weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:nights|mornings|evenings)\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\balways\s+(?:has|have|had|gets?|drinks?|orders?|smokes?)\b|\b(?:daily|nightly|ritual|routine)\b|每天|天天|每晚|每周|每个周末|每次|雷打(?:不|都不)动`)

var likeWords = regexp.MustCompile(`(?i)\b(?:love[sd]?|adores?|adored|likes?|liked|enjoys?|enjoyed|favou?rites?|fan of|craves?|obsessed with|addicted to|swears? by|go-to|(?:always|usually)\s+(?:goes|go|went|picks?|books?|orders?)\s+for)\b|爱吃|爱喝|喜欢|最爱|超爱|无\p{Han}不欢|嗜`)

func wordsOf(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
}

// correctsID reports c, a correction giving the right identifier, of memory m holding
// one of its shape: every memory that copied the wrong number is wrong.
func correctsID(c memory.Candidate, m memory.Memory) bool {
	_, ok := correctedID(c, m.Content)
	return ok
}

// correctedID is content with the identifiers of the right one's shape (the wrong copies
// correction c names) replaced by the right one; ok is false when content holds none.
func correctedID(c memory.Candidate, content string) (string, bool) {
	right, _ := c.Metadata["corrects_like"].(string)
	if right == "" {
		return content, false
	}
	ok := false
	for _, w := range idTokens(content) {
		if w != right && sameShapeID(w, right) {
			content, ok = strings.ReplaceAll(content, w, right), true
		}
	}
	return content, ok
}

// relatedPrefixes are the key prefixes whose memories c may rule out beyond its own slot.
func relatedPrefixes(c memory.Candidate) []string {
	switch {
	case relationDiet(c.Key) != "":
		return []string{relationDiet(c.Key) + "taste.", relationDiet(c.Key) + "food."}
	case c.Key == "food.diet":
		return []string{"taste.", "food.cuisine.", "food.ingredient."}
	case (c.Category == memory.CatConstraint || c.Category == memory.CatPreference) && restricted(c.Content) != "":
		return []string{"taste.", "food.", "drink.", "habit."}
	case thingOf(c.Key) != "":
		// The other families' keys about the same thing (sameSlot picks them out).
		return thingFamilies
	case c.Key == "pet.food":
		return []string{"pet."}
	case petFoodSlot(c.Key):
		return []string{"pet.food"}
	case strings.HasPrefix(c.Key, "relation.") && strings.Count(c.Key, ".") == 2 && !strings.HasSuffix(c.Key, ".name"):
		// The same thing told of someone by name (person.<name>.<what>; meets picks them).
		return []string{"person."}
	case strings.HasPrefix(c.Key, "plan."):
		// plan.<kind> or plan.<kind>.<which>: the plans of its kind.
		parts := strings.SplitN(c.Key, ".", 3)
		return []string{"plan." + parts[1]}
	}
	return nil
}

// What a revision revises: "晨会改成线上" revises 晨会, "switched the build cache to S3"
// the build cache, "switched from Jira to Linear" Jira.
var (
	reviseZH = regexp.MustCompile(`(\p{Han}{2,8}?)(?:改成|换成|改为|换到|改用)`)
	reviseEN = regexp.MustCompile(`(?i)\b(?:switched|changed|moved)\s+(?:over\s+)?(?:from\s+)?(?:the\s+|my\s+|our\s+)?([a-z][\w.-]*(?:\s+[a-z][\w.-]*){0,2}?)\s+(?:over\s+)?to\b`)
	// reviseLead are words before the thing revised that are not part of it.
	reviseLead = strings.NewReplacer("用户", "", "偏好", "", "希望", "", "以后", "", "今后", "", "现在", "", "已经", "", "要求", "", "表示", "")
)

// revisedThing is the thing a revision changes, or "" when content states none.
func revisedThing(content string) string {
	if m := reviseZH.FindStringSubmatch(content); m != nil {
		rs := []rune(reviseLead.Replace(m[1]))
		if len(rs) < 2 {
			return ""
		}
		return string(rs[len(rs)-2:])
	}
	if m := reviseEN.FindStringSubmatch(content); m != nil {
		w := strings.ToLower(m[1])
		switch w {
		case "it", "this", "that", "them", "back", "jobs", "careers", "teams":
			return ""
		}
		return w
	}
	return ""
}

// revises reports a revision c of the thing memory m is about: the thing c changes is
// named in m.
func revises(cf textFeatures, c memory.Candidate, m memory.Memory) bool {
	if !cf.change {
		return false
	}
	old := strings.ToLower(m.Content)
	if v := reviseVerbZH.FindStringSubmatch(c.Content); v != nil {
		// "改喝普洱" revises what the speaker drank: a memory with the verb and the kind
		// the new object is (its last character: 茶, 车, 鞋 …).
		obj := []rune(v[2])
		return strings.Contains(old, v[1]) && strings.Contains(old, string(obj[len(obj)-1]))
	}
	if v := switchedToEN.FindStringSubmatch(c.Content); v != nil {
		// "switched over to history podcasts": the new value's kind (its head noun) is
		// the thing revised.
		head := strings.TrimSuffix(strings.ToLower(v[1]), "s")
		if len(head) > 3 {
			for _, w := range wordsOf(old) {
				if strings.TrimSuffix(w, "s") == head {
					return true
				}
			}
		}
	}
	thing := revisedThing(c.Content)
	return thing != "" && strings.Contains(old, thing)
}

var (
	reviseVerbZH = regexp.MustCompile(`改(喝|吃|坐|骑|开|听|看|玩|住|穿|戴|用)(\p{Han}{2,6}?)(?:了|，|。|,|$)`)
	switchedToEN = regexp.MustCompile(`(?i)\b(?:switched|switching|moved|changed)\s+(?:over\s+)?to\s+(?:(?:a|an|the|some|more)\s+)?(?:[a-z][\w-]*\s+){0,2}?([a-z][\w-]*)(?:\s*[,.;!]|\s+(?:and|but|mostly|instead|now|because|since|which)\b|$)`)
)
