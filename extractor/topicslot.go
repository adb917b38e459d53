package extractor

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Many things a user keeps telling have no slot of their own: "our choir practice meets
// on Thursdays", "my budget for the wedding is 15k", "I keep my pension with Aviva",
// "婚礼预算二十万以内". When they change ("choir practice is on Mondays now", "moved my
// pension over to Vanguard", "婚礼预算涨到二十五万了") the new memory must meet the old one. The
// sentence's grammar names what it is about — the noun phrase it holds a value of — and
// that phrase, normalised, is the slot (user.attr.<topic>): a later value of the same
// topic supersedes the earlier one, whatever else the two sentences say.

type topicRules struct {
	possessedEN, changedEN, movedEN, keptEN, boughtEN, kindEN, goToEN, memberEN *regexp.Regexp
	changedZH, scheduleZH, amountZH, shiftZH, possessedZH, planTierEN           *regexp.Regexp
	shiftEN, raisedEN, bankWithEN, upgradedEN, landlordZH                       *regexp.Regexp
}

const npEN = `([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}(?:\s+(?:for|of)\s+(?:the\s+|my\s+|our\s+)?[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)?)`

func newTopicRules() *topicRules {
	re := regexp.MustCompile
	return &topicRules{
		// "My regular pharmacy is the one on Elm Street", "our rent is …"
		possessedEN: re(`(?i)^(?:(?:actually|so|and|but|oh|now|also)\s*,?\s+)*(?:my|our)\s+` + npEN + `\s+(?:is|are|'s|has been|have been|went up to|went down to|rose to|dropped to|increased to|got moved to|moved to|changed to|meets|starts|runs|costs)\b`),
		// "Choir practice is on Mondays now", "The budget for the trip went up to 3k"
		changedEN: re(`(?i)^(?:(?:actually|so|and|but|oh|also)\s*,?\s+)*(?:the\s+)?` + npEN + `\s+(?:(?:is|are)\s+(?:now\s+)?[^.!?]*\b(?:now|instead|this\s+time)\b|(?:is|are)\s+now\b|(?:got|was|is|has\s+been|'s\s+been)\s+(?:cancell?ed|postponed|called\s+off|pushed(?:\s+back)?|moved|rescheduled|delayed|bumped|shortened|extended)|went up to|went down to|rose to|dropped to|got bumped to|was bumped to|got moved to|has moved to|moved to|changed to|has changed to|now meets|now starts|meets|starts)`),
		// "switched my tea order to …", "moved all my pension over to …"
		movedEN: re(`(?i)\b(?:switched|changed|moved|transferred|swapped|updated|upped|raised|lowered|bumped|shifted)\s+(?:all\s+|both\s+)?(?:my|our)\s+` + npEN + `\s+(?:over\s+|across\s+|up\s+|down\s+)?(?:to|from)\b`),
		// "I keep my pension with Aviva"
		keptEN: re(`(?i)\b(?:keep|have|hold|bank|park)\s+(?:all\s+)?(?:my|our)\s+` + npEN + `\s+(?:with|at|in)\s+\p{Lu}`),
		// "We do our weekly shopping at Tesco", "get our vegetables from the market"
		boughtEN: re(`(?i)\b(?:do|get|buy|order)\s+(?:all\s+|most\s+of\s+)?(?:my|our|the)?\s*` + npEN + `\s+(?:at|from)\s+\p{Lu}`),
		// "I work the night shift", "moved me to the day shift"
		kindEN: re(`(?i)\b(?:work|working|worked|on|take|taking|do|doing|switched to|moved to|(?:moved|put|switched|transferred)\s+(?:me|us)\s+(?:to|onto|on))\s+(?:the|a|an)\s+(?:[a-z]+)\s+(shift|rota|tariff|package|subscription|membership|tier|contract)\b`),
		// "These days I go to a bouldering gym"
		goToEN: re(`(?i)\b(?:i|we)\s+(?:(?:now|usually|still|mostly)\s+)?(?:go to|use|train at|belong to|see)\s+(?:a|an|the)\s+(?:[a-z-]+\s+){0,2}?(gym|pool|barber|hairdresser|salon|dentist|therapist|church|mosque|temple|vet|physio|pediatrician|gp)\b`),
		// "I'm on the basic plan", "upgraded to the premium plan"
		planTierEN: re(`(?i)\b(?:on|upgraded\s+to|downgraded\s+to|switched\s+to|moved\s+to|signed\s+up\s+for)\s+(?:the|a|an)\s+[a-z-]+\s+(plan|tier)\b`),
		// "I'm a member at CityGym"
		memberEN: re(`(?i)\bmember\s+(?:at|of)\s+\p{Lu}[\p{L}]*?(gym|club|pool)\b`),
		// "瑜伽课改到周日上午了", "婚礼预算涨到二十五万了"
		changedZH: re(`^(?:我们?(?:的|家)?|咱们?(?:的)?)?(\p{Han}{2,6}?)(?:现在|已经|也|又)?(?:改到|改成|改为|改在|换到|换成|调成|调到|提到|涨到|降到|变成|挪到|推到|推迟|延期|取消|迁移到|迁到|改用|切到|切换到)`),
		// "我们瑜伽课每周四晚上"
		scheduleZH: re(`^(?:我们?(?:的|家)?|咱们?(?:的)?)(\p{Han}{2,5}?)(?:是|在|定在)?(?:每周[一二三四五六日天]|周[一二三四五六日天]|每天|每月)`),
		// "婚礼预算二十万以内", "房租每月四千"
		amountZH: re(`^(?:我们?(?:的|家)?|咱们?(?:的)?)?(\p{Han}{0,4}(?:预算|房租|月租|工资|薪水|月薪|年薪|首付|月供|学费|生活费|房贷|车贷|贷款|话费|物业费|保费))(?:是|在|控制在|大概|大约|每月|一个月)?[一二三四五六七八九十百千万两\d]`),
		// "我家的车是油车", "女儿的舞蹈课在周五晚上": a thing the speaker (or their family)
		// has, and its value.
		possessedZH: re(`^(?:我(?:的|家)|我们(?:的|家)?|咱们?(?:的|家)|我?(?:` + relZH + `)的)(\p{Han}{2,6}?)(?:现在|一般|平时)?(?:是|在|用的是|用)`),
		// "我上白班", "调成夜班了"
		shiftZH: re(`(?:上|调成|换成|改成|调到|换到|改到|转到|调回|改上|转|倒|值)(早|中|晚|夜|白|大夜|小夜)班`),
		// "I work nights", "been on day shifts since May", "pulling overnights now"
		shiftEN: re(`(?i)\b(?:(?:work|works|working|worked|pull|pulling|do|doing)\s+(?:the\s+)?(?:nights|overnights|(?:night|day|late|early|evening|graveyard|swing|morning|overnight)\s+shifts?)|(?:on|back\s+on|switched\s+to|moved\s+to|put\s+on)\s+(?:the\s+)?(?:nights|overnights|(?:night|day|late|early|evening|graveyard|swing|morning|overnight)\s+shifts?|days\s+(?:now|since|again)))\b`),
		// "The landlord raised the rent to …", "they cut my hours to 30": a value of the
		// speaker's that someone else changed.
		raisedEN: re(`(?i)\b(?:raised|increased|upped|bumped|hiked|lowered|cut|reduced|dropped|put\s+up)\s+(?:the|my|our)\s+` + npEN + `\s+(?:up\s+|down\s+)?(?:to|by)\b`),
		// "I bank with Monzo": the bank, whatever the later sentence calls it.
		bankWithEN: re(`(?i)\b(?:i|we)\s+(?:now\s+|still\s+|currently\s+|mostly\s+|mainly\s+)?bank\s+(?:with|at)\s+\p{Lu}`),
		// "upgraded my phone, it's a … now", "replaced my laptop with …"
		upgradedEN: re(`(?i)\b(?:upgraded|replaced|changed|swapped|switched|traded\s+in|got\s+a\s+new)\s+(?:my|our)\s+(?:old\s+)?(phone|cell|cellphone|mobile|laptop|computer|tablet|car|ride|e-?reader)\b`),
		// "房东要涨租": a landlord's rise is the rent's.
		landlordZH: re(`房东(?:又|也|说)?(?:要)?(?:涨价|涨租|加租|加价|涨房租|降价|降租)|(?:涨|降|加)了?房租|房租(?:又)?(?:涨|降)`),
	}
}

