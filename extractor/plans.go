package extractor

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// A plan is told again when it changes, in other words than the first time: "the cleaning
// is on the 19th", then "they moved my cleaning to the 28th"; 护照预约在23号, then
// 护照预约取消了. What both sentences share is the event's noun, so the slot of a topic
// that names an event is the plan of that event: plan.<event>.<which> ("plan.appointment.
// passport"), which the resolver's plan slots meet however much of "which" each tells.

// eventNounsEN are the heads of noun phrases that name something planned.
var eventNounsEN = map[string]bool{"appointment": true, "cleaning": true, "checkup": true, "check-up": true, "conference": true,
	"meeting": true, "call": true, "dinner": true, "lunch": true, "breakfast": true, "brunch": true, "party": true, "wedding": true,
	"shower": true, "offsite": true, "retreat": true, "trip": true, "flight": true, "visit": true, "service": true, "inspection": true,
	"interview": true, "session": true, "class": true, "lesson": true, "practice": true, "rehearsal": true, "recital": true,
	"game": true, "match": true, "concert": true, "play": true, "show": true, "musical": true, "screening": true, "surgery": true, "procedure": true, "scan": true, "exam": true, "review": true,
	"demo": true, "launch": true, "deadline": true, "reunion": true, "ceremony": true, "graduation": true, "playdate": true,
	"sleepover": true, "club": true, "physio": true, "therapy": true, "massage": true, "haircut": true, "consultation": true,
	"hearing": true, "viewing": true, "closing": true, "move": true, "delivery": true, "install": true, "installation": true,
	"date": true, "gig": true, "tournament": true, "race": true, "marathon": true, "camp": true, "fitting": true, "tasting": true}

// eventSuffixZH ends a Chinese noun that names something planned; the part before it says
// which ("护照预约": the appointment, for the passport).
var eventSuffixZH = regexp.MustCompile(`(露营|徒步|野餐|烧烤|自驾游|滑雪|预约|晚餐|午餐|早餐|聚餐|饭局|航班|机票|高铁|火车|团建|保养|维修|年检|体检|复查|复诊|面试|聚会|派对|婚礼|婚宴|旅行|旅游|康复|理疗|洗牙|拔牙|补牙|家长会|读书会|例会|周会|年会|发布会|演唱会|音乐会|比赛|考试|手术|会议|会|课)$`)

// planSlotEN is the plan slot of a topic slug whose head names an event ("" for another
// topic): "passport_renewal_appointment" → plan.appointment.passport.
func planSlotEN(slug string) string {
	for _, sep := range []string{"_for_", "_of_"} {
		if i := strings.Index(slug, sep); i > 0 {
			slug = slug[:i] // "budget_for_wedding" is a budget
		}
	}
	words := strings.Split(slug, "_")
	head := words[len(words)-1]
	if !eventNounsEN[head] {
		return ""
	}
	if len(words) == 1 {
		return "plan." + head
	}
	return "plan." + head + "." + words[0]
}

// planSlotZH is the same for a Chinese topic noun: 护照预约 → plan.预约.护照, 家长会 →
// plan.家长会.
func planSlotZH(np string) string {
	m := eventSuffixZH.FindStringSubmatchIndex(np)
	if m == nil {
		return ""
	}
	kind, which := np[m[2]:m[3]], np[:m[2]]
	if which == "" || kind == "会" || kind == "课" {
		return "plan." + np
	}
	return "plan." + kind + "." + which
}

// timeLeadZH are the words a topic noun may open with that say when, not what: "以后康复…".
var timeLeadZH = regexp.MustCompile(`^(?:以后|今后|之后|从此|从今以后|往后|这次|下次|这周|下周|本周|今年|明年)`)

