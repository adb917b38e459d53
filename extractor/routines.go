package extractor

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/memory"
)

// Routines and arrangements told with their value — how many coffees a day, when the
// children go to bed, which office the speaker works from, the tool for a job, a plan
// for a thing, where a named person lives — each in a slot of its own, so that the next
// value told replaces it.

var (
	// "I have around six espressos a day", "down to one coffee a day"
	perDayEN = regexp.MustCompile(`(?i)\b(?:i\s+(?:drink|have|smoke|eat|take)|(?:i'm|i\s+am)\s+(?:down|up)\s+to|down\s+to|up\s+to|cut\s+(?:back\s+|down\s+)?to)\s+(?:about\s+|around\s+|like\s+|maybe\s+|only\s+|just\s+)?(?:\w+|\d+)\s+(coffees?|cups?\s+of\s+coffee|espressos?|cigarettes?|smokes|beers?|drinks|glasses\s+of\s+wine|cups?\s+of\s+tea|teas|energy\s+drinks?|diet\s+cokes?|cokes?|sodas?)\s+(?:a|per|every)\s+(?:day|week|night)\b`)
	// "我一天抽半包烟", "一天抽半包烟"
	perDayZH = regexp.MustCompile(`(?:每天|一天|每周|一周)(?:都)?(?:要)?(?:喝|抽|吃)(?:[一二两三四五六七八九十半几\d]+)(?:杯|包|根|瓶|罐|支)(咖啡|奶茶|烟|啤酒|酒|可乐|茶)`)
	// "the boys go down at 7", "bedtime's 8:30 now"
	bedtimeEN = regexp.MustCompile(`(?i)\b(?:(?:my|our|the)\s+(kids?|children|son|daughter|boys|girls|toddler|baby|little\s+one)\s+(?:go(?:es)?\s+to\s+bed|(?:is|are)\s+in\s+bed|(?:go(?:es)?\s+)?down|sleeps?)\s+(?:at|by|around)|bedtime(?:'s|\s+is)(?:\s+(?:now|at))?)\s+(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)`)
	// "女儿每天九点睡觉", "儿子现在改成九点半睡了"
	bedtimeZH = regexp.MustCompile(`(` + relZH + `)(?:们)?(?:晚上|每天|一般|平时|现在)?(?:都|改成|改到|改为)?(?:晚上)?(\d{1,2}点(?:半)?|[一二三四五六七八九十]{1,2}点(?:半)?)(?:前)?(?:上床|睡觉|睡)`)
	// "I'm based in the Porto branch", "transferred to the Madrid office"
	officeEN = regexp.MustCompile(`(?i:\b(?:based\s+(?:in|at|out\s+of)|work\s+(?:in|at|out\s+of|from)|working\s+(?:in|at|out\s+of|from)|transferred\s+to|moved\s+(?:over\s+)?to|relocated\s+to|switched\s+to|sit\s+in)\s+(?:the|our)\s+)(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)\s+(?i:(office|branch|site|campus|hq|headquarters|plant|warehouse|store|lab|studio))\b`)
	// "我在西安分行上班", "年初调到了武汉办事处"
	officeZH = regexp.MustCompile(`(?:在|调到了?|调去了?|转到了?|派到了?|调回了?)(\p{Han}{2,4}?)(分公司|办事处|分部|分行|总部|研发中心|工厂|门店|分店|校区|分院)`)
	// "我用飞书记待办", "照片都搬到群晖上了"
	toolZH     = regexp.MustCompile(`^我(?:一直|现在|平时|主要|都)?用(\S{2,12}?)(?:来)?(记笔记|做笔记|记账|写代码|剪视频|修图|管理任务|记待办|听歌|听书|看书|存照片)`)
	toolMoveZH = regexp.MustCompile(`^(?:我的)?(笔记|账本|待办|照片|音乐|歌单|代码)(?:都|全部|全都|已经)*(?:搬到|迁到|挪到|转到|换到|导到|同步到)(?:了)?(\S{2,20}?)(?:上|里|去)?(?:了)?(?:[，。！,.]|$)`)
	// "we're hoping to redo the attic next spring", "the kitchen reno is on hold"
	planObjectEN = regexp.MustCompile(`(?i)\b(?:planning|plan|going|hoping|want|wanting|meaning|about)\s+to\s+(?:finally\s+)?(?:renovate|redo|remodel|repaint|paint|redecorate|fix\s+up|re-?tile|refinish|landscape|extend|convert|gut)\s+(?:the|our|my)\s+([a-z]+)` +
		// "leaning toward a kitchen remodel", "thinking about a loft conversion"
		`|\b(?:leaning\s+towards?|thinking\s+(?:about|of)|considering|planning|looking\s+at|saving\s+(?:up\s+)?for|budgeting\s+for|getting\s+quotes\s+for)\s+(?:a|an|the|our|my)\s+([a-z]+)\s+(?:reno|renovation|remodel|redo|makeover|refit|extension|conversion|overhaul)\b`)
	planPausedEN = regexp.MustCompile(`(?i)\b(?:the|our|my)\s+([a-z]+)\s+(?:reno|renovation|remodel|redo|project|makeover|refit|extension|conversion|overhaul)\s+(?:is|got|has\s+been|was|'s)\s+(?:now\s+)?(?:on\s+hold|postponed|pushed|delayed|cancell?ed|off|shelved|scrapped|paused|moved)`)
	planObjectZH = regexp.MustCompile(`(?:打算|计划|准备|想|要)(?:今年|明年|下半年|年底|夏天|秋天|冬天|春天|下个?月|国庆|五一)*(?:把)?(?:重新)?(?:装修|翻新|粉刷|改造)(\p{Han}{2,3}?)(?:[，。！,.]|$|了)|(?:打算|计划|准备|想|要)(?:今年|明年|下半年|年底|夏天|秋天|冬天|春天|下个?月|国庆|五一)*(?:把)?(\p{Han}{2,3}?)(?:重新)?(?:装修|翻新|粉刷|改造)`)
	planPausedZH = regexp.MustCompile(`^(?:我们?家?的?)?(\p{Han}{2,3}?)(?:的)?(?:装修|翻新|改造)(?:计划)?(?:推迟|延期|改到|搁置|取消|暂停|推到|延后|先不)` +
		// "翻新阳台的事先缓一缓": the work told before the room
		`|^(?:我们?家?的?)?(?:装修|翻新|改造)(\p{Han}{2,3}?)(?:的事|这件事|的计划|的事情)?(?:先|暂时|也)?(?:推迟|延期|搁置|取消|暂停|延后|不做了|放一放|缓一缓)`)
	// "Lior moved to Haifa for work"
	nameMoveEN = regexp.MustCompile(`^(?:(?i:so|and|oh|also|btw|fyi|news:?),?\s+)?(\p{Lu}[\p{Ll}'-]+)\s+(?:(?:just|finally|recently|officially)\s+)?(?:moved|relocated|has\s+moved)\s+(?:back\s+|out\s+)?to\s+(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)`)
	// "我现在汇报给赵总", "我向周经理汇报": the speaker's manager.
	reportToZH = regexp.MustCompile(`我(?:现在|目前|直接|以后)?(?:汇报给|直接汇报给|向)(\p{Han}{2,3}?)(?:汇报)?(?:了|[，。！,.]|$)`)
	// "originally from Cork but living in Galway": where the speaker is from, and where
	// they live now, in one breath.
	originFromEN = regexp.MustCompile(`(?i:\b(?:i'm\s+|i\s+am\s+)?originally\s+from\s+)(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)`)
	butLivingEN  = regexp.MustCompile(`(?i:\b(?:but|and|now)\s+(?:now\s+|currently\s+)?(?:living|based|settled|live)\s+in\s+)(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)`)
	// "我弟弟搬到厦门定居了"
	relMoveZH = regexp.MustCompile(`我(?:的|家)?(` + relZH + `|哥|姐|弟|妹)(?:已经|上个?月|去年|今年|刚刚?|也|最近)?(?:搬去|搬到|搬回|调到|调去|去了)(\p{Han}{2,4}?)(?:工作|住|定居|上学|读书|生活|发展|了|[，。！,.]|$)`)
)