// thingSlots are the slots other rules give to a thing the speaker has, by the nouns a
// sentence about changing it calls it: "upgraded my phone" and 手机换成… are about the
// phone the device rules keyed user.device.phone.
var thingSlots = map[string]string{
	"phone": "user.device.phone", "cell": "user.device.phone", "cellphone": "user.device.phone", "mobile": "user.device.phone",
	"mobile phone": "user.device.phone", "smartphone": "user.device.phone", "手机": "user.device.phone",
	"laptop": "user.device.computer", "computer": "user.device.computer", "电脑": "user.device.computer", "笔记本": "user.device.computer",
	"笔记本电脑": "user.device.computer", "tablet": "user.device.tablet", "平板": "user.device.tablet", "ereader": "user.device.ereader",
	"e-reader": "user.device.ereader", "car": "user.vehicle", "ride": "user.vehicle", "车": "user.vehicle", "汽车": "user.vehicle",
	"account": "user.attr.bank", "bank account": "user.attr.bank", "checking": "user.attr.bank", "checking account": "user.attr.bank",
	"current account": "user.attr.bank", "banking": "user.attr.bank", "bank": "user.attr.bank",
}

// kinLeadZH opens a sentence about a relation: "我哥是…", "我老婆…".
// kinLeadEN opens a sentence about a relation of the speaker ("My partner works nights"):
// what it tells is the relation's, not the speaker's slot.
var kinLeadEN = regexp.MustCompile(`(?i)^(?:(?:and|but|so|also|oh|well)[,]?\s+)*(?:my|our)\s+(?:(?:older|younger|big|little|eldest|oldest|youngest|twin)\s+)?(?:` + relEN + `)s?\b`)