var (
	// "we had to scrap the vet appointment", "we called off the dinner"
	cancelEN = regexp.MustCompile(`(?i)\b(?:cancell?ed|had\s+to\s+cancel|cancell?ing|called\s+off|scrapped|postponed|rescheduled|pushed(?:\s+back)?|moved|bumped|rebooked|shifted|switched|changed|swapped)\s+(?:the|my|our)\s+([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}?)\s*(?:to|till|until|for|,|\.|$|—|-)`)
	// "周日晚上飞大连", "下周二飞成都": a flight, by where to
	flyZH = regexp.MustCompile(`(?:^|我)(?:周[一二三四五六日天]|星期[一二三四五六日天]|明天|后天|下周[一二三四五六日天]?|\d{1,2}号|\d{1,2}月\d{1,2}[号日])(?:的)?(?:早上|上午|中午|下午|晚上|一早)?(?:的飞机|的航班)?飞(?:去|往|到)?(\p{Han}{2,4}?)(?:[，。！,.]|$|出差|开会|玩)`)
	// "航班延误了，改签到周六", "机票改签了"
	flightChangeZH = regexp.MustCompile(`(?:航班|机票|飞机)(?:被)?(?:取消|延误|改签|改到|推迟|换到)|改签(?:到|成)`)
	// "Flying to Boston on Friday", "Flight got cancelled"
	flyEN          = regexp.MustCompile(`(?i:^(?:i'm\s+|i\s+am\s+|we're\s+|we\s+are\s+)?(?:flying|fly)\s+(?:out\s+)?(?:to|into)\s+)(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)`)
	flightChangeEN = regexp.MustCompile(`(?i)\b(?:flight|plane)\s+(?:got|was|has\s+been|is)\s+(?:cancell?ed|delayed|moved|rescheduled|changed|pushed)|\brebooked\s+(?:for|on|onto)\b`)
	// "The van's booked in for a service on Monday", "车下周送去年检"
	carServiceEN = regexp.MustCompile(`(?i)\b(?:car|truck|van|bike|motorbike)(?:'s|\s+is|\s+goes)\s+(?:in|going\s+in|booked\s+in)\s+for\s+(?:a\s+|an\s+|its\s+)?(service|repair|inspection|mot|oil\s+change|tune-up)`)
	carServiceZH = regexp.MustCompile(`车(?:子)?(?:\p{Han}{0,4}?)(?:送去|送|去|要去|要)(保养|维修|年检|检修|修)`)
)

// eventPlaceZH is where or when an event is: "读书会这次在小林家", "家长会在周三上午",
// "年会定在三亚". eventMovedZH is an event someone moved: "医院把复查改到了下周".
var (
	eventPlaceZH = regexp.MustCompile(`^(?:我们?的?)?(\p{Han}{2,6}?)(?:这次|这周|本周|下次|今天|明天)?(?:改在|定在|放在|订在|在|是|去)`)
	eventMovedZH = regexp.MustCompile(`把(\p{Han}{2,6}?)(?:改到|推到|推迟到|挪到|提前到|换到|改成|延到|调到)`)
	// "我8号去补牙", "下周三去复查": an appointment, by what it is for
	goToEventZH = regexp.MustCompile(`^我?(?:\d{1,2}号|\d{1,2}月\d{1,2}[号日]|周[一二三四五六日天]|下周[一二三四五六日天]?|明天|后天|月底|月初)(?:上午|下午|晚上|早上)?(?:要)?去(\p{Han}{2,4}?)(?:[，。！,.]|$)`)
	// "Parent-teacher night is Thursday at 6": an event and its time
	eventTimeEN = regexp.MustCompile(`(?i)^(?:the\s+|our\s+|my\s+)?` + npEN + `\s+(?:is|are|'s)\s+(?:on\s+|at\s+|this\s+|next\s+|set\s+for\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|today|\d)`)
)

// eventNounZH is np without a word that says which part of the event it is: 团建地点 is
// the 团建.
func eventNounZH(np string) string {
	for _, s := range []string{"地点", "时间", "日期", "地方", "安排"} {
		if r, ok := strings.CutSuffix(np, s); ok && r != "" {
			return r
		}
	}
	return np
}

