package extractor

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// A user's short reply to the assistant's question says nothing on its own ("Pepper!",
// "杭州，刚搬来半年"): the question supplies the predicate. answered rewrites such a reply
// as the statement it makes ("My dog's name is Pepper"), which the rules then read as they
// read any statement. The fact is still the user's: only the user's words fill the slot.

// answerFrame is one kind of question and the statement a reply to it makes.
type answerFrame struct {
	q   *regexp.Regexp
	say func(q []string, a string) string
}

type answerFrames struct {
	en, zh    []answerFrame
	yesEN     *regexp.Regexp // a reply's leading yes or no
	noEN      *regexp.Regexp
	yesZH     *regexp.Regexp
	noZH      *regexp.Regexp
	callMeEN  *regexp.Regexp
	callMeZH  *regexp.Regexp
	tailZH    *regexp.Regexp
	stillEN   *regexp.Regexp // "Still in Porto?", "Are you still at Acme?"
	ynBeEN    *regexp.Regexp // "Are you vegetarian?"
	ynDoEN    *regexp.Regexp // "Do you still play the cello?"
	ynBeZH    *regexp.Regexp // "你是素食者吗？"
	ynStillZH *regexp.Regexp // "还在原来的公司吗？"
	proNameEN *regexp.Regexp // "What's her name?"
	proNameZH *regexp.Regexp // "它叫啥？"
	ownNounEN *regexp.Regexp // "my daughter", "our cat"
	ownNounZH *regexp.Regexp // "我家狗", "我女儿"
}