var kinLeadZH = regexp.MustCompile(`^我(?:的|家)?(?:` + relZH + `|哥|姐|弟|妹)`)

// everyZH is how often an amount or a meeting recurs, told before the noun ("每个月房贷").
var everyZH = regexp.MustCompile(`^(?:每个?月|每年|每周|每天|每星期)`)

// topicModifiers say which of a kind, not what it is: "my usual tea order" is the
// tea order.
var topicModifiers = map[string]bool{"usual": true, "current": true, "regular": true, "new": true, "old": true, "main": true,
	"go-to": true, "normal": true, "default": true, "standard": true, "present": true, "existing": true, "latest": true,
	"typical": true, "whole": true, "entire": true, "total": true, "monthly": true, "weekly": true, "daily": true,
	"the": true, "a": true, "an": true, "my": true, "our": true, "this": true, "that": true, "all": true}

// topicVerbs end a noun phrase the pattern took too far.
var topicVerbs = map[string]bool{"got": true, "get": true, "gets": true, "was": true, "were": true, "has": true, "had": true,
	"have": true, "is": true, "are": true, "been": true, "just": true, "now": true, "will": true, "would": true, "finally": true}

// notTopicsZH are what a speaker says, not a thing they have ("我的意思是…").
var notTopicsZH = regexp.MustCompile(`^(?:意思|问题|想法|看法|意见|建议|感觉|理解|回答|原话|重点|观点|猜测|天|妈呀|名字|生日|工作|老家|家乡|地址|电话|邮箱)$`)

