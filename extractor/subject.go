package extractor

import (
	"regexp"
	"strings"
)

// Chinese drops a subject the listener can supply: in a user's turn a clause that opens
// with a kinship noun ("妈妈叫…") or with a verb after optional time words ("下周三要去…",
// "住在…", "是做…的") is about the speaker or the speaker's relation. The rules read a
// subject, so restoreSubjectZH writes the dropped 我 back before they run.
var (
	zhPronoun     = regexp.MustCompile(`我|咱|你|您|他|她|它|大家|别人|有人`)
	zhTimeLead    = regexp.MustCompile(`^(?:昨天|前天|今天|上午|下午|晚上|刚才|国庆|春节|过年|五一|中秋|端午|元旦|清明|暑假|寒假|(?:这|下|上)?周末|现在|目前|如今|已经|刚刚|刚|最近|这几天|这两天|这周|这个月|下周[一二三四五六日天]?|下个月|下下周|上个月|上周|明天|后天|今年|去年|明年|每天|每周|平时|一直|以前|原来|本来|早就|终于|其实|今年[一二三四五六七八九十]+月|[一二三四五六七八九十]+月|\d+月|[一二三四五六七八九十\d]+号|(?:上午|下午|晚上|早上|中午)?[一二三四五六七八九十两\d]+点(?:半|[一二三四五六七八九十\d]+分?)?|周[一二三四五六日天])`)
	zhSpeakerVerb = []string{"住在", "住", "搬到", "搬去", "搬家", "搬回", "在", "是", "叫", "养了", "养", "要去", "要", "改去", "改成去", "提了", "买了", "入了", "换了", "打算", "准备", "计划", "想", "做", "当", "去", "回", "从", "离职", "辞职", "入职", "加入", "开始去", "开始在", "改学", "改练", "改跑", "改报", "开始学", "开始练", "开始做", "开始当", "跳槽", "转行", "改行", "喜欢", "爱吃", "讨厌", "不吃", "不喝", "不能", "不再", "对", "过敏", "来自", "老家", "怀孕", "怀了", "备孕", "生病", "住院", "体检", "查出", "看牙", "看病", "看医生", "复查", "面试", "出差", "上课", "考试", "见客户", "拔牙", "打针", "做手术"}
	zhNotVerbLead = []string{"去年", "在吗", "是的", "是不是", "要不", "想想", "对了", "对吧", "对啊", "对不对", "做饭了"}
)

// restoreSubjectZH returns s with 我 written before the first subjectless clause that is
// about the speaker; a sentence that names a person before that clause is left alone, since
// its later clauses are about that person.
func restoreSubjectZH(s string) string {
	if !hasHan(s) {
		return s
	}
	s = dialectFirstPerson.Replace(s)
	clauses := splitClausesZH(s)
	var b strings.Builder
	done := false
	for i, c := range clauses {
		if !done {
			body := strings.TrimLeft(c, " ")
			switch {
			case zhPronoun.MatchString(body):
				done = true
			case cessationZH.MatchString(body):
				// "二胡不拉了", "旧手机换掉了": a thing the speaker stopped or let go of,
				// told as the topic.
				body, done = "我"+body, true
			case startsWithRelationZH(body) != "":
				// A kinship noun as the clause's subject: the speaker's relation.
				body, done = "我"+body, true
			case i > 0 && strings.HasPrefix(body, "是") && strings.Contains(clauses[i-1], "不是"):
				// "不是X，是Y" contrasts two values of one subject, already told.
				done = true
			case i > 0 && copulaLeadZH(body) && !strings.ContainsAny(clauses[i-1], "我咱") && !speakerClauseZH(clauses[i-1]):
				// "小满换班主任了，现在是谭老师": a "是" without a subject goes on about
				// the subject of the clause before it, not the speaker.
				done = true
			}
			if done {
				b.WriteString(body)
				continue
			}
			if strings.HasPrefix(body, "家里") {
				b.WriteString("我家" + strings.TrimPrefix(body, "家里"))
				done = true
				continue
			}
			if speakerClauseZH(body) {
				b.WriteString("我" + body)
				done = true
				continue
			}
		}
		b.WriteString(c)
	}
	return b.String()
}