func newAnswerFrames() *answerFrames {
	re := regexp.MustCompile
	as := func(format string) func(q []string, a string) string {
		return func(q []string, a string) string {
			s := strings.ReplaceAll(format, "{A}", a)
			if len(q) > 1 {
				s = strings.ReplaceAll(s, "{1}", q[1])
			}
			return s
		}
	}
	f := &answerFrames{
		yesEN:     re(`(?i)^(?:yes|yeah|yep|yup|sure|correct|right|exactly|indeed|absolutely|definitely|of course)\b[,.!]*\s*`),
		noEN:      re(`(?i)^(?:no|nope|nah|not anymore|not any more|not really|not now|no longer)\b[,.!]*\s*`),
		yesZH:     re(`^(?:是的|是啊|是呀|对的|对啊|对呀|对|嗯嗯|嗯|没错|是)[，,。!！\s]*`),
		noZH:      re(`^(?:不是了|不是|没有了|没有|不在了|不对|早就不是了|早不在了|不了)[，,。!！\s]*`),
		callMeEN:  re(`(?i)^(?:(?:just|you can|please)\s+)*(?:call me|it's|it is|i'm|i am|my name is|name's)\s+`),
		callMeZH:  re(`^(?:叫我|我叫|我是|喊我|就叫我)`),
		tailZH:    re(`(?:就行了?|就好了?|就可以了?|吧|哈|啦|呀|呢|哦|～|~|[。！!.，,])+$`),
		stillEN:   re(`(?i)\b(?:still|are you still|you still)\s+(in|at|with|living in|based in|working at|working for)\s+(\p{Lu}[\p{L}\d&'-]*(?:\s\p{Lu}[\p{L}\d&'-]*){0,2})\s*\?$`),
		ynBeEN:    re(`(?i)^(?:and\s+|so\s+)?are\s+you\s+(?:still\s+|currently\s+|now\s+)?(an?\s+[a-z][a-z -]{1,30}|vegetarian|vegan|pescatarian|gluten-free|lactose intolerant|allergic to [a-z ]{2,30}|married|single|pregnant|retired|left-handed|right-handed|diabetic|sober)\s*\?$`),
		ynDoEN:    re(`(?i)^(?:and\s+|so\s+)?do\s+you\s+(?:still\s+)?(play|speak|own|have|drive|use|eat|drink|ride|run|swim|smoke|work at|work for|live in)\s+([^?]{2,40})\?$`),
		ynBeZH:    re(`^你(?:现在|目前)?(?:还)?是(\p{Han}{2,8})吗[？?]$`),
		ynStillZH: re(`(?:你)?(?:现在)?还(?:在|住在)(\p{Han}{2,10}?)(?:上班|工作|住)?吗[？?]$`),
		proNameEN: re(`(?i)\b(?:he|she|they|his|her|their|him|them|its)\b|\bit\b(?:\s+called)`),
		proNameZH: re(`(?:它|他|她|ta|TA)((?:的名字)?叫(?:什么|啥)(?:名字)?|(?:说|讲)(?:什么|哪国|哪种)(?:语|话|语言)|(?:在哪|在哪里|在哪儿)(?:上班|工作|住)|(?:是做什么的|做什么工作|今年几岁|多大了?|几岁了?))`),
		ownNounEN: re(`(?i)\b(?:my|our)\s+(?:(?:new|little|old|baby|youngest|oldest|eldest)\s+)?(` + relEN + `|` + petEN + `)\b`),
		ownNounZH: re(`(?:我(?:家|的|们家)?(?:的)?)?(` + relZH + `|` + petZH + `)`),
	}
	f.en = []answerFrame{
		{re(`(?i)\b(?:what(?:'s| is) your (?:first |full )?name|what (?:should|can|do) i call you|how (?:should|do) i (?:call|address) you|what do (?:you go by|people call you)|who am i (?:talking|speaking|chatting) (?:to|with))\b`), as("My name is {A}")},
		{re(`(?i)\bwhere (?:are you|r u) (?:originally )?from\b|\bwhere did you grow up\b|\bwhere(?:'s| is) your hometown\b`), as("I'm from {A}")},
		{re(`(?i)\bwhere (?:are you|r u)(?: (?:based|located|living|staying|now|these days|at the moment|right now|currently|at))*\s*\?|\bwhere do you (?:live|stay|call home)\b|\bwhich (?:city|town|country|part of [a-z ]+) (?:are you|do you live)\b|\bwhere(?:'s| is) home\b`), as("I live in {A}")},
		{re(`(?i)\bwhat do you do(?: for (?:work|a living))?\b|\bwhat(?:'s| is) your (?:job|role|profession|occupation|line of work)\b|\bwhat kind of work do you do\b`), jobAnswer},
		{re(`(?i)\bwhere do you work\b|\bwho do you work for\b|\bwhich company\b|\bwhat company\b`), as("I work at {A}")},
		{re(`(?i)\bwhat(?:'s| is) (?:your|the) ([a-z]+(?:[ -][a-z]+)??)(?:'s)? name\b|\bwhat(?:'s| is) your ([a-z]+(?:[ -][a-z]+)?) called\b|\bwhat do you call (?:your|the) ([a-z]+)\b`), nameOfAnswer},
		{re(`(?i)\bwhat(?:'s| is) your (?:favou?rite|go-to|usual|preferred) ([a-z]+(?: [a-z]+)?)\b`), as("My favorite {1} is {A}")},
		// Questions about the user's person or pet, often by a pronoun the antecedent
		// replaced ("what music does he play?").
		{re(`(?i)\b(?:which|what) ([a-z]+) does your ([a-z -]+?) (speak|use|play|like|eat|drive|prefer|study)\b`), func(q []string, a string) string {
			return "My " + q[2] + " " + thirdSingular(strings.ToLower(q[3])) + " " + a
		}},
		{re(`(?i)\bhow old is your ([a-z -]+?)\s*\?`), as("My {1} is {A}")},
		{re(`(?i)\bwhere does your ([a-z -]+?) (live|work)\b`), func(q []string, a string) string {
			prep := map[string]string{"live": " lives in ", "work": " works at "}[strings.ToLower(q[2])]
			return "My " + q[1] + prep + a
		}},
		{re(`(?i)\bwhat does your ([a-z -]+?) do(?: for (?:work|a living))?\b`), func(q []string, a string) string {
			return "My " + q[1] + " works as " + article(a) + a
		}},
		{re(`(?i)\b(?:which|what) ([a-z]+(?: [a-z]+)?) do you (use|drive|have|own|play|speak|prefer|ride|take)\b`), useAnswer},
		{re(`(?i)\bwhen(?:'s| is) your ([a-z]+(?: [a-z]+)?)\b`), as("My {1} is {A}")},
		{re(`(?i)\bany (?:food )?allergies\b|\bare you allergic to anything\b|\bwhat are you allergic to\b`), allergyAnswer},
		{re(`(?i)\bany (?:dietary (?:restrictions|requirements|needs)|foods? (?:you|to) avoid)\b|\banything you (?:don't|do not|can't|cannot) eat\b|\bhow do you eat\b`), dietAnswer},
		{re(`(?i)\bwhat time zone\b|\bwhich time ?zone\b`), as("My time zone is {A}")},
	}
	f.zh = []answerFrame{
		{re(`怎么称呼|你叫什么(?:名字)?|您贵姓|你的名字是|叫你什么`), nameAnswerZH},
		{re(`你是哪里人|你老家(?:在)?哪|你是哪儿人`), as("我老家是{A}")},
		{re(`你(?:现在)?(?:在|住在?)哪(?:个城市|座城市|里|儿)?|你在哪个城市|你家在哪`), as("我住在{A}")},
		{re(`你是做什么(?:工作)?的|你做什么工作|你的工作是|你是干什么的|你从事什么`), jobAnswerZH},
		{re(`你在哪(?:家公司|个公司|里|儿)(?:上班|工作)|你在什么公司|你在哪上班|你在哪工作`), as("我在{A}上班")},
		{re(`你(?:家|的)?(\p{Han}{1,4}?)叫(?:什么|啥)(?:名字)?`), as("我的{1}叫{A}")},
		{re(`你的(\p{Han}{1,4}?)(?:说|讲)(?:什么|哪国|哪种)(?:语|话|语言)`), as("我的{1}说{A}")},
		{re(`你的(\p{Han}{1,4}?)在哪(?:里|儿)?(?:上班|工作)`), as("我的{1}在{A}上班")},
		{re(`你的(\p{Han}{1,4}?)(?:是做什么的|做什么工作)`), as("我的{1}是{A}")},
		{re(`你对什么过敏|有什么过敏`), as("我对{A}过敏")},
		{re(`你的(\p{Han}{2,4}?)是(?:什么时候|哪天|几号)`), as("我的{1}是{A}")},
		{re(`你(?:平时)?用(?:的)?(?:是)?什么(\p{Han}{1,4})`), as("我用的{1}是{A}")},
	}
	return f
}