// notTopicVerbZH is a verb or an adverb the lazy noun pattern took for a noun ("我们最终
// 决定用…").
var notTopicVerbZH = regexp.MustCompile(`^(?:决定|打算|准备|想|要|会|能|喜欢|觉得|一直|经常|已经|还是|最终|平时|正在|开始|今天|明天|昨天)|决定|打算|觉得|喜欢`)

// notTopicsEN are heads the other rules own (people, pets, places) or that name nothing.
var notTopicsEN = regexp.MustCompile(`(?i)^(?:` + relEN + `|` + petEN + `|name|job|role|title|home|house|place|city|address|email|phone|birthday|time zone|timezone|favou?rite.*|plan|plans|idea|point|question|problem|guess|bad|pleasure|life|day|week|weekend|morning|evening|night|way|thing|stuff|one|turn|worry|feeling|answer|concern|opinion|view|take|thought|thinking|reason|excuse|issue|advice|suggestion|bet|hunch|impression|understanding|experience|sense|fault|mistake|apologies|condolences|thanks)$`)

// headNoun is the last word of a noun phrase before its "for"/"of" part: "older brother",
// "budget for the laptop" → "brother", "budget".
func headNoun(np string) string {
	f := strings.Fields(strings.ToLower(np))
	for i, w := range f {
		if w == "for" || w == "of" {
			f = f[:i]
			break
		}
	}
	if len(f) == 0 {
		return ""
	}
	return strings.TrimSuffix(f[len(f)-1], "'s")
}

// topicSlug normalises a noun phrase into a slot name: no articles or modifiers, plurals
// as singulars, "shopping" after what is shopped for dropped.
func topicSlug(np string) string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(np)) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
		if topicModifiers[w] || w == "" {
			continue
		}
		switch {
		case strings.HasSuffix(w, "ies") && len(w) > 4:
			w = strings.TrimSuffix(w, "ies") + "y"
		case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
			w = strings.TrimSuffix(w, "s")
		}
		out = append(out, w)
	}
	for i, w := range out {
		if topicVerbs[w] && i > 0 {
			out = out[:i] // "standup got moved": the phrase ends at its verb
			break
		}
	}
	for n := len(out); n > 1 && strings.HasSuffix(out[n-1], "ed") && !topicVerbs[out[n-1]]; n = len(out) {
		out = out[:n-1] // "groceries delivered": the groceries
	}
	for n := len(out); n > 1 && (out[n-1] == "shopping" || out[n-1] == "run" || out[n-1] == "over" || out[n-1] == "across" ||
		out[n-1] == "up" || out[n-1] == "down" || out[n-1] == "back"); n = len(out) {
		out = out[:n-1]
	}
	return slugify(strings.Join(out, " "))
}