// copulaLeadZH reports a clause that opens, after its time words, with "是".
func copulaLeadZH(c string) bool {
	return strings.HasPrefix(afterTimeLeadZH(c), "是") || strings.HasPrefix(afterTimeLeadZH(c), "就是")
}

// afterTimeLeadZH is c without the time words it opens with.
func afterTimeLeadZH(c string) string {
	for {
		loc := zhTimeLead.FindStringIndex(c)
		if loc == nil || loc[1] == 0 {
			return c
		}
		c = c[loc[1]:]
	}
}

// cessationZH is a thing of the speaker's told as the topic and then stopped, let go of
// or changed.
var cessationZH = regexp.MustCompile(`^\p{Han}{1,4}?(?:也|都|已经|早就)?(?:不练了|不学了|不弹了|不玩了|不去了|不用了|不打了|不踢了|不跑了|不游了|不骑了|不画了|不唱了|不跳了|不追了|不下了|放弃了|戒了|停了|停掉了|换掉了|卖了|卖掉了|送人了|销户了|不算了)|^\p{Han}{2,8}?的事(?:先|暂时|已经)?(?:搁置了|黄了|泡汤了|不搞了|取消了)` +
	// a workplace left, told by where it is ("超市那边辞了")
	`|^\p{Han}{2,8}?那边(?:的工作)?(?:已经|也)?(?:辞了|辞掉了|离职了|不干了)` +
	// the speaker's own job, home or things changed ("工作换了，现在是…", "房子卖了")
	`|^(?:工作|公司|单位|房子|车|手机|电脑|学校|专业|岗位|职位|部门|号码|邮箱|地址|发型)(?:也|都|已经)?(?:换了|变了|搬了|改了|调了)`)

// speakerClauseZH reports a clause that opens, after its time words, with a verb.
func speakerClauseZH(c string) bool {
	rest := afterTimeLeadZH(c)
	// "现在都在菜市场买菜了": an adverb between the time and the verb.
	for _, adv := range []string{"都", "也", "还", "就", "又", "一般", "平时", "经常", "基本"} {
		if r, ok := strings.CutPrefix(rest, adv); ok {
			rest = r
			break
		}
	}
	for _, n := range zhNotVerbLead {
		if strings.HasPrefix(rest, n) {
			return false
		}
	}
	for _, v := range zhSpeakerVerb {
		if strings.HasPrefix(rest, v) {
			return true
		}
	}
	return false
}

// startsWithRelationZH returns the kinship noun a clause opens with, if any.
func startsWithRelationZH(c string) string {
	for _, r := range strings.Split(relZH, "|") {
		if strings.HasPrefix(c, r) {
			return r
		}
	}
	return ""
}