// planKey is the plan slot sentence s tells of, "" for none; tp finds its dates (a
// Temporal compiles its patterns once).
func planKey(s string, tp *Temporal) string {
	if hasHan(s) {
		if loc := correctionLeadZH.FindStringIndex(s); loc != nil && loc[0] == 0 {
			// "记错了，例会是十点": the plan told after the cue.
			s = strings.TrimLeft(s[loc[1]:], "，,！!。 ")
		}
		// The Chinese plan rules key a flight 航班, by where to.
		if m := flyZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) {
			return "plan.航班.去" + m[1] + "的"
		}
		if flightChangeZH.MatchString(s) {
			return "plan.航班"
		}
		if m := carServiceZH.FindStringSubmatch(s); m != nil {
			return "plan.保养.车"
		}
		if m := datedVisitZH.FindStringSubmatch(s); m != nil {
			// "明天下午三点牙医": a dated visit told by whom it is to.
			return "plan." + m[1]
		}
		if m := outingZH.FindStringSubmatch(s); m != nil && (m[1] != "" || len(tp.Find(s, time.Time{})) > 0 || outingDayZH.MatchString(s)) {
			// "周六去千岛湖钓鱼", "烧烤泡汤了": the outing, by its activity.
			return "plan." + m[1] + m[2]
		}
		for _, re := range []*regexp.Regexp{eventMovedZH, goToEventZH, eventPlaceZH} {
			if m := re.FindStringSubmatch(s); m != nil {
				np := everyLeadZH.ReplaceAllString(m[1], "") // "每天早会" is the 早会
				if i := strings.LastIndex(np, "的"); i >= 0 {
					np = np[i+len("的"):] // "孩子的钢琴课": the lesson
				}
				if k := planSlotZH(eventNounZH(np)); k != "" {
					return k
				}
			}
		}
		return ""
	}
	if m := flyEN.FindStringSubmatch(s); m != nil {
		return "plan.flight." + slugify(m[1])
	}
	if m := outingEN.FindStringSubmatch(s); m != nil && (dayName.MatchString(s) || len(tp.Find(s, time.Time{})) > 0 || offEN.MatchString(s)) {
		// "We're going camping next weekend": the outing, by its activity.
		return "plan." + outingSlug(m[1])
	}
	if m := offEN.FindStringSubmatch(s); m != nil {
		// "Camping's off", "the picnic got called off": the plan it ends.
		if k := planSlotEN(topicSlug(m[1])); k != "" {
			return k
		}
		if o := outingWordEN.FindString(strings.ToLower(m[1])); o != "" {
			return "plan." + outingSlug(o)
		}
	}
	if flightChangeEN.MatchString(s) {
		return "plan.flight"
	}
	if m := carServiceEN.FindStringSubmatch(s); m != nil {
		return "plan.service.car"
	}
	for _, re := range []*regexp.Regexp{cancelEN, eventTimeEN} {
		if m := re.FindStringSubmatch(s); m != nil {
			if k := planSlotEN(topicSlug(m[1])); k != "" {
				return k
			}
		}
	}
	return ""
}

// A relation's visit, stay or trip to the speaker, and its end ("Mom's visiting from the
// 10th to the 20th", "her trip got shortened", "我妈15号就回去了"): one plan per relation,
// plan.visit.<who>, so that a change of its days replaces the days told before.
var (
	visitEN = regexp.MustCompile(`(?i)^(?:(?:so|and|also|oh|btw),?\s+)?(?:my\s+|our\s+)?(` + relEN + `|parents|in-laws|folks)(?:'s|\s+is|\s+are|'re)?\s+(?:(?:visiting|coming\s+(?:over|to\s+stay|to\s+visit|to\s+see\s+us)|staying\s+with\s+(?:us|me)|arriving|flying\s+in|in\s+town|here)\b|(?:trip|visit|stay)\b)`)
	visitZH = regexp.MustCompile(`^我(?:的|家)?(` + relZH + `)[^，。,！!？?]{0,10}?(?:来住|过来住|来玩|来看我|来家里|来我家|过来|回去|回老家|走)`)
)