// topicKey is the slot of the thing s holds a value of ("" for none), and whether the
// topic is a kind of standing arrangement ("the night shift", 夜班, "a bouldering gym"): a
// sentence that dates its start is about that arrangement, not a plan of its own.
func (o *Offline) topicKey(s string) (key string, kind bool) {
	t := o.slots
	if hasHan(s) {
		body := strings.TrimSpace(s)
		if t.shiftZH.MatchString(body) && !kinLeadZH.MatchString(body) {
			return "user.attr.shift", true
		}
		if k := o.ownSlotZH(body); k != "" {
			return k, false
		}
		if t.landlordZH.MatchString(body) {
			return "user.attr.房租", false
		}
		if k := o.visitKey(body); k != "" {
			return k, false
		}
		if k := planKey(body, o.lex.temporal); k != "" {
			return k, false
		}
		if k := providerKey(body, ""); k != "" {
			return k, false
		}
		if m := scheduleVerbZH.FindStringSubmatch(body); m != nil && !notTopicsZH.MatchString(m[2]) {
			return "user.attr." + m[2], false
		}
		for _, r := range []*regexp.Regexp{t.changedZH, t.scheduleZH, t.amountZH, t.possessedZH} {
			m := r.FindStringSubmatch(body)
			if m == nil {
				continue
			}
			np := everyZH.ReplaceAllString(strings.TrimPrefix(m[1], "的"), "")
			if i := strings.LastIndex(np, "的"); i >= 0 {
				np = np[i+len("的"):] // "女儿的舞蹈课": the lesson
			}
			np = timeLeadZH.ReplaceAllString(np, "")
			if k, ok := thingSlots[np]; ok && r != t.scheduleZH {
				return k, false
			}
			if k := planSlotZH(eventNounZH(np)); k != "" {
				return k, false
			}
			if k := providerKey("", np); k != "" {
				return k, false
			}
			// A relation is the relation rules' ("孩子现在换到…" is about the child).
			rel := startsWithRelationZH(np) != ""
			if utf8.RuneCountInString(np) < 2 || afterTimeLeadZH(np) != np || rel || strings.ContainsAny(np, "我你他她它这那") || notTopicsZH.MatchString(np) || notTopicVerbZH.MatchString(np) {
				continue
			}
			return "user.attr." + np, false
		}
		return "", false
	}
	if t.shiftEN.MatchString(s) && !kinLeadEN.MatchString(s) {
		return "user.attr.shift", true
	}
	if k := ownSlotEN(s); k != "" {
		return k, false
	}
	if k := providerKey(s, ""); k != "" {
		return k, false
	}
	if k := o.visitKey(s); k != "" {
		return k, false
	}
	if k := planKey(s, o.lex.temporal); k != "" {
		return k, false
	}
	if nameMoveEN.MatchString(s) {
		return "", false // "Lior moved to Haifa": someone's home, in the person's slot
	}
	if m := t.upgradedEN.FindStringSubmatch(s); m != nil {
		return thingSlots[strings.ToLower(m[1])], false
	}
	if t.bankWithEN.MatchString(s) {
		return "user.attr.bank", false
	}
	// The kind's head noun is the slot: "the late shift", "a climbing gym", "the basic plan".
	for _, r := range []*regexp.Regexp{t.kindEN, t.goToEN, t.planTierEN, t.memberEN} {
		if m := r.FindStringSubmatch(s); m != nil {
			return "user.attr." + strings.ToLower(m[1]), true
		}
	}
	for _, r := range []*regexp.Regexp{t.movedEN, t.raisedEN, t.keptEN, t.boughtEN, t.possessedEN, t.changedEN} {
		m := r.FindStringSubmatch(s)
		if m == nil || notTopicsEN.MatchString(strings.TrimSpace(m[1])) || notTopicsEN.MatchString(headNoun(m[1])) {
			continue
		}
		slug := topicSlug(m[1])
		if k, ok := thingSlots[strings.ReplaceAll(slug, "_", " ")]; ok {
			return k, false
		}
		if k := providerKey("", slug); k != "" {
			return k, false
		}
		if k := planSlotEN(slug); k != "" {
			return k, false
		}
		if !strings.Contains(slug, "_") && doseEN.MatchString(s) {
			return "medication." + slug, false // "bumped my Lexapro up to 15mg"
		}
		if slug == "" || notTopicsEN.MatchString(slug) {
			continue
		}
		if k := o.topics.key(strings.ReplaceAll(slug, "_", " ")); strings.HasPrefix(k, "drink.") || strings.HasPrefix(k, "food.") {
			return k, false // "my usual coffee order": the drink's slot
		}
		return "user.attr." + slug, false
	}
	return "", false
}

// replyLangEN and replyLangZH ask for replies in a language: a standing wish, whether or
// not it says "from now on".
var (
	replyLangEN = regexp.MustCompile(`(?i)\b(?:reply|respond|answer|write|talk|speak)\b(?:\s+(?:back\s+)?(?:to\s+)?me)?\s+(?:in|using)\s+(English|Chinese|Mandarin|Cantonese|Spanish|French|German|Japanese|Korean|Portuguese|Italian|Russian|Arabic|Hindi|Dutch|Vietnamese|Thai|Indonesian|Turkish|Polish|Swedish|Greek|Hebrew)\b`)
	replyLangZH = regexp.MustCompile(`用(中文|英文|英语|日语|日文|法语|德语|韩语|西班牙语|粤语|繁体字?|简体字?)(?:来|给我)?(?:回复|回答|回我|跟我说|和我说|交流|写)`)
)