// nameOfAnswer says whose name the reply is: "My dog's name is Pepper".
func nameOfAnswer(q []string, a string) string {
	who := q[1] + q[2] + q[3]
	if who == "" || strings.Fields(a) == nil || !startsUpper(a) {
		return ""
	}
	return "My " + who + "'s name is " + a
}

// useAnswer says what the speaker uses, drives, plays: "I use neovim mostly".
func useAnswer(q []string, a string) string {
	switch verb := strings.ToLower(q[2]); verb {
	case "have", "own":
		return "I have " + a
	case "use", "prefer":
		return "My " + q[1] + " is " + a
	default:
		return "I " + verb + " " + a
	}
}

// jobAnswer says the speaker's work: "I work as an ER nurse at St Luke's".
func jobAnswer(_ []string, a string) string {
	if articleLead.MatchString(a) {
		return "I work as " + a
	}
	return "I work as " + article(a) + a
}

var articleLead = regexp.MustCompile(`(?i)^(?:a|an|the)\s`)

func allergyAnswer(_ []string, a string) string {
	if strings.Contains(strings.ToLower(a), "allerg") {
		return a
	}
	return "I'm allergic to " + a
}

func dietAnswer(_ []string, a string) string {
	if strings.Contains(strings.ToLower(a), "allerg") {
		return a
	}
	if loc := dietWord.FindStringIndex(a); loc != nil {
		return "I'm " + strings.ToLower(a[:loc[1]]) + a[loc[1]:]
	}
	return "I don't eat " + a
}

var dietWord = regexp.MustCompile(`(?i)^(?:strictly\s+|mostly\s+|fully\s+)?(?:vegetarian|vegan|pescatarian|kosher|halal|keto|paleo|[a-z]+-free|lactose intolerant|plant-based)\b`)

func nameAnswerZH(_ []string, a string) string {
	return "我叫" + a
}

func jobAnswerZH(_ []string, a string) string {
	a = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(a, "是"), "在"), "的")
	if jobEndZH.MatchString(a) && !strings.HasPrefix(a, "做") {
		return "我是" + a
	}
	return "我是做" + strings.TrimPrefix(strings.TrimPrefix(a, "做"), "搞") + "的"
}

// startsUpper reports s opening as a name does: a capital, or a letter of a script
// without case (a Chinese name).
func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r >= 'A' && r <= 'Z' || r > 127
}