// forNowEN bounds an arrangement in time: "until the 20th", "for the next two weeks".
var forNowEN = regexp.MustCompile(`(?i)\b(?:until|till|through\s+the|for\s+now|for\s+the\s+(?:next|rest)|this\s+week|for\s+a\s+(?:few|couple)|temporarily)\b`)

var (
	// "I normally turn in around midnight", "going to bed by 10:30 these days": the speaker's
	// bedtime, the slot the sleep schedule has.
	selfBedtimeEN = regexp.MustCompile(`(?i)^(?:i\s+|i've\s+|we\s+)?(?:usually\s+|normally\s+|mostly\s+|now\s+|been\s+)?(?:go(?:ing)?|went|get(?:ting)?)\s+to\s+(?:bed|sleep)\s+(?:at|by|around|before)\s+(\d{1,2}(?::\d{2})?\s*(?:am|pm)?|midnight)`)
	selfBedtimeZH = regexp.MustCompile(`^我?(?:一般|平时|每天|最近|现在|通常)?(?:都)?(?:晚上)?(\d{1,2}点|[一二三四五六七八九十]{1,3}点)(?:半)?(?:以后|前|左右)?(?:就|才)?(?:睡|上床|睡觉)`)
	// "I'm reading Wolf Hall", "now rereading Persuasion", "在读《三体》": what the
	// speaker is reading or watching, one at a time.
	readingEN  = regexp.MustCompile(`(?:\b(?i:i'm|i\s+am|now|currently|been|started)\s+(?i:currently\s+)?)(?i:reading|re-reading|rereading)\s+(\p{Lu}[\p{L}'’-]*(?:\s+(?:\p{Lu}[\p{L}'’-]*|of|the|and|in|a))*)`)
	watchingEN = regexp.MustCompile(`(?:\b(?i:i'm|i\s+am|we're|we\s+are|now|currently|been|we've|i've)\s+(?i:(?:currently|just|finally)\s+)?)(?i:watching|started\s+watching|started|bingeing|binging)\s+(\p{Lu}[\p{L}'’-]*(?:\s+(?:\p{Lu}[\p{L}'’-]*|of|the|and|in))*)`)
	readingZH  = regexp.MustCompile(`(?:在|开始)(?:读|看)《([^》]{1,20})》`)
	watchingZH = regexp.MustCompile(`(?:在追|开始追|开始看|在看|追)《([^》]{1,20})》`)
	// "saving up for a campervan", "the holiday money is going toward the boiler"
	savingEN = regexp.MustCompile(`(?i)\b(?:saving|saving\s+up|putting\s+money\s+(?:aside|away))\s+(?:for|towards?)\b|\b(?:fund|savings|nest\s+egg|money)\s+(?:is|are)\s+(?:now\s+)?going\s+(?:toward|towards|to|into)\b`)
	savingZH = regexp.MustCompile(`攒钱|存钱|攒的钱|存的钱`)
)