// visitKey is the plan slot of a relation's visit told in s, "" for none.
func (o *Offline) visitKey(s string) string {
	c := o.lex.clauses
	if m := visitEN.FindStringSubmatch(s); m != nil {
		who := strings.ToLower(m[1])
		if who != "parents" && who != "in-laws" && who != "folks" {
			who = c.rel(who)
		}
		return "plan.visit." + slugify(who)
	}
	if m := visitZH.FindStringSubmatch(s); m != nil && len(o.lex.temporal.Find(s, time.Time{})) > 0 || m != nil && absDayZH.MatchString(s) {
		return "plan.visit." + relSlot(c, m[1])
	}
	return ""
}

// absDayZH is a day told by its number ("15号", "3月8日").
var absDayZH = regexp.MustCompile(`\d{1,2}[号日]`)

// Outings told by their activity: "going camping next weekend", "camping's off",
// "周六去千岛湖钓鱼", "烧烤泡汤了".
var (
	outingWordEN = regexp.MustCompile(`\b(?:camping|glamping|hiking|hike|skiing|ski\s+trip|fishing|sailing|kayaking|canoeing|snowboarding|surfing|picnic|barbecue|bbq|road\s+trip|day\s+trip|beach\s+day)\b`)
	outingEN     = regexp.MustCompile(`(?i)\b(?:going|go|heading|off)\s+(?:on\s+(?:a|our)\s+)?(camping|glamping|hiking|skiing|fishing|sailing|kayaking|canoeing|snowboarding|surfing|picnic|road\s+trip|day\s+trip)\b`)
	offEN        = regexp.MustCompile(`(?i)^(?:so\s+|well\s+|ugh,?\s+)?(?:the\s+|our\s+|my\s+)?([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}?)(?:'s|\s+is|\s+has\s+been|\s+got|\s+was)\s+(?:off|cancell?ed|called\s+off|scrapped|postponed|a\s+no-go|not\s+happening)\b`)
	outingWordZH = regexp.MustCompile(`^(?:露营|徒步|野餐|烧烤|自驾游|滑雪|钓鱼)$`)
	outingZH     = regexp.MustCompile(`(露营|徒步|野餐|烧烤|自驾游|滑雪|钓鱼)(?:[^，。！？,.!?]{0,6}?)?(?:取消|泡汤|不去了|黄了|改期|延期|推迟)|(?:去|到)\p{Han}{0,6}?(露营|徒步|野餐|烧烤|自驾游|滑雪|钓鱼)`)
)

// outingSlug is the name of an outing's plan slot: "hike" and "hiking" are one.
func outingSlug(w string) string {
	w = strings.ToLower(strings.TrimSpace(w))
	switch w {
	case "hike":
		return "hiking"
	case "bbq":
		return "barbecue"
	case "ski trip":
		return "skiing"
	}
	return slugify(w)
}

// namesAPlan reports a word that names a plan or an outing ("picnic", "露营", "面试").
func namesAPlan(w string) bool {
	l := strings.ToLower(strings.TrimSpace(w))
	return eventNounsEN[l] || outingWordZH.MatchString(l) || outingWordEN.MatchString(l) && outingWordEN.FindString(l) == l || eventSuffixZH.MatchString(l) && utf8.RuneCountInString(l) <= 4
}

// everyLeadZH says how often, not what: "每天", "每周", "平时".
var everyLeadZH = regexp.MustCompile(`^(?:每天|每周|每个月|每月|每晚|每早|平时|一般)`)

// datedVisitZH is a visit told by its day and whom it is to: "明天下午三点牙医", "周四看医生".
var datedVisitZH = regexp.MustCompile(`^(?:我)?(?:明天|后天|今天|今晚|周[一二三四五六日天]|下周[一二三四五六日天]?|星期[一二三四五六日天]|\d{1,2}号)(?:上午|下午|晚上|早上|中午)?(?:\d{1,2}点|[一二三四五六七八九十]{1,2}点)?(?:半)?(?:要)?(?:去)?(?:看)?(牙医|医生|大夫|中医|理发|体检|复查|面试|家长会)(?:[，。！,.!]|$)`)

// outingDayZH is a day an outing is told with ("周六去钓鱼"); "周末喜欢去钓鱼" is a habit.
var outingDayZH = regexp.MustCompile(`(?:这|下|本)(?:个)?(?:周|星期|礼拜)|\d{1,2}号|国庆|五一|元旦|春节|假期`)