// inContext is user turn t as the rules read it after the turns before it: a short reply
// as the statement it answers ("Pepper!" after "what's your dog's name?"), a correction
// as the statement it corrects ("typo, it's 4417" after "my code is 4471"). The gate and
// the extractor read a turn the same way through it.
func (o *Offline) inContext(t memory.Turn, earlier []memory.Turn) memory.Turn {
	if t.Role == memory.RoleUser {
		t.Content = spelledOut(t.Content)
	}
	return o.corrected(o.answered(t, earlier), earlier)
}

// answered returns t with its content rewritten as the statement it makes when t is a
// short reply to the assistant's question just before it; otherwise t as it is.
func (o *Offline) answered(t memory.Turn, earlier []memory.Turn) memory.Turn {
	prev, ok := lastSpoken(earlier)
	if !ok || prev.Role != memory.RoleAssistant || t.Role != memory.RoleUser {
		return t
	}
	q := lastQuestion(prev.Content)
	if q == "" || len(t.Content) > maxAnswerBytes {
		return t
	}
	q = o.answers.withAntecedent(q, earlier)
	if s := o.answers.statement(q, spokenText(t)); s != "" {
		t.Content = s
	}
	return t
}

// withAntecedent writes the person or pet a question names by a pronoun ("What's her
// name?", "它叫什么？") as the noun the user last spoke of ("your daughter's name"), so
// that the reply fills that noun's slot. A question without such a pronoun, or without a
// noun to refer to, is returned as it is.
func (f *answerFrames) withAntecedent(q string, earlier []memory.Turn) string {
	zh := hasHan(q)
	pro := f.proNameEN
	if zh {
		pro = f.proNameZH
	}
	if q == "" || !pro.MatchString(q) {
		return q
	}
	seen := 0
	for i := len(earlier) - 1; i >= 0 && seen < 4; i-- {
		t := earlier[i]
		if t.Role != memory.RoleUser {
			continue
		}
		seen++
		var m []string
		if zh {
			m = f.ownNounZH.FindStringSubmatch(t.Content)
		} else {
			m = f.ownNounEN.FindStringSubmatch(t.Content)
		}
		if m == nil {
			continue
		}
		if zh {
			return pro.ReplaceAllString(q, "你的"+m[1]+"$1")
		}
		who := "your " + strings.ToLower(m[1])
		return pro.ReplaceAllStringFunc(q, func(p string) string {
			switch strings.ToLower(p) {
			case "his", "her", "their", "its":
				return who + "'s"
			case "him", "them", "it":
				return who
			}
			return who // he, she, they
		})
	}
	return q
}

// maxAnswerBytes bounds a reply read as an answer before its words are counted.
const maxAnswerBytes = 300

// lastQuestion is the question a turn ends with, or "".
func lastQuestion(text string) string {
	ss := splitSentences(strings.TrimSpace(text))
	if len(ss) == 0 {
		return ""
	}
	q := strings.TrimSpace(ss[len(ss)-1])
	if !strings.HasSuffix(q, "?") && !strings.HasSuffix(q, "？") {
		return ""
	}
	return q
}

// maxReplyWords bounds a reply read as an answer: a longer reply is a statement of its own.
const maxReplyWords, maxReplyRunesZH = 10, 24