// workplaceEN is a value that names a workplace, not a home: "the Lisbon office".
var workplaceEN = regexp.MustCompile(`(?i)\b(?:office|branch|site|campus|hq|headquarters|plant|warehouse|store|lab|studio)$`)

// toolPurposeZH maps what a tool is used for to the tool slot's English name.
var toolPurposeZH = map[string]string{"记笔记": "note", "做笔记": "note", "笔记": "note", "记账": "budget", "账本": "budget",
	"写代码": "code", "代码": "code", "剪视频": "video", "修图": "photo", "存照片": "photo", "照片": "photo", "管理任务": "todo",
	"记待办": "todo", "待办": "todo", "听歌": "music", "音乐": "music", "歌单": "music", "听书": "audiobook", "看书": "ebook"}

// shortSentenceFacts are the facts of sentence s with slots of their own that the age,
// service, routine and home readings take. They are told in short sentences: a long one is
// skipped, since it would cost every pattern its whole length.
func (o *Offline) shortSentenceFacts(s string) []fact {
	if len(s) > maxAsideBytes {
		return nil
	}
	out := o.ageFacts(s)
	out = append(out, o.serviceFacts(s)...)
	out = append(out, o.routineFacts(s)...)
	return append(out, o.workAndHomeFacts(s)...)
}