// oneOffTime marks a change that holds once ("this Friday's call moved to 3", "明天的会改到
// 下午"), not from now on.
var oneOffTime = regexp.MustCompile(`(?i)\b(?:this|next|tomorrow|today|tonight|tomorrow's|today's|once|just for)\b|这周|下周|本周|明天|后天|今天|今晚|这次|下次|这一次|临时`)

// pastEN tells a sentence in the past: what happened, not what holds.
var pastEN = regexp.MustCompile(`(?i)\b(?:was|were|had|did|went|got|yesterday|last\s+(?:week|month|year|night))\b|\b[a-z]{3,}ed\b`)

// topicContent is s in the third person: "Choir practice is on Mondays now" is the
// user's choir practice.
func (o *Offline) topicContent(s string) string {
	if hasHan(s) {
		if loc := correctionLeadZH.FindStringIndex(s); loc != nil && loc[0] == 0 && loc[1] < len(s) {
			s = strings.TrimLeft(s[loc[1]:], "，,！!。 ") // "记错了，…": what is right
		}
		if strings.Contains(s, "我") {
			return o.pronounsOf(s) // the speaker is named in it
		}
		if verbLeadZH.MatchString(s) {
			return "用户" + o.pronounsOf(s) // "换理发师了，…": the subject dropped is the speaker
		}
		return "用户的" + o.pronounsOf(s)
	}
	if droppedSubjectEN.MatchString(s) {
		s = "I " + lowerFirst(s) // "Reached my target weight": the subject dropped is the speaker
	} else if droppedBeingEN.MatchString(s) {
		s = "I'm " + lowerFirst(s) // "Feeling better again": the speaker is
	}
	if o.pronounEN.MatchString(s) {
		return upperFirst(o.pronounsEN(s, false))
	}
	return "The user's " + lowerFirst(strings.TrimPrefix(strings.TrimPrefix(s, "The "), "the "))
}

// namedMeeting is the topic slot of one recurring meeting ("user.attr.例会",
// "user.attr.standup"), not of meeting in general.
var namedMeeting = regexp.MustCompile(`^(?:user\.attr|plan)\.(?:\p{Han}*[^开]会|[a-z_]*(?:standup|stand_up|sync|review|planning|retro|one_on_one|check_in|meeting))$`)

// strongSlot reports a key another rule derived from what the sentence means (a place,
// an employer, a relation's name): the topic of its grammar does not replace it.
func strongSlot(key string) bool {
	for _, p := range []string{"user.attr.", "habit.", "drink.", "food.cuisine.", "food.ingredient.", "taste.", "favorite.", "meeting.preference"} {
		if strings.HasPrefix(key, p) {
			return false
		}
	}
	return key != ""
}

// replyLanguage is the memory of a sentence no rule took that asks for replies in a
// language ("answer me in French", 用英文回复我): the language preference's slot.
func (o *Offline) replyLanguage(s string) []draft {
	clean := o.clean(s)
	var content string
	if m := replyLangEN.FindStringSubmatch(clean); m != nil {
		content = "The user wants replies in " + m[1]
	} else if m := replyLangZH.FindStringSubmatch(clean); m != nil {
		content = "用户希望用" + m[1] + "回复"
	} else {
		return nil
	}
	return []draft{{typ: memory.Semantic, cat: memory.CatPreference, key: "language.preference", content: content,
		importance: impPreference, confidence: confExplicit, rule: "preference", meta: map[string]any{"instruction": true}}}
}