// statement is what reply a says in answer to question q, or "" when q is not a question
// it knows, a is not short, or a says no without saying what holds instead.
func (f *answerFrames) statement(q, a string) string {
	a = strings.TrimSpace(a)
	if q == "" || a == "" || isQuestion(a) {
		return ""
	}
	if hasHan(q) {
		return f.statementZH(q, a)
	}
	if hasHan(a) || len(strings.Fields(a)) > maxReplyWords {
		return ""
	}
	yes, no := f.yesEN.FindString(a), f.noEN.FindString(a)
	rest := strings.TrimSpace(strings.TrimRight(a[len(yes)+len(no):], ".!"))
	if m := f.stillEN.FindStringSubmatch(q); m != nil {
		// "Still in Porto?" — "Nope, Lisbon now." tells the new value in the old frame.
		prep := strings.ToLower(m[1])
		if !strings.Contains(prep, "living") && !strings.Contains(prep, "based") && !strings.Contains(prep, "working") {
			prep = map[string]string{"in": "living in", "at": "working at", "with": "working with"}[prep]
		}
		switch {
		case no != "" && rest != "" && startsUpper(rest) && len(strings.Fields(rest)) <= 4:
			return "I'm " + prep + " " + rest
		case yes != "" && rest == "":
			return "I'm still " + prep + " " + m[2]
		}
		return ""
	}
	if m := f.ynBeEN.FindStringSubmatch(q); m != nil {
		if yes != "" {
			return joinReply("I'm "+m[1], rest, ", ")
		}
		return ""
	}
	if m := f.ynDoEN.FindStringSubmatch(q); m != nil {
		if yes != "" {
			return strings.TrimSpace("I " + strings.ToLower(m[1]) + " " + yourToMy(m[2]) + " " + rest)
		}
		return ""
	}
	if m := confirmQuestionEN.FindStringSubmatch(q); m != nil {
		// "Just to confirm, your flight lands at T5?" — "Yes, landing around 7.": the
		// speaker says it now, with what they add.
		if yes != "" && !strings.HasPrefix(strings.ToLower(rest), "but") {
			return joinReply(youToI(m[1]), rest, ", ")
		}
		return ""
	}
	if m := tagQuestionEN.FindStringSubmatch(q); m != nil {
		// "Your lease ends in May, right?" — "Yep.": the speaker says it now.
		if yes != "" && !strings.HasPrefix(strings.ToLower(rest), "but") {
			return youToI(m[1])
		}
		return ""
	}
	if no != "" || yes != "" && rest == "" {
		return ""
	}
	rest = f.callMeEN.ReplaceAllString(rest, "")
	if rest == "" || pronounLead.MatchString(rest) {
		return "" // "I have celiac" says what it says
	}
	if evasiveEN.MatchString(rest) {
		return "" // "can't say", "none", "whatever is installed": no value
	}
	for _, fr := range f.en {
		if m := fr.q.FindStringSubmatch(q); m != nil {
			return fr.say(m, rest)
		}
	}
	return ""
}

// wentZH is a reply that tells where the speaker went instead, after its time words.
var wentZH = regexp.MustCompile(`^((?:上个月|上周|去年|今年|前段时间|最近|早就|已经|刚)*)(?:去了|到了|换到了?|跳到了?|跳槽到了?|搬到了?|换成了?)([A-Za-z][\w&]{1,15}|\p{Han}{2,8}?)(?:了)?$`)

// evasiveEN and evasiveZH are replies that give no value: a refusal, a shrug, a negation.
var (
	evasiveEN = regexp.MustCompile(`(?i)^(?:can't|cannot|rather|prefer|not|no|none|nothing|nobody|nowhere|dunno|idk|whatever|anything|any|depends|it depends|skip|pass|private|secret|later|nah|n/a|why|who|what|hmm+|um+|uh+)\b|\b(?:not|n't|never|no idea|doesn't matter|don't know|rather not)\b`)
	evasiveZH = regexp.MustCompile(`^(?:这个|那个)?(?:不方便|不告诉|保密|不知道|不清楚|随便|都行|无所谓|算了|以后再说|你猜|秘密|不想说|暂时|还没|没有|干嘛|为什么|问这个)|不|没|保密|秘密`)
)

// pronounLead is a reply that is a statement with its own subject.
var pronounLead = regexp.MustCompile(`(?i)^(?:i|i'm|i've|i'd|we|we're|my|our)\b`)