// toldWhole is sentence s in the third person, as told, in its script.
func (o *Offline) toldWhole(s string) string {
	if hasHan(s) {
		return o.pronounsOf(trimEnd(s))
	}
	return upperFirst(trimEnd(o.pronounsEN(s, false)))
}

// routineFacts are the facts of sentence s about the speaker's routines and arrangements.
func (o *Offline) routineFacts(s string) []fact {
	c := o.lex.clauses
	var out []fact
	if hasHan(s) {
		if m := relLessonsZH.FindStringSubmatch(s); m != nil {
			// "儿子每周三下午学游泳", "女儿钢琴课挪到周日了": the relation's lessons, one slot.
			who := m[1] + m[3]
			out = append(out, fact{key: "relation." + relSlot(c, who) + ".lessons", content: o.toldWhole(s), cat: memory.CatRelationship, replace: true})
		}
		if m := petFoodChangedZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "pet." + c.pet(m[1]) + ".food", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference, replace: true})
		}
		if selfBedtimeZH.MatchString(s) && !toldOfOtherZH(s) {
			out = append(out, fact{key: "schedule.sleep", content: o.toldWhole(s), cat: memory.CatPreference, imp: impPreference})
		}
		if m := watchingZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.watching", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		} else if m := readingZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.reading", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		}
		if savingZH.MatchString(s) && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.savings_goal", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		}
		if m := perDayZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "drink." + drinkSlotZH(m[1]), content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference, replace: true})
		}
		if m := bedtimeZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "relation." + c.rel(m[1]) + ".bedtime", content: "用户的" + m[1] + "晚上" + m[2] + "睡觉", cat: memory.CatRelationship, replace: true})
		}
		if m := officeZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.work_location", content: "用户在" + m[1] + m[2] + "工作", cat: memory.CatProfile, replace: true})
		}
		if m := toolZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "tool." + toolPurposeZH[m[2]], content: "用户用" + m[1] + m[2], cat: memory.CatFact, imp: impPreference})
		} else if m := toolMoveZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "tool." + toolPurposeZH[m[1]], content: "用户的" + m[1] + "现在用" + m[2], cat: memory.CatFact, imp: impPreference})
		}
		if m := planObjectZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "plan.renovation." + m[1] + m[2], content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		} else if m := planPausedZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "plan.renovation." + m[1] + m[2], content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		}
		if m := reportToZH.FindStringSubmatch(s); m != nil && !badNameZH(m[1]) {
			out = append(out, fact{key: "relation.manager.name", content: "用户现在向" + m[1] + "汇报，" + m[1] + "是用户的领导", cat: memory.CatRelationship})
		}
		if m := relMoveZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[2]) && isPlace(m[2]) {
			who := fullKinZH(m[1]) // 我哥 is 我哥哥
			out = append(out, fact{key: "relation." + c.rel(who) + ".location", content: "用户的" + who + "现在住在" + m[2], cat: memory.CatRelationship})
		}
		return out
	}
	if m := originFromEN.FindStringSubmatch(s); m != nil && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) {
		out = append(out, fact{key: "user.origin", content: "The user is originally from " + m[1], cat: memory.CatProfile})
		if l := butLivingEN.FindStringSubmatch(s); l != nil && !c.notName[l[1]] {
			out = append(out, fact{key: "user.location", content: "The user lives in " + l[1], cat: memory.CatProfile})
		}
	}
	if m := selfBedtimeEN.FindStringSubmatch(s); m != nil {
		out = append(out, fact{key: "schedule.sleep", content: o.toldWhole(s), cat: memory.CatPreference, imp: impPreference})
	}
	if m := readingEN.FindStringSubmatch(s); m != nil && !nameStop[strings.ToLower(m[1])] {
		out = append(out, fact{key: "user.reading", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	} else if m := watchingEN.FindStringSubmatch(s); m != nil && !nameStop[strings.ToLower(m[1])] && !c.notName[m[1]] {
		out = append(out, fact{key: "user.watching", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	}
	if savingEN.MatchString(s) && !otherSubject.MatchString(s) {
		out = append(out, fact{key: "user.savings_goal", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	}
	if m := perDayEN.FindStringSubmatch(s); m != nil && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) {
		out = append(out, fact{key: "drink." + drinkSlotEN(m[1]), content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference, replace: true})
	}
	if m := bedtimeEN.FindStringSubmatch(s); m != nil {
		who := "child"
		if m[1] != "" {
			who = c.rel(strings.TrimSuffix(strings.ToLower(m[1]), "s"))
			if w := strings.ToLower(m[1]); w == "children" || w == "kids" || w == "kid" || w == "boys" || w == "girls" || w == "little one" || w == "toddler" || w == "baby" {
				who = "child"
			}
		}
		out = append(out, fact{key: "relation." + slugify(who) + ".bedtime", content: o.toldWhole(s), cat: memory.CatRelationship, replace: true})
	}
	if m := officeEN.FindStringSubmatch(s); m != nil && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) && !forNowEN.MatchString(s) {
		out = append(out, fact{key: "user.work_location", content: "The user works from the " + m[1] + " " + strings.ToLower(m[2]), cat: memory.CatProfile, replace: true})
	}
	if m := planObjectEN.FindStringSubmatch(s); m != nil && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) {
		out = append(out, fact{key: "plan.renovation." + strings.ToLower(m[1]+m[2]), content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	} else if m := planPausedEN.FindStringSubmatch(s); m != nil {
		out = append(out, fact{key: "plan.renovation." + strings.ToLower(m[1]), content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	}
	if m := nameMoveEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] && !nameStop[strings.ToLower(m[1])] && !c.notName[m[2]] {
		out = append(out, fact{key: "person." + slugify(m[1]) + ".location", content: m[1] + " lives in " + m[2] + " now", cat: memory.CatRelationship})
	}
	return out
}

// fullKinZH is a one-character sibling word said in full: 哥 is 哥哥.
func fullKinZH(w string) string {
	if w == "哥" || w == "姐" || w == "弟" || w == "妹" {
		return w + w
	}
	return w
}

// drinkSlotEN and drinkSlotZH name the thing counted per day, in the drink slots'
// English names.
func drinkSlotEN(w string) string {
	w = strings.ToLower(w)
	switch {
	case strings.Contains(w, "coffee"), strings.Contains(w, "espresso"):
		return "coffee"
	case strings.Contains(w, "tea"):
		return "tea"
	case strings.Contains(w, "cigarette"), w == "smokes":
		return "cigarette"
	case strings.Contains(w, "beer"), strings.Contains(w, "wine"), w == "drinks":
		return "alcohol"
	}
	return slugify(singular(w))
}

func drinkSlotZH(w string) string {
	switch w {
	case "咖啡":
		return "coffee"
	case "茶":
		return "tea"
	case "烟":
		return "cigarette"
	case "啤酒", "酒":
		return "alcohol"
	}
	return w
}

var (
	// "I'm on Lexapro, 10mg a day", "taking metformin twice a day": a medication and its dose.
	medicationEN = regexp.MustCompile(`(?i:\b(?:i'm|i\s+am|i've\s+been|i\s+take|i'm\s+taking|i\s+am\s+taking|(?:put|started|switched|moved)\s+me|i\s+(?:started|switched\s+to)|started\s+(?:taking|on))\s+(?:now\s+|still\s+|currently\s+)?(?:on\s+|taking\s+|to\s+)?)(\p{Lu}[\p{L}-]+|[a-z]+(?:in|ol|ide|ine|pam|lam|cin|one|ate|zole|pril|sartan|statin|mab|xetine|pine|done))(?i:,?\s+(?:\d+(?:\.\d+)?\s*(?:mg|mcg|ml|iu|units?)|once|twice|three\s+times|\d\s*x)\b)`)
	doseEN       = regexp.MustCompile(`(?i)\b\d+(?:\.\d+)?\s*(?:mg|mcg|ml|iu|units?)\b|\b(?:once|twice|three\s+times)\s+a\s+day\b`)
	// "我在吃降压药，每天一次", "医生把降压药减到一天一次了"
	medicationZH = regexp.MustCompile(`(?:^|我)(?:一直|现在|每天|目前)?(?:在)?吃(\p{Han}{2,6}?)(?:片|胶囊)?[，,]\s*(?:一天|每天|每日|一日)`)
	doseMovedZH  = regexp.MustCompile(`把(\p{Han}{2,6}?)(?:加到|减到|改到|调到|增加到|减少到|加量到|减量到)(?:一天|每天|每日|一日|\d+(?:毫克|mg|片|粒|次|单位))`)
	// "We rent a one-bed in Clapham", "我们在大望路租了个一居": where the speaker lives.
	rentInEN = regexp.MustCompile(`(?i:\b(?:i|we)\s+(?:rent|own|share|have|bought|are\s+renting|am\s+renting)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?:flat|apartment|place|house|two-bed|one-bed|three-bed|studio|condo|room|bedroom|townhouse)\s+in\s+)(\p{Lu}[\p{L}-]+(?:\s\p{Lu}[\p{L}-]+)?)`)
	rentInZH = regexp.MustCompile(`^我们?(?:现在)?在(\p{Han}{2,4}?)(?:租了|买了|租的|买的)(?:个|套|间|一套|一间)?`)
	// "I'm on the growth team", "moved over to the fraud team": the speaker's team.
	teamEN     = regexp.MustCompile(`(?i)\b(?:i'm|i\s+am|i\s+work|i'm\s+now|i\s+now\s+work)\s+(?:now\s+)?(?:on|in|with|for)\s+the\s+([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(team|squad|group|department|org)\b`)
	teamMoveEN = regexp.MustCompile(`(?i)^(?:i\s+)?(?:just\s+|recently\s+|finally\s+)?(?:moved|switched|transferred|moving|rotated|got\s+moved)\s+(?:over\s+)?to\s+the\s+([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(team|squad|group|department|org)\b`)
	teamZH     = regexp.MustCompile(`(?:^我(?:现在|目前)?在|(?:^|我)(?:上个?月|上周|去年|今年|年初|月初|最近|刚刚?|已经)?(?:转到|调到|换到|去了|转去|调去)了?)(\p{Han}{2,4}?)(组|部门|团队|事业部|小组)`)
)

var (
	// "Our girl has violin lessons on Mondays", "our twins do swim classes": a relation's
	// lessons, one slot per relation, so that a switch replaces them.
	relLessonsEN = regexp.MustCompile(`(?i:\b(?:my|our)\s+(` + relEN + `)(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?:takes|has|does|goes\s+to|is\s+taking|started)\s+)([a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)\s+(?i:lessons|classes|class|practice|club)\b` +
		`|(?i:\b(?:my|our)\s+(` + relEN + `)(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?:switched|moved|changed|went)\s+from\s+([a-z]+)\s+to\s+[a-z]+)`)
	// "我婆婆生日是8月12号": a relation's birthday.
	relBirthdayZH = regexp.MustCompile(`我(?:的|家)?(` + relZH + `|哥|姐|弟|妹)(?:的)?生日(?:是|在)(\d{1,2}月\d{1,2}[号日]?|[一二三四五六七八九十]+月[一二三四五六七八九十]+[号日]?|农历\p{Han}{2,6})`)
	// "my partner started at Monzo", "my dad's new job is at the council"
	relNewJobEN = regexp.MustCompile(`(?i:\b(?:my|our)\s+(` + relEN + `)(?:,?\s+\p{Lu}[\p{Ll}'-]+,?)?(?:'s|’s)?\s+(?:just\s+|recently\s+|finally\s+)?(?:started\s+(?:a\s+new\s+job\s+)?(?:at|with)|starts\s+at|is\s+starting\s+at|joined|new\s+job\s+is\s+(?:at|with)|got\s+a\s+job\s+(?:at|with)|is\s+now\s+(?:at|with))\s+(?:the\s+)?)([A-Za-z][\w&'.-]*(?:\s+[A-Za-z][\w&'.-]*){0,3}?)(?:\s+(?:this|last|next|in|on|as|and|but|so)\b|\s*[,.;!]|$)`)
	// "我弟下周开始去京东上班", "我老公换工作了，现在在区医院"
	relNewJobZH = regexp.MustCompile(`我(?:的|家)?(` + relZH + `|哥|姐|弟|妹)(?:这周|下周|上周|下个?月|上个?月|明天|今天|最近|刚刚?|已经)*(?:开始)?(?:去|到|进了?)(\S{2,10}?)(?:上班|工作|入职)|我(?:的|家)?(` + relZH + `|哥|姐|弟|妹)换工作了[，,](?:现在)?(?:在|去了)(\S{2,10}?)(?:上班|工作)?(?:了)?(?:[，。！,.]|$)`)
)

// workAndHomeFacts are a medication's dose, a rented or bought home, and the team, told of
// the speaker.
func (o *Offline) workAndHomeFacts(s string) []fact {
	var out []fact
	if hasHan(s) {
		if m := medicationZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "medication." + m[1], content: o.toldWhole(s), cat: memory.CatFact})
		} else if m := doseMovedZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "medication." + m[1], content: "用户的" + strings.TrimPrefix(o.toldWhole(s), "用户"), cat: memory.CatFact})
		}
		if m := relBirthdayZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "relation." + o.lex.clauses.rel(fullKinZH(m[1])) + ".birthday", content: "用户的" + m[1] + "生日是" + m[2], cat: memory.CatRelationship})
		}
		if m := relNewJobZH.FindStringSubmatch(s); m != nil {
			who, where := m[1]+m[3], m[2]+m[4]
			out = append(out, fact{key: "relation." + o.lex.clauses.rel(fullKinZH(who)) + ".employer", content: "用户的" + who + "现在在" + where + "工作", cat: memory.CatRelationship})
		}
		if m := rentInZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) {
			out = append(out, fact{key: "user.location", content: "用户住在" + m[1] + "（" + o.toldWhole(s) + "）", cat: memory.CatProfile})
		}
		if m := teamZH.FindStringSubmatch(s); m != nil && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.team", content: "用户现在在" + m[1] + m[2], cat: memory.CatProfile})
		}
		return out
	}
	if m := relLessonsEN.FindStringSubmatch(s); m != nil {
		out = append(out, fact{key: "relation." + slugify(o.lex.clauses.rel(strings.ToLower(m[1]+m[3]))) + ".lessons", content: o.toldWhole(s), cat: memory.CatRelationship})
	}
	if m := relNewJobEN.FindStringSubmatch(s); m != nil {
		out = append(out, fact{key: "relation." + slugify(o.lex.clauses.rel(strings.ToLower(m[1]))) + ".employer", content: "The user's " + strings.ToLower(m[1]) + " now works at " + m[2], cat: memory.CatRelationship})
	}
	if m := medicationEN.FindStringSubmatch(s); m != nil && !o.lex.clauses.notName[m[1]] {
		out = append(out, fact{key: "medication." + slugify(strings.ToLower(m[1])), content: o.toldWhole(s), cat: memory.CatFact})
	}
	if m := rentInEN.FindStringSubmatch(s); m != nil && !o.lex.clauses.notName[m[1]] {
		out = append(out, fact{key: "user.location", content: "The user lives in " + m[1] + " (" + trimEnd(o.pronounsEN(s, false)) + ")", cat: memory.CatProfile})
	}
	for _, re := range []*regexp.Regexp{teamEN, teamMoveEN} {
		if m := re.FindStringSubmatch(s); m != nil && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) {
			out = append(out, fact{key: "user.team", content: "The user is on the " + strings.ToLower(m[1]) + " " + strings.ToLower(m[2]), cat: memory.CatProfile})
			break
		}
	}
	return out
}