// splitClausesZH cuts s after each clause mark, keeping the marks.
func splitClausesZH(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune("，,：:；;。！？!?", r) {
			end := i + len(string(r))
			out = append(out, s[start:end])
			start = end
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// droppedSubjectEN opens a sentence with a past verb and no subject: in a user's chat turn
// ("Sold my bike last week.", "Traded it in for …") the dropped subject is the speaker.
var droppedSubjectEN = regexp.MustCompile(`(?i)^(?:(?:just|finally|recently|also|then)\s+)?(?:got back|came back|went|got|spent|finished|started|made|bought|took|tried|visited|joined|signed up|booked|met|won|adopted|sold|picked up|switched|moved|relocated|quit|left|traded|gave away|got rid of|ditched|replaced|upgraded|swapped|ordered|lost|broke|hit|reached|smashed|nailed|passed|cancelled|canceled|booked|finished|found|gave up)\b`)

// droppedProgressiveEN opens a sentence with what the speaker is busy with and no subject
// ("Juggling pickups again: …").
var droppedProgressiveEN = regexp.MustCompile(`(?i)^(?:(?:still|just|also|now|finally|slowly)\s+)?(?:juggling|dealing\s+with|sorting\s+out|wrangling|handling|getting\s+used\s+to|settling\s+in(?:to)?|adjusting\s+to|starting\s+(?:as|at|out|on|my|a|an|the|work|school|college|uni)|learning|training\s+for|working\s+(?:as|at|on|for|from|nights|days|weekends))\b`)

// droppedStateEN opens a sentence with what the speaker is and no subject: "Big fan of
// Thai food.", "Not a fan of horror.", "Married, two kids.", "Going to Oslo in May."
var droppedStateEN = regexp.MustCompile(`(?i)^(?:(?:not|never)\s+(?:a|much of a|really a)\s+fan|(?:a\s+)?(?:big|huge|massive|total|lifelong|longtime|long-time)\s+fan|(?:(?:happily|recently|newly|just|still|finally)\s+)?(?:married|single|divorced|engaged|widowed|retired|pregnant|self-employed|unemployed|left-handed|right-handed)\b|going\s+to\s+\p{Lu}|heading\s+to\s+\p{Lu}|off\s+to\s+\p{Lu}|flying\s+(?:out\s+)?to\s+\p{Lu}|driving\s+(?:up\s+|down\s+)?to\s+\p{Lu}|leaving\s+for\s+\p{Lu})`)

var bareFanEN = regexp.MustCompile(`(?i)^(?:big|huge|massive|total|lifelong|longtime|long-time)\s+fan\b`)

// droppedPastGenericEN opens a sentence with a regular past verb and what it acted on
// ("handed in my notice", "repainted the kitchen"): the dropped subject is the speaker.
// Participles that describe a state ("based in", "married to") take "I'm".
var droppedPastGenericEN = regexp.MustCompile(`(?i:^(?:(?:just|finally|recently|also|then|officially)\s+)?([a-z]{3,}ed)\s+(?:(?:in|up|out|off|on|back|over|down|away)\s+)?)(?:(?i:my|our|the|a|an|it|them|him|her|some|this|that|to|for|with|into|from|at|by|two|three|four|five)\b|[A-Z])`)

// stateParticiples are the past participles that say what the speaker is, not did.
var stateParticiples = map[string]bool{"based": true, "located": true, "married": true, "engaged": true, "tired": true,
	"interested": true, "excited": true, "obsessed": true, "stressed": true, "scared": true, "bored": true,
	"worried": true, "retired": true, "qualified": true, "certified": true, "allergic": true, "stuck": true,
	"addicted": true, "attached": true, "committed": true, "devoted": true, "related": true, "employed": true,
	"hooked": true, "involved": true, "pleased": true, "thrilled": true, "annoyed": true, "exhausted": true}

// droppedPerfectEN opens a sentence with "been …ing" and no subject ("Been baking a lot
// lately."): what the speaker has been doing.
var droppedPerfectEN = regexp.MustCompile(`(?i)^(?:(?:just|also|still|really)\s+)?been\s+[a-z]+ing\b`)

// restoreSubject writes the speaker back as the subject of a sentence that dropped it:
// 我 in Chinese (restoreSubjectZH), "I" before an opening past verb in English.
func restoreSubject(s string) string {
	if hasHan(s) {
		return restoreSubjectZH(s)
	}
	if droppedSubjectEN.MatchString(s) {
		return "I " + lowerFirst(s)
	}
	if m := droppedPastGenericEN.FindStringSubmatch(s); m != nil && !strings.HasSuffix(strings.ToLower(m[1]), "eed") {
		if stateParticiples[strings.ToLower(m[1])] {
			return "I'm " + lowerFirst(s)
		}
		return "I " + lowerFirst(s)
	}
	if droppedStateEN.MatchString(s) {
		if bareFanEN.MatchString(s) {
			return "I'm a " + lowerFirst(s) // "Big fan of …"
		}
		return "I'm " + lowerFirst(s)
	}
	if droppedPerfectEN.MatchString(s) {
		return "I've " + lowerFirst(s)
	}
	if droppedProgressiveEN.MatchString(s) {
		return "I'm " + lowerFirst(s)
	}
	return s
}

// restoreSubjects applies restoreSubject to each sentence of a turn.
func restoreSubjects(text string) string {
	parts := splitSentences(text)
	for i, s := range parts {
		parts[i] = restoreSubject(s)
	}
	sep := " "
	if hasHan(text) {
		sep = ""
	}
	return strings.Join(parts, sep)
}