func (f *answerFrames) statementZH(q, a string) string {
	if utf8.RuneCountInString(a) > maxReplyRunesZH {
		return ""
	}
	yes, no := f.yesZH.FindString(a), f.noZH.FindString(a)
	rest := a[len(yes)+len(no):]
	rest = f.tailZH.ReplaceAllString(strings.TrimSpace(rest), "")
	if m := f.ynStillZH.FindStringSubmatch(q); m != nil {
		// "还在原来的公司吗？" — "没有，跳到字节了": the reply's own clause, about the
		// speaker.
		if no == "" || rest == "" {
			return ""
		}
		// "不在了，年初去了京东": where they went is the new value of what was asked.
		if n := wentZH.FindStringSubmatch(rest); n != nil {
			if isPlace(m[1]) {
				return "我" + n[1] + "搬到了" + n[2]
			}
			return "我" + n[1] + "跳槽到" + n[2] + "了"
		}
		return "我" + rest
	}
	if m := f.ynBeZH.FindStringSubmatch(q); m != nil {
		if yes != "" {
			return joinReply("我是"+m[1], rest, "，")
		}
		return ""
	}
	if m := confirmQuestionZH.FindStringSubmatch(q); m != nil {
		// "再确认下，您是周三到吗？" — "对，早上七点到": the speaker says it now.
		if yes != "" && !strings.HasPrefix(rest, "但") && !strings.HasPrefix(rest, "不过") {
			return joinReply(strings.NewReplacer("您", "我", "你", "我").Replace(m[1]), rest, "，")
		}
		return ""
	}
	if m := tagQuestionZH.FindStringSubmatch(q); m != nil {
		// "您的车险是下个月到期吧？" — "对。": the speaker says it now.
		if yes != "" && rest == "" {
			return strings.NewReplacer("您", "我", "你", "我").Replace(m[1])
		}
		return ""
	}
	rest = f.callMeZH.ReplaceAllString(rest, "")
	if no != "" || rest == "" || strings.ContainsAny(rest, "我咱") || evasiveZH.MatchString(rest) {
		return ""
	}
	for _, fr := range f.zh {
		if m := fr.q.FindStringSubmatch(q); m != nil {
			head, tail, _ := strings.Cut(rest, "，")
			s := fr.say(m, head)
			if tail != "" {
				s += "，" + tail
			}
			return s
		}
	}
	return ""
}

// joinReply is statement s with what else the reply said after sep.
func joinReply(s, rest, sep string) string {
	if rest == "" {
		return s
	}
	return s + sep + rest
}

// tagQuestionEN and tagQuestionZH state something of the listener and ask them to
// confirm it: "Your lease ends in May, right?", "您的车险是下个月到期吧？".
var (
	tagQuestionEN = regexp.MustCompile(`(?i)^(?:(?:so|and|just\s+to\s+confirm|to\s+confirm|just\s+checking)[,:]?\s+)?((?:your|you're|you\s+are|you\s+have|you've|you)\b[^?]{4,120}?),?\s*(?:right|correct|yes|is\s+that\s+right|is\s+that\s+correct|isn't\s+it|aren't\s+you|don't\s+you|no)\s*\?$`)
	tagQuestionZH = regexp.MustCompile(`^((?:您|你)\p{Han}[^？?]{2,40}?)(?:吧|对吧|对不对|是吗|没错吧|是不是)[？?]$`)
	// confirmQuestionEN and confirmQuestionZH ask the listener to confirm what they say of
	// them, without a tag: "Just to confirm, your flight lands at T5?", "再确认下，您是周三到吗？".
	confirmQuestionEN = regexp.MustCompile(`(?i)^(?:just\s+to\s+confirm|to\s+confirm|just\s+checking|confirming|quick\s+check|to\s+be\s+sure|just\s+to\s+be\s+sure|so)[,:]?\s+((?:your|you're|you\s+are|you\s+have|you've|you'll|you\s+will|you)\b[^?]{4,120}?)\s*\?$`)
	confirmQuestionZH = regexp.MustCompile(`^(?:确认(?:一)?下|再确认(?:一)?下|跟您确认(?:一下|下)|跟你确认(?:一下|下)|想确认(?:一下|下)|确认下)[，,：:]?\s*((?:您|你)[^？?]{2,40}?)(?:吗|对吗|是吗|对吧)?[？?]$`)
)

// youToI turns a statement of the listener's into the speaker's: "your lease ends" → "my
// lease ends", "you're on nights" → "I'm on nights".
func youToI(s string) string {
	s = youAreEN.ReplaceAllString(s, "I'm")
	s = youAreLongEN.ReplaceAllString(s, "I am")
	s = youHaveEN.ReplaceAllString(s, "I've")
	s = yourToMy(s)
	return upperFirst(youEN.ReplaceAllString(s, "I"))
}

var (
	youAreEN     = regexp.MustCompile(`(?i)\byou're\b`)
	youAreLongEN = regexp.MustCompile(`(?i)\byou\s+are\b`)
	youHaveEN    = regexp.MustCompile(`(?i)\byou've\b`)
	youEN        = regexp.MustCompile(`(?i)\byou\b`)
)

// yourToMy turns the listener's possessive of a question into the speaker's.
func yourToMy(s string) string {
	return yourWord.ReplaceAllStringFunc(s, func(w string) string {
		if strings.EqualFold(w, "yours") {
			return "mine"
		}
		return "my"
	})
}

var yourWord = regexp.MustCompile(`(?i)\byours?\b`)