// topicSlots gives the drafts of sentence s the slot of its topic: a draft without a key,
// or with a looser one (a habit, a taste, an attribute named as told), takes it; a
// sentence about the speaker's own thing that no rule took becomes a memory in that slot.
func (o *Offline) topicSlots(ds []draft, s string, ref time.Time) []draft {
	clean := o.clean(s)
	key, kind := o.topicKey(clean)
	if key == "" {
		return ds
	}
	if len(ds) == 0 {
		if o.lex.aboutListener(clean) {
			return ds
		}
		d := draft{typ: memory.Semantic, cat: memory.CatFact, key: key, content: o.finish(o.topicContent(clean), ref),
			importance: impPreference, confidence: confExplicit, rule: "topic", meta: map[string]any{}}
		if endsWithItsDay(key) {
			// A visit or an outing is over with its last day.
			d.cat, d.expire = memory.CatEvent, o.expiry(clean, ref)
		}
		return []draft{d}
	}
	standing := !oneOffTime.MatchString(clean)
	for i := range ds {
		if standing && ds[i].typ == memory.Semantic && ds[i].cat != memory.CatEvent {
			// "瑜伽课改到周日上午了": the topic's day from now on, not one Sunday.
			ds[i].expire = nil
		}
		// A meeting of its own ("例会", "the standup") is its topic's, not when meetings
		// in general suit the speaker.
		ownMeeting := ds[i].key == "meeting.preferred_time" && namedMeeting.MatchString(key)
		// A plan's slot from the event's noun is the one both tellings of it share; a
		// plan key another rule guessed from a word of the sentence yields to it.
		eventPlan := (kind || strings.HasPrefix(key, "plan.")) && strings.HasPrefix(ds[i].key, "plan.")
		if ds[i].typ == memory.Procedural || strongSlot(ds[i].key) && !eventPlan && !ownMeeting {
			continue
		}
		ds[i].key = key
		if endsWithItsDay(key) {
			ds[i].typ, ds[i].cat, ds[i].expire = memory.Semantic, memory.CatEvent, o.expiry(clean, ref)
			continue
		}
		if ds[i].cat == memory.CatEvent && ds[i].typ == memory.Episodic && !pastEN.MatchString(clean) {
			// "女儿的舞蹈课在周五晚上" states what holds, the value of its topic.
			ds[i].typ, ds[i].cat = memory.Semantic, memory.CatFact
		}
		if kind && ds[i].cat == memory.CatEvent {
			ds[i].typ, ds[i].cat, ds[i].expire = memory.Semantic, memory.CatFact, nil
		}
	}
	if strings.HasPrefix(key, "user.provider.") && !slices.ContainsFunc(ds, func(d draft) bool { return d.key == key }) {
		// "X moved away, so I found a new dentist": the other slot keeps its value, and
		// the service has a new giver, told in its own slot.
		ds = append(ds, draft{typ: memory.Semantic, cat: memory.CatFact, key: key, content: o.finish(o.topicContent(clean), ref),
			importance: impPreference, confidence: confExplicit, rule: "topic", meta: map[string]any{}})
	}
	return ds
}

// endsWithItsDay reports a plan slot whose value is over when its day is: a relation's
// visit, an outing.
func endsWithItsDay(key string) bool {
	if strings.HasPrefix(key, "plan.visit.") {
		return true
	}
	k := strings.TrimPrefix(key, "plan.")
	return k != key && (outingWordEN.MatchString(strings.ReplaceAll(k, "_", " ")) || outingWordZH.MatchString(k))
}

// verbLeadZH opens a clause with its verb or an adverb, its subject dropped.
var verbLeadZH = regexp.MustCompile(`^(?:今天|昨天|明天|今年|去年|上周|这周|下周|周末|早上|晚上|刚才|换|改|买|订|退|搬|去|来|开|续|办|充|取消|卖|提|找到|查|看了|问了|开始|不再|没|刚|又|已经|终于|现在|最近|也|还|都|决定|打算|准备|想|要)`)

// droppedBeingEN opens a sentence whose "I'm" was dropped: "Feeling much better".
var droppedBeingEN = regexp.MustCompile(`(?i)^(?:feeling|getting|heading|working|looking|still|back|off|done|home|busy|free|up\s+to|down\s+to)\b`)
