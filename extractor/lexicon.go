package extractor

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// signalCue is one signal's pattern over lower-cased text. Excludes are phrases removed
// before matching: false friends such as 特别 for 别, or "don't worry" for "don't".
type signalCue struct {
	name     string
	re       *regexp.Regexp
	excludes []string
	unless   *regexp.Regexp // like excludes, as a pattern
}

func (c signalCue) match(lower string) bool {
	for _, x := range c.excludes {
		lower = strings.ReplaceAll(lower, x, " ")
	}
	if c.unless != nil {
		lower = c.unless.ReplaceAllString(lower, " ")
	}
	return c.re.MatchString(lower)
}

// lexicon is the bilingual vocabulary of the gate and the offline extractor: one
// definition, so a sentence the extractor has a rule for is never gated out before it.
type lexicon struct {
	idents      []identRule    // identity facts; a match is also the gate's identity signal
	clauses     *clauseRules   // clause facts (relations, pets, moves, routines …): also identity signals
	relax       *regexp.Regexp // a constraint relaxed ("也可以了", "fine now"): part of the change cue
	cues        []signalCue    // user signals, in priority order
	claim       signalCue
	decision    signalCue
	task        signalCue
	stateCue    *regexp.Regexp
	firstPerson *regexp.Regexp
	requestEN   *regexp.Regexp
	requestZH   *regexp.Regexp
	smallTalk   map[string]struct{}
	selfFillers *regexp.Regexp // first-person stock phrases that tell nothing ("i think", "我觉得")
	command     *regexp.Regexp // a request or order to the assistant ("help me …", "帮我…")
	listener    *regexp.Regexp // the second person: a sentence about the listener
	interject   *regexp.Regexp // a sentence's leading interjection ("wow,", "yeah!")
	directive   *regexp.Regexp // an instruction that names the listener ("you should always …", "你以后…")
	recall      *regexp.Regexp // the speaker's own memory ("we still remember …"): no request to remember
	idleAdverb  *regexp.Regexp // "always"/"never" before no verb ("always around for you"): no instruction
	vocative    *regexp.Regexp // a name the speaker addresses at either end of a sentence ("…, Maya!")
	event       *regexp.Regexp // a first-person event, plan or possession ("I adopted …", "我上周去了…")
	ourselves   *regexp.Regexp // a generic "we" ("we all", "each other"): a remark about people, not news
	smallMax    int            // longest small-talk phrase, in runes
	temporal    *Temporal
	fixCue      *regexp.Regexp // what a fix of a failed tool call reads like ("retry with", "改用")
}

// relaxPattern marks a constraint that no longer holds.
const relaxPattern = `也可以了|也行了|也没问题了|也可以|不用再|不再|不必再|不用避开|不需要避开|\bfine now\b|\bok(?:ay)? now\b|\bno longer\b|\banymore\b`

func newLexicon() *lexicon {
	re := regexp.MustCompile
	l := &lexicon{
		cues: []signalCue{
			{name: SignalProcedure, re: re(`(?:如果|要是|一旦|假如|万一|当)[^。！？]{0,30}(?:失败|报错|出错|超时|挂了|不行|不可用|异常|错误)|\b(?:if|when|whenever|in case)\b[^.!?]{0,60}\b(?:fails?|failed|errors? out|times? out|timed out|is down|goes down|breaks|crashes|returns? (?:an? )?(?:error|\d{3}))` +
				// an order for a task of the listener's: "before you deploy, check the dashboards"
				`|\b(?:before|after|once|whenever)\s+(?:you|we)\s+[^,.;!?]{3,60},\s*(?:please\s+)?(?:make sure|be sure|always|first|double-check|check|ping|run|verify|confirm|send|notify|tell|ask|email|loop in|cc|back up|update|lock|turn off)\b` +
				// a step told by a condition or by its number: "if the queue backs up, page
				// the on-call first", "step one is a fresh clone, then …"
				`|^(?:and\s+|also\s+)?if\s+[^,.;!?]{3,50},\s*(?:please\s+)?(?:just\s+)?(?:ping|call|tell|ask|email|message|notify|page|escalate|restart|roll back|revert|rerun|re-run|retry|pause|stop|switch|use|check|run|open|file|clear|flush)\b|\b(?:step\s+(?:one|1)|the\s+first\s+step)\s+is\b|第一步(?:是|先)`),
				excludes: []string{"if you get a chance", "if you have time", "if you have a minute", "if you can", "if possible", "if you want", "if you like", "if you'd like", "if you don't mind", "if you're free", "if you are free"}},
			{name: SignalRemember, re: re(`记住|记得|别忘了|不要忘了|不要忘记|记下来|记一下|\bremember\b|\bdon't forget\b|\bdo not forget\b|\bkeep in mind\b|\bmake a note\b|\bnote that\b|\bnote to self\b`),
				excludes: []string{"我记得", "不记得", "还记得", "记得吗", "你记得", "do you remember", "i remember", "don't remember", "can't remember", "do not remember"}},
			{name: SignalDecision, re: re(`最终决定|最后决定|决定|定了|就这么定|敲定|选定|拍板|结论|\bwe(?:'ve)? decided\b|\bi(?:'ve)? decided\b|\bdecided to\b|\bdecision\b|\blet's go with\b|\b(?:we|i)\s+(?:finally\s+|eventually\s+)?(?:went with|chose|picked|opted for)\b|选了|选择了|\bwe(?:'ll| will) go with\b|\bwe agreed\b|\bagreed to\b|\bconclusion\b|\bconcluded\b|\bsettled on\b|\blet's\s+(?:just\s+)?(?:lock|freeze|pin|stick with|standardi[sz]e on|settle on|cap|target)\b`),
				excludes: []string{"你决定", "你来决定", "还没决定", "没决定", "不决定", "预定了", "一定了", "haven't decided", "not decided", "undecided", "didn't decide", "you decide"}},
			{name: SignalIdentity, re: re(`我叫|我的名字|我住在|我住|我家在|我在[^，。,.]{1,15}(?:工作|上班)|我就职于|我来自|我是|我的[^，。,.!！?？]{1,10}(?:是|叫)|\bmy name is\b|\bcall me\b|\bi'm called\b|\bi live in\b|\bi(?:'m| am) based in\b|\bi work (?:at|for|as)\b|\bi(?:'m| am) from\b|\bi come from\b|\bi(?:'m| am) an? \b|\bmy [a-z' -]{1,30} (?:is|are)\b`),
				excludes: []string{"我是说", "我是不是", "我是想", "我是在问", "我是问", "我是觉得", "我的意思是", "我的问题是", "我的天", "i'm a bit", "i am a bit", "i'm a little", "i am a little", "i'm a fan", "i'm a big fan", "i'm a huge fan", "my bad", "my pleasure", "my point is", "my question is", "my guess is"}},
			{name: SignalProhibition, re: re(`不要|别|不能|禁止|不许|不准|避开|避免|从不|从来不|绝不|决不|不可以|千万别|不吃|不喝|不用|\bnever\b|\bdon't\b|\bdo not\b|\bavoid\b|\bcan't\b|\bcannot\b|\bcan not\b|\bmust not\b|\bmustn't\b|\bno more\b|\bstop \w+ing\b`),
				excludes: []string{"要不要", "能不能", "不能不", "别忘了", "别人", "特别", "区别", "分别", "类别", "告别", "性别", "级别", "个别", "识别", "辨别", "差别", "别的", "别处", "别墅", "别名", "鉴别", "派别", "离别", "道别", "送别", "惜别", "别致", "不要紧", "不要客气", "别客气", "别担心", "不要担心", "别着急", "别急", "不用谢", "不用客气", "不用了",
					"never mind", "don't worry", "don't know", "don't think so", "don't understand", "don't remember", "can't remember", "can't wait", "can't believe", "can't thank", "don't mention it", "don't get me wrong", "don't forget", "do not forget",
					"can't beat", "can't deny", "can't agree more", "couldn't have done", "can't get enough", "never forget", "never give up",
					"never been", "never shy", "don't let", "don't give up", "never stop", "don't stop",
					"don't really like", "don't like", "do not like", "don't love", "don't enjoy", "do not enjoy", "don't care for", "can't stand", "don't mind"}},
			{name: SignalConstraint, re: re(`必须|一定要|务必|只能|截止|期限|过敏|预算|不超过|别超过|不要超过|控制在|\bkeep\s+(?:it|them|(?:any|all|the|my)\s+[a-z]+(?:\s+[a-z]+)?)\s+(?:under|below|within|less\s+than)\b|最多|至少|最晚|最迟|吃素|素食|不耐受|\bintoleran(?:t|ce)\b|\bmust\b|\bhave to\b|\bhas to\b|\bneeds? to\b|\ballerg(?:ic|y|ies)\b|\bdeadlines?\b|\bdue (?:by|on|date)\b|\bbudget\b|\bno later than\b|\bat most\b|\bat least\b|\bvegetarian\b|\bvegan\b` +
				// A standing instruction told as an imperative: "use the PO box for all of that".
				`|\buse\s+[^.!?;]{2,60}?\s+for\s+(?:all|every|any|each)\b|怀孕|孕期|备孕|哺乳期` +
				// A ceiling on an amount: "hard cap is $2k", "won't approve anything over that".
				`|\b(?:hard\s+|spending\s+|price\s+)?(?:cap|ceiling|limit|max(?:imum)?)\s+(?:is|of|at)\s+(?:about\s+|around\s+)?(?:[$€£¥]\d|\d[\d,.]*\s*(?:k\b|dollars|bucks|euros|pounds))` +
				`|\b(?:won't|will\s+not|don't|do\s+not|can't|cannot|never)\s+(?:approve|pay|spend|go)\s+(?:for\s+)?(?:anything|nothing)\s+(?:over|above|more\s+than)\b|\bno\s+more\s+than\s+[$€£¥]\d|预算上限|上限是|封顶`),
				excludes: []string{"have to go", "need to go", "has to go", "must have been", "must've been", "must have felt", "must've felt",
					"must be so", "must be really", "must be nice", "must be fun", "must be hard", "must be tough", "must be great", "must be awesome",
					"must be amazing", "must be exciting", "must feel"}},
			// A revision of an earlier preference or constraint: the resolver supersedes
			// the old value when the revision lands in the same key slot.
			{name: SignalChange, re: re(relaxPattern + `|改成|换成|改为|改到|改用|换到|挪到|调到|推迟到|推到|延到|提前到|延期|改(?:喝|吃|坐|骑|开|听|看|玩|住|穿|戴)\p{Han}|戒[烟酒糖掉了]|\b(?:stopped|quit)\s+\w+ing\b|\b(?:i|we)\s+(?:just\s+|finally\s+)?quit\s+[a-z]+|\b(?:gave|given|giving) up\b|\bswitch(?:ed|ing)?\b(?:\s+[\w.'-]+){0,5}?\s+to\b|\bchanged? (?:it )?to\b|\binstead\b|\bnow prefers?\b|\b(?:go|going|switch|switching|change|changing)\s+back\s+to\b|\b(?:pushed|moved|rescheduled|postponed|bumped)\b(?:\s+[\w.'-]+){0,5}?\s+(?:back\s+)?to\b|\bused\s+to\b[^.!?;]{0,80}\b(?:now|anymore|any more|these days|nowadays|no longer)\b|(?:以前|过去|之前|原来)[^。！？；]{1,20}[，,]\s*(?:现在|如今|最近)|\b(?:(?:i'm|i am|i've been|been|stayed|staying|getting|got|stay|days?|weeks?|months?|years?)\s+sober|teetotal|on the wagon)\b|^(?:these days|nowadays|lately),?\s+(?:i|we)\b`),
				excludes: []string{"也可以吗", "也可以不"}},
			{name: SignalPreference, re: re(`\bkeep (?:it|them|things|(?:your|the) (?:answers?|replies|reply|responses?|explanations?|messages?))\s+(?:\w+\s+)?(?:short|brief|concise|simple|tight)\b|\bkeep (?:it|them|(?:your|the) (?:answers?|replies|reply|responses?|summaries|summary|messages?|emails?))\s+(?:under|below|within|to|at most)\s+(?:\w+\s+){1,2}(?:sentences?|words?|lines?|paragraphs?)\b|\bbullet(?:ed)?[ -]points?\b|\bno (?:essays|walls of text|long (?:answers|replies|explanations))\b|简短|简洁|言简意赅|别太长|不要太长|分点|列要点|` + `偏好|喜欢|爱吃|爱喝|讨厌|倾向|习惯|优先|宁愿|宁可|最好|以后|今后|往后|下次|总是|一直用|一般都|通常都|平时都|一般会|通常会|每次都|\b(?:gone|went) (?:right |completely |totally |kind of )?off\b|\bsick of\b|\bdone with\b|\bi (?:(?:really|also|do|just|still|so|\w+ly) )?(?:prefer|like|love|hate|dislike|enjoy|adore)\b|\bi(?:'d| would) (?:prefer|rather)\b|\bprefer(?:s|red|ably)?\b|\bfavou?rite\b|\bmy (?:biggest |one |only |secret |true |great )?(?:weakness|guilty pleasure|vice|comfort food|obsession|addiction)\b|是我的最爱|戒不掉|\balways\b|\busually\b|\bfrom now on\b|\bgoing forward\b|\bin the future\b|\brather than\b|\b(?:don't|do not) (?:really )?(?:like|love|enjoy|care for)\b|\bcan't stand\b|\bi find (?:\w+ ){1,2}(?:boring|tedious|dull|annoying|overrated|exhausting|stressful|relaxing|calming|soothing)\b|\b(?:is|are) (?:more |really |totally |very much |so )?my (?:thing|jam|cup of tea)\b|\bnot (?:really )?my (?:thing|jam|cup of tea)\b|\bi'm (?:a |not a |not really a |not much of a |never been a )?(?:big |huge )?fan of\b|\bi(?:'m| am) (?:really |so |totally |very |super |big |quite |also )?into\b|\b(?:matters?|mean(?:s)? (?:a lot|so much|everything|the world)|(?:is|are) (?:really |so |very |super |incredibly |truly )?(?:important|precious|dear))\s+to (?:me|us)\b|对(?:我|我们)(?:来说|而言)?(?:很|非常|特别|真的|挺|最)?(?:重要|有意义|珍贵)` +
				// "越甜越好", "无肉不欢", "the spicier the better", "not (much of) a fan of".
				`|\bfrom here on(?: out)?\b|\bhenceforth\b|越\p{Han}{1,2}越好|无\p{Han}不欢|\b(?:a|my|our)\s+(?:\w+\s+)?ritual\b|\bthe \w+(?:er|ier) the better\b|^(?:not|never been)\s+(?:really\s+|much of\s+|a\s+|the biggest\s+|a big\s+|a huge\s+)*(?:big\s+)?fan of\b`),
				excludes: []string{"最好的", "i'd like to", "i would like to", "i love it", "i love that", "i love this", "i like it", "i like that",
					"i like this", "i love them", "i love to!", "i love those", "i love these", "i love how", "i love seeing", "i love that you",
					"i love your", "love having you", "always here for", "always there for", "always be here for", "always be there for",
					"always make me", "always makes me", "always make us", "always makes us", "always remind me", "always reminds me",
					"always remind us", "always reminds us", "always been there", "always a good", "always a great", "always fun",
					"into it", "into that", "into this", "into them", "into those", "into you"},
				// A habit of someone or something else ("they always make us laugh", "those
				// trips are always a blast"), a remark about an activity ("baking bread is always
				// calming"), or a promise to the listener ("always around when you need me"), is
				// no preference of the speaker's, and neither is a thank-you ("it means a lot to
				// me") or what the listener did ("what you said matters to me").
				unless: re(`\b(?:they|he|she|it|those|these|that|this|there|everyone|people)(?:'s|'re| is| are| was| were)?(?:\s+\w+)?\s+(?:always|usually)\b|\b(?:those|these|that|this|the)(?:\s+\w+){1,2}\s+(?:is|are|was|were)\s+(?:always|usually)\b|^\w+ing\b[^.,;!?]{0,30}\s+(?:is|was)\s+(?:always|usually)\b|\b(?:i'm|i am|i'll|i will|we're|we are|we'll|i've|we've)\s+(?:\w+\s+)?always\b[^.,;!?]{0,25}\b(?:you|your|ya)\b|\bthanks for always\b|\b(?:it|that|this|which|you|your \w+|our \w+|what you \w+)(?:'s| is| really| truly)?\s+(?:matters?|means?|meant|important)\b[^.!?]*|(?:这|那|你)(?:个|件事|些)?(?:对|对于)(?:我|我们)|\byou(?:'re| are)?\s+always\b|\balways (?:being|having)\b`)},
			{name: SignalTaskResult, re: re(`完成了|搞定了|做完了|弄好了|写好了|改好了|修好了|已经[^，。！？]{0,12}好了|上线了|发布了|部署了|提交了|合并了|解决了|修复了|\bdone\b|\bfinished\b|\bcompleted\b|\bshipped\b|\bdeployed\b|\bmerged\b|\bresolved\b|\bfixed\b|\bis live\b|\bwent live\b|\bsubmitted\b`),
				excludes: []string{"well done", "are you done", "when done", "been there, done that", "been there done that"}},
			{name: SignalReason, re: re(`因为|原因是|由于|\bbecause\b|\bthe reason is\b|\bdue to\b`)},
		},
		claim: signalCue{name: SignalClaim, re: re(`\d+(?:\.\d+)?\s*(?:元|块|美元|欧元|人民币|%)|[¥￥$€£]\s*\d|我们(?:提供|支持|承诺|保证|的政策)|免费|退款|退货|政策|保修|折扣|优惠|年费|月费|会员价|价格|费用|收费|\b\d+(?:\.\d+)?\s*(?:usd|eur|rmb|yuan|dollars?|euros?|%)|\bwe (?:offer|provide|support|guarantee|charge|include)\b|\bfree\b|\brefunds?\b|\bpolicy\b|\bwarranty\b|\bdiscounts?\b|\bcosts?\b|\bpric(?:e|es|ed|ing)\b|\bper (?:month|year)\b|\bsubscriptions?\b|\bfees?\b|\b(?:renews?|renewal|expires?|expiry|valid\s+until)\b|到期|续费|过期|有效期`),
			excludes: []string{"feel free", "free to"}},
		stateCue:    re(`(?:这几天|这两天|这些天|最近几天|接下来几天)(?:都|人)?在|出差|休假|请假|度假|旅行|旅游|生病|病了|感冒|不在|在家办公|居家办公|远程办公|我在|我人在|我住在|待在|呆在|很忙|没空|\b(?:i'm|i am|i'll be|i will be|we're|we are)\s+(?:in|at|on|off|out|away|traveling|travelling|visiting|staying|sick|busy|working from|unavailable|on vacation|on leave|on holiday)\b|\bout of (?:the )?office\b|\booo\b|\boff sick\b`),
		firstPerson: re(`我|咱|\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|our|us)\b`),
		requestEN:   re(`(?i)^(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?`),
		requestZH:   re(`^(?:请问)?(?:你|您)?(?:能不能|能否|可不可以|可以|能|麻烦)(?:你|您)?(?:帮我|帮忙)?`),
		temporal:    NewTemporal(),
		directive:   re(`^(?:please |pls )?(?:you (?:should|must|need to|have to|can't|cannot|shouldn't|mustn't|always|never)\b|always\b|never\b|don't\b|do not\b|make sure\b)|^(?:before|after|when|whenever|once|if) (?:you|we) [^,.;!?]{3,60}, (?:please )?(?:make sure|be sure|always|never|don't|do not|first|check|double-check|ping|remember to)\b|^(?:请)?(?:你|您)(?:以后|今后|要|必须|别|不要|记得|务必|总是|每次)`),
		event:       re(`^(?:just |finally |recently |also |so |and |then )?(?:got back|came back|went|got|spent|finished|started|made|bought|took|tried|visited|joined|signed up|booked|ran|met|won|lost|adopted|sold|picked up)\b|\b(?:i|we|(?:my|our) \w+(?: \w+)?)(?:'ve| have| had|'d)?\s+(?:just |finally |recently |already |also |first |now |\w+ly )?(?:\w{2,}ed|went|got|bought|began|started|took|made|met|saw|won|lost|left|adopted|had|gave|ran|came|became|found|joined|flew|drove|wrote|built|sold|quit|spent|threw|caught|broke|chose|fell|grew|taught|sang|swam|rode|brought|held|paid|sent|lent|kept|hurt|forgot|fought|fed|led|wore|woke|hit|are (?:going|starting|moving|flying|getting|having|planning|taking|visiting|leaving)|will|'ll|plan to|want to|hope to|aspire to|dream of|have an?|have two|own an?|start(?:s)?|is (?:starting|turning|going)|turned)\b|\b(?:i'm|we're|i am|we are)\s+(?:just |finally |now |currently |also |still |really |slowly )?(?:going|starting|moving|flying|getting|having|planning|taking|visiting|leaving|joining|learning|studying|training|practicing|practising|volunteering|working on|building|saving|teaching|coaching|renovating|restoring|preparing|organi[sz]ing|putting together|signing up|applying|expecting|trying out|hoping to)\b|\b(?:i|we)(?:'ve| have)\s+(?:just |also |still |really |recently )?been\s+[a-z]+ing\b|\bit(?:'s| has| is)\s+(?:always |long )?been (?:my|a|our) (?:\w+ )?dream to\b|\bmy [a-z]+(?: [a-z]+)? (?:is|are|was|were|has|have)\b|我(?:们)?[^，。,.!！？?]{0,8}(?:了|过|要去|改去|打算|准备|计划|开始|刚|已经|下周|上周|明天|昨天|去年|今年|明年|下个月|上个月|买|养|搬)`),
		ourselves:   re(`\bwe all\b|\beach other\b|\bourselves\b|\blet's\b|\blet us\b|\bwe can\b|\bwe got this\b`),
		listener:    re(`\b(?:you|your|yours|yourself|ya|u)\b|你|您`),
		recall:      re(`\b(?:i|we)(?:'ll|'d|\s+(?:do|did|still|really|totally|can|can't|cannot|could|couldn't|don't|didn't|always|vaguely|clearly|fondly|will|won't|barely|hardly|definitely))*\s+(?:remember|recall)\b`),
		vocative:    regexp.MustCompile(`^\p{Lu}\p{Ll}+,\s+|,\s*\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?[\s!.?]*$`),
		idleAdverb:  re(`^(?:always|never)\s+(?:here|there|around|so|such|a|an|the|been|too|ready|happy|glad|up for)\b`),
		interject:   re(`^(?:(?:wow|yeah|yes|yep|aw+|oh|hey|haha|omg|thanks|thank you|totally|absolutely|definitely|cool|great|nice|so|well)\b[,!. ]*)+`),
		command:     re(`^(?:please\s+|pls\s+|can you\s+|could you\s+)?(?:help|write|make|find|give|tell|show|draft|create|plan|book|send|summari[sz]e|translate|explain|list|recommend|suggest|check|fix|get|set up|schedule|order|pick|remind|let me know|look up|search|compare|calculate|generate|prepare|update|add|remove|delete|review|edit|rewrite|convert)\b|^(?:请|麻烦|劳驾)?(?:你|您)?(?:帮我|给我|替我|帮忙|为我|帮)`),
		idents:      newIdentRules(),
		clauses:     newClauseRules(),
		relax:       re(relaxPattern),
		fixCue:      re(`重试|再试|改用|换用|换成|改成|切换|加上|增加|减少|降低|调大|调小|等待|设置|代替|备用|先|(?i:\binstead\b|\bretr(?:y|ied|ying)\b|\bswitch|\bfall ?back\b|\bback ?off\b|\bincreas|\bdecreas|\breduc|\braise|\blower|\bset\b|\buse\b|\busing\b|\bwith\b|\bwait|\badd|\bremov|\bchang|\bfirst\b|\bthen\b)`),
	}
	for _, c := range l.cues {
		switch c.name {
		case SignalDecision:
			l.decision = c
		case SignalTaskResult:
			l.task = c
		}
	}
	l.selfFillers = re(`\bi (?:\w+ )?(?:think|guess|mean|see|know|bet|agree|hope you|can imagine|can't imagine)\b|\bi(?:'m| am) (?:so |really |sure |glad |happy for you|proud of you)|\blet me know\b|\btell me\b|\bi hear you\b|我觉得|我知道|我明白|我想想|我看看|告诉我|我同意|我猜|我的意思是|我是说|我是想问`)
	l.smallTalk = make(map[string]struct{})
	for _, p := range smallTalkPhrases() {
		l.smallTalk[p] = struct{}{}
		l.smallMax = max(l.smallMax, utf8.RuneCountInString(p))
	}
	return l
}

// smallTalkPhrases are greetings, thanks, acknowledgements and laughter, written without
// spaces or punctuation; a turn made only of them carries nothing to remember.
func smallTalkPhrases() []string {
	return []string{
		"hi", "hello", "hey", "heya", "hiya", "yo", "sup", "howdy", "thanks", "thank", "thankyou", "thx", "ty", "tysm",
		"cheers", "ok", "okay", "okey", "k", "kk", "sure", "cool", "nice", "great", "awesome", "perfect", "fine", "good",
		"gotit", "lol", "lmao", "rofl", "ha", "he", "hmm", "hm", "um", "uh", "oh", "ah", "wow", "yay", "goodmorning",
		"morning", "goodafternoon", "goodevening", "goodnight", "night", "gm", "gn", "bye", "byebye", "goodbye", "seeyou",
		"seeya", "later", "ttyl", "youtoo", "np", "noproblem", "noproblems", "noprob", "noprobs", "noworries", "noworry",
		"nodoubt", "nodoubts", "nosweat", "nobiggie", "noway", "welcome", "yourewelcome", "yes", "yeah", "yep",
		"yup", "no", "nope", "nah", "alright", "allright", "soundsgood", "right", "exactly", "indeed", "agreed", "true",
		"really", "alot", "much", "verymuch", "so", "manythanks", "appreciated", "appreciateit", "amazing", "interesting",
		"gotcha", "understood", "roger", "noted", "howareyou", "imfine", "andyou", "same", "metoo", "sorry", "you", "thats",
		"neverminditsfine",
		"你好", "您好", "嗨", "哈喽", "哈啰", "喂", "早", "早上好", "早安", "上午好", "中午好", "下午好", "午安", "晚上好", "晚安",
		"谢谢", "谢了", "谢啦", "多谢", "感谢", "非常感谢", "辛苦了", "辛苦", "好的", "好滴", "好嘞", "好吧", "好", "的", "嗯", "恩",
		"哦", "噢", "喔", "啊", "呀", "哈", "呵", "嘿", "嘻", "行", "可以", "收到", "明白", "明白了", "了解", "知道了", "懂了",
		"在吗", "在不在", "在", "拜拜", "再见", "回头见", "没事", "没关系", "不客气", "不用谢", "不用客气", "没问题", "对", "对的",
		"是的", "是", "没错", "好久不见", "你好吗", "我很好", "还行", "厉害", "牛", "棒", "太棒了", "太好了", "不错", "赞",
		"666", "了", "吧", "呢", "啦", "哇", "您", "你", "也", "很", "非常", "真", "太",
	}
}

// isSmallTalk reports whether text is made only of small-talk phrases, emojis and punctuation.
// smallTalkTo reports whether text is small talk once the name it is said to is left out
// ("No worries, Maya!").
func (l *lexicon) smallTalkTo(text string) bool {
	if hasHan(text) {
		return l.isSmallTalk(text)
	}
	if l.isSmallTalk(text) {
		return true
	}
	rest := l.vocative.ReplaceAllString(text, "")
	return rest != text && l.isSmallTalk(rest)
}

func (l *lexicon) isSmallTalk(text string) bool {
	if laughZH.MatchString(strings.TrimSpace(text)) {
		return true
	}
	var rs []rune
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			rs = append(rs, r)
		}
	}
	// Word break: can rs be cut into known phrases? ("okthanks", "好的谢谢").
	ok := make([]bool, len(rs)+1)
	ok[0] = true
	for i := range rs {
		if !ok[i] {
			continue
		}
		for j := i + 1; j <= len(rs) && j-i <= l.smallMax; j++ {
			if _, hit := l.smallTalk[string(rs[i:j])]; hit {
				ok[j] = true
			}
		}
	}
	return ok[len(rs)]
}

// laughZH is a laugh at something just seen or heard, and nothing more: "哈哈那个视频
// 笑死我了".
var laughZH = regexp.MustCompile(`^(?:哈+|呵+|嘿+|2333+)?[^。！!？?，,]{0,12}(?:笑死|笑喷|笑疯|笑出声|太好笑|好好笑|乐死)(?:我|人)?了?[。！!～~]*$`)

// turnSignals are the signals of text's statements (questions do not count), in cue order.
// Assistant turns only carry claims and decisions.
func (l *lexicon) turnSignals(text string, assistant bool) []string {
	var found []string
	add := func(s string) {
		if !containsString(found, s) {
			found = append(found, s)
		}
	}
	for _, s := range splitSentences(text) {
		if assistant {
			s = assistantStatement(s)
		}
		s, ok := l.statement(s)
		if !ok {
			continue
		}
		lower := lowerText(s)
		if assistant {
			if l.claim.match(lower) {
				add(SignalClaim)
			}
			if l.decision.match(lower) {
				add(SignalDecision)
			}
			continue
		}
		for _, c := range l.sentenceSignals(s) {
			add(c)
		}
	}
	// Report in a fixed order whatever the sentence order, for stable metrics.
	order := []string{SignalClaim, SignalConfirmation}
	for _, c := range l.cues {
		order = append(order, c.name)
	}
	order = append(order, SignalTemporaryState, SignalPlan)
	var out []string
	for _, o := range order {
		if containsString(found, o) {
			out = append(out, o)
		}
	}
	return out
}

// sentenceSignals are the user signals of one statement, in cue (priority) order.
func (l *lexicon) sentenceSignals(s string) []string {
	if l.isSmallTalk(s) {
		return nil
	}
	lower := lowerText(s)
	var out []string
	for _, c := range l.cues {
		if c.match(lower) || (c.name == SignalIdentity && (l.identityFact(s) || l.clauses.matchAny(s))) {
			out = append(out, c.name)
		}
	}
	if verblessBan(lower) && !containsString(out, SignalProhibition) {
		out = append(out, SignalProhibition)
	}
	// Any reference time will do: only the presence of a date expression matters here.
	dated := len(l.temporal.Find(s, time.Time{})) > 0
	if l.stateCue.MatchString(lower) && (dated || stayDays(lower) > 0) {
		out = append(out, SignalTemporaryState)
	}
	if (dated || absDate.MatchString(s) || dayName.MatchString(s)) && (l.clauses.planEN.MatchString(s) || l.clauses.planZH.MatchString(s)) {
		out = append(out, SignalPlan)
	}
	return out
}

// elaboration reports a sentence that goes on with the instruction before it rather than
// telling something new: it names no one (no first, second or third person) and opens
// with neither a question nor a greeting ("Invoices, labels, the footer, all of it.").
func (l *lexicon) elaboration(s string) bool {
	lower := lowerText(s)
	return s != "" && !l.firstPerson.MatchString(lower) && !l.listener.MatchString(lower) &&
		!otherSubject.MatchString(lower) && !isQuestion(s) && !l.isSmallTalk(s) && !zhPronoun.MatchString(s)
}

// banEN is a ban told without a verb: "No calls before 10am", "and no onions ever";
// notBans are the set phrases that open the same way and ban nothing ("no worries").
var (
	banEN   = regexp.MustCompile(`^(?:(?:and|but|also|still|plus|oh|so|again)[,\s]+)*no\s+([a-z][\w-]+)`)
	notBans = map[string]bool{"worries": true, "worry": true, "problem": true, "problems": true, "thanks": true,
		"idea": true, "way": true, "rush": true, "clue": true, "pressure": true, "biggie": true, "doubt": true,
		"wonder": true, "kidding": true, "joke": true, "offense": true, "offence": true, "matter": true, "need": true,
		"one": true, "more": true, "longer": true, "big": true, "luck": true, "sweat": true, "comment": true}
)

// verblessBan reports a sentence (lower-cased) that bans something without a verb.
func verblessBan(lower string) bool {
	m := banEN.FindStringSubmatch(strings.TrimSpace(lower))
	return m != nil && !notBans[m[1]]
}

// stay is a short span from now that a state lasts ("for the next few days", "这几天"):
// told with one, being somewhere is a stay, not where the speaker lives.
var (
	stayEN = regexp.MustCompile(`\b(?:for|over)\s+(?:the\s+)?(?:next|coming)\s+(?:few|couple(?:\s+of)?|(\d|two|three|four|five))\s+days\b|\bfor\s+(?:a|the)\s+(?:few|couple(?:\s+of)?)\s+days\b|\bfor\s+(\d|two|three|four|five)\s+days\b`)
	stayZH = regexp.MustCompile(`这几天|这两天|这些天|最近几天|未来几天|接下来几天|这(?:三|四|五)天`)
	// forSpanEN and forSpanZH are a state told with how long it lasts from now: "for the
	// next three weeks", "for a month", "这一个月", "接下来两周".
	forSpanEN = regexp.MustCompile(`\b(?:for|over)\s+(?:the\s+)?(?:next|coming|following)\s+(?:(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple(?:\s+of)?|several)\s+)?(days?|weeks?|months?)\b|\bfor\s+(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple(?:\s+of)?|several)\s+(days?|weeks?|months?)\b`)
	forSpanZH = regexp.MustCompile(`(?:这|接下来|未来|之后的?)(一|两|二|三|四|五|六|七|八|九|十|几)个?(天|周|星期|礼拜|月)`)
)

// forSpanDays is how many days a present state told with forSpanEN or forSpanZH lasts; 0
// when none is told or the sentence tells the past ("we were in Rome for two weeks").
func forSpanDays(lower string) int {
	n, u := "", ""
	if m := forSpanZH.FindStringSubmatch(lower); m != nil {
		n, u = m[1], m[2]
	} else if m := forSpanEN.FindStringSubmatch(lower); m != nil && !spanPastEN.MatchString(lower) {
		n, u = m[1]+m[3], m[2]+m[4]
		if n == "" {
			n = "one"
		}
	}
	if u == "" {
		return 0
	}
	k, ok := parseCount(n)
	if !ok {
		k = vagueCount[n]
	}
	return k * unitDays(u)
}

// vagueCount are quantities told without a number: "a few days", "几天".
var vagueCount = map[string]int{"few": 3, "a few": 3, "couple": 2, "couple of": 2, "a couple": 2, "a couple of": 2,
	"several": 5, "几": 3}

// spanPastEN marks a span told of the past, which ended with it.
var spanPastEN = regexp.MustCompile(`\b(?:was|were|went|spent|stayed|lived|worked|had|did|used to|last|ago|been|since)\b`)

// spanEN and spanZH are how long an event lasts, told after its date: "the whole week",
// "for two weeks", "持续三天", "要一个星期".
var (
	spanEN = regexp.MustCompile(`\b(?:the\s+(?:whole|entire|full)|all(?:\s+the)?|a\s+(?:whole|full))\s+(day|week|weekend|month)\b|\bfor\s+(a|one|two|three|four|five|six|\d{1,2})\s+(days?|weeks?|months?)\b`)
	spanZH = regexp.MustCompile(`(?:整整|整个)一?个?(天|周|星期|礼拜|月)|(?:持续|要|得|共|住|待|呆|留|玩|停留|陪)(一|两|二|三|四|五|六|七|\d{1,2})个?(天|周|星期|礼拜|月)`)
)

// unitDays is how many days a unit of time ("weeks", "周", "weekend") lasts, 0 for none.
func unitDays(u string) int {
	switch strings.TrimSuffix(u, "s") {
	case "day", "天":
		return 1
	case "weekend":
		return 2
	case "week", "周", "星期", "礼拜":
		return 7
	case "month", "月":
		return 30
	}
	return 0
}

// spanDays is how many days the span s names lasts, or 0 for none.
func spanDays(lower string) int {
	count := func(n, unit string) int {
		if c, ok := parseCount(n); ok {
			return c * unitDays(unit)
		}
		return 0
	}
	if m := spanEN.FindStringSubmatch(lower); m != nil {
		if m[1] != "" {
			return unitDays(m[1])
		}
		return count(m[2], m[3])
	}
	if m := spanZH.FindStringSubmatch(lower); m != nil {
		if m[1] != "" {
			return unitDays(m[1])
		}
		return count(m[2], m[3])
	}
	return 0
}

// stayDays is how many days a stay s names lasts (a few: three), or 0 for none.
func stayDays(lower string) int {
	if stayZH.MatchString(lower) {
		return 3
	}
	m := stayEN.FindStringSubmatch(lower)
	if m == nil {
		return forSpanDays(lower)
	}
	switch n := m[1] + m[2]; n {
	case "":
		return 3
	case "two":
		return 2
	case "three":
		return 3
	case "four":
		return 4
	case "five":
		return 5
	default:
		return int(n[0] - '0')
	}
}

// statement turns a polite request into its content ("could you keep in mind …?" →
// "remember that …") and rejects questions, which state nothing.
// noteToSelf labels a note the speaker keeps for themself.
var noteToSelf = regexp.MustCompile(`(?i)^(?:note|reminder|memo)\s+(?:to|for)\s+(?:self|myself|me)\s*[:,-]\s*`)

func (l *lexicon) statement(s string) (string, bool) {
	s = strings.TrimSpace(clipSentence(s))
	// A request to remember, told as a clause of its own ("…，麻烦记着点"), asks to keep
	// the rest: the rest is the statement.
	if loc := rememberClause.FindStringIndex(s); loc != nil && loc[0] > 0 {
		sep := ""
		if loc[1] < len(s) {
			sep = ", "
			if strings.HasSuffix(s[:loc[1]], "，") {
				sep = "，"
			}
		}
		rest := strings.TrimSpace(s[:loc[0]] + sep + s[loc[1]:])
		// Told first, as the remember rules expect it.
		if hasHan(s) {
			s = "记住：" + rest
		} else {
			s = "Remember: " + rest
		}
	}
	if loc := noteToSelf.FindStringIndex(s); loc != nil && loc[1] < len(s) {
		// "Note to self: renew the passport" is a request to keep it.
		s = "Remember: " + s[loc[1]:]
	}
	if loc := labelLead.FindStringIndex(s); loc != nil && loc[1] < len(s) {
		// "House rule for merges: always …": the label announces the statement.
		s = upperFirst(strings.TrimSpace(s[loc[1]:]))
	}
	if loc := l.requestEN.FindStringIndex(s); loc != nil && loc[1] > 0 {
		s = trimQuestion(s[loc[1]:])
		return s, s != ""
	}
	if loc := l.requestZH.FindStringIndex(s); loc != nil && loc[1] > 0 && isQuestion(s) {
		s = trimQuestion(s[loc[1]:])
		return s, s != ""
	}
	if isQuestion(s) {
		// "She's staying a week, where will everyone sleep?": the clauses told before
		// the question still state something.
		lead, ok := toldBeforeQuestion(s)
		if !ok {
			return "", false
		}
		s = lead
	}
	if l.hypothetical(s) {
		return "", false
	}
	return s, s != ""
}

// questionTail is a question's last clause: a question word opens it (English) or sits in
// it (Chinese).
var (
	questionTailEN = regexp.MustCompile(`(?i)^(?:so\s+|but\s+)?(?:what|how|where|when|which|who|why|any|anything|can|could|should|would|do|does|is|are|got|thoughts|ideas|tips|suggestions)\b`)
	questionTailZH = regexp.MustCompile(`怎么|怎样|什么|啥|哪|谁|为什么|为啥|多少|几|咋|如何|是不是|要不要|能不能|可不可以|有没有|吗|呢|么`)
	secondPerson   = regexp.MustCompile(`(?i)你|您|\byou\b|\byour\b`)
)

// toldBeforeQuestion returns the statement before the last clause of question s, when that
// clause is what asks and the statement is not addressed to the listener.
func toldBeforeQuestion(s string) (string, bool) {
	zh := hasHan(s)
	cut := strings.LastIndex(s, ", ")
	if zh {
		cut = max(strings.LastIndex(s, "，"), cut)
	}
	if cut <= 0 {
		return "", false
	}
	lead, tail := strings.TrimSpace(s[:cut]), strings.TrimLeft(s[cut:], "，, ")
	if zh && !questionTailZH.MatchString(tail) || !zh && !questionTailEN.MatchString(tail) {
		return "", false
	}
	minRunes := 6
	if zh {
		minRunes = 4 // "我有哮喘" says as much as an English clause twice as long
	}
	if secondPerson.MatchString(lead) || isQuestion(lead) || questionTailEN.MatchString(lead) || len([]rune(lead)) < minRunes {
		return "", false
	}
	return lead, true
}

// rememberClause is a clause asking the listener to remember what the sentence says.
var rememberClause = regexp.MustCompile(`[，,]\s*(?:你|请|麻烦)?(?:帮我|给我|替我)?(?:记着点?|记住(?:了|啊|哦)?|记一下|记下来?|别忘了|备注一下)(?:啊|哦|吧|呀|哈)?(?:[，,]|[。.!！]?$)|(?i),?\s*(?:please\s+)?(?:remember|note|keep in mind)\s+(?:that|this)(?:\s+for me)?\s*[.!]?$`)

// labelLead is a short label announcing what follows it: "House rule for merges:",
// "Note to self:", "提醒一下：".
var labelLead = regexp.MustCompile(`(?i)^(?:[\w'-]+\s+){0,3}(?:rule|rules|note|notes|reminder|tip|fyi|heads[- ]up|important|psa|policy|convention|规则|规矩|提醒|注意|备注|说明)(?:\s+[\w'-]+){0,4}\s*[:：]\s*|^(?:提醒一下|注意一下|说一下|顺便说一下)[:：，,]\s*`)

// hypothetical reports a sentence about a world that is not the speaker's: a condition
// on the speaker ("if I ever …", "要是以后…") whose main clause is a wish or a would ("I'd
// want …", "我想…"). It states nothing that holds. A condition that sets a rule ("if the
// build fails, page me") is an instruction, not a hypothetical.
func (l *lexicon) hypothetical(s string) bool {
	if hypotheticalEN.MatchString(s) {
		return true
	}
	loc := hypotheticalZH.FindStringIndex(s)
	return loc != nil && !ruleAfterZH.MatchString(s[loc[1]:]) && !ruleAfterZH.MatchString(s[:loc[1]])
}

var (
	hypotheticalEN = regexp.MustCompile(`(?i)^(?:\w+,\s*)?(?:if|suppose|supposing|imagine|say)\s+(?:i|we)\b[^,;]{0,80},\s*(?:then\s+)?(?:i|we)(?:'d|\s+would|\s+might|\s+could|\s+will|'ll)\b|(?i)^(?:\w+,\s*)?if\s+(?:i|we)\s+(?:ever|were|was|had|won|could|someday|one day)\b|(?i)^(?:i|we)(?:'d|\s+would)\s+(?:love|like|want)\s+to\b[^.]*\bif\s+(?:i|we)\s+(?:ever|were|had|could)\b`)
	hypotheticalZH = regexp.MustCompile(`^(?:要是|如果|假如|假设|万一|哪天|等到?)(?:我|以后|将来|有一天|哪天)?[^，,。]{0,20}[，,][^。]*?(?:我)?(?:想|会|就|打算|希望)`)
	// ruleAfterZH marks a condition that sets a rule or names a failure ("如果下雨就别…",
	// "要是部署失败，先回滚"): an instruction, not a hypothetical.
	ruleAfterZH = regexp.MustCompile(`别|不要|不能|千万|记得|提醒|请|帮我|告诉我|通知我|先|失败|报错|出错|超时|挂了`)
)

func (l *lexicon) taskDone(text string) bool { return l.task.match(lowerText(text)) }

// weakFirstPerson reports a substantive statement in the first person: worth a model's look
// even without an explicit cue, and what the offline extractor keeps as the speaker's story.
func (l *lexicon) weakFirstPerson(text string) bool {
	for _, s := range splitSentences(text) {
		if s, ok := l.statement(s); ok && l.aboutSelf(s) {
			return true
		}
	}
	return false
}

// aboutListener reports a statement about the listener and not the speaker ("You never
// shy away from a challenge"): in a conversation between people it tells nothing about the
// speaker. An instruction to the listener ("you should always …") is not one of them.
func (l *lexicon) aboutListener(s string) bool {
	lower := lowerText(s)
	return l.listener.MatchString(lower) && !l.firstPerson.MatchString(lower) && !l.directive.MatchString(lower)
}

// selfStory keeps, of a turn's statements that no rule took, the ones that tell about the
// speaker: those in the first person, and when there is one, the substantive sentences
// around it that describe the same news ("It was so powerful."), but nothing said about
// or to the listener.
func (l *lexicon) selfStory(ss []string) []string {
	self := false
	for _, s := range ss {
		if l.aboutSelf(s) {
			self = true
			break
		}
	}
	if !self {
		return nil
	}
	var out []string
	for _, s := range ss {
		lower := listenerAside.ReplaceAllString(lowerText(s), "")
		if l.aboutSelf(s) {
			out = append(out, s)
			continue
		}
		if l.listener.MatchString(lower) || l.command.MatchString(lower) || l.isSmallTalk(s) {
			continue
		}
		rest := l.interject.ReplaceAllString(lower, "")
		han := 0
		for _, r := range rest {
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
		if han >= 6 || len(strings.Fields(rest)) >= 4 {
			out = append(out, s)
		}
	}
	return out
}

// aboutSelf reports a statement in which the speaker tells something about themselves (an
// event, a plan, a feeling, something they have or do): first person, long enough to hold
// a fact, not small talk and not a stock phrase ("I see", "我知道了").
func (l *lexicon) aboutSelf(s string) bool {
	lower := listenerAside.ReplaceAllString(lowerText(s), "")
	if !l.firstPerson.MatchString(lower) || l.isSmallTalk(s) {
		return false
	}
	if l.command.MatchString(lower) || l.listener.MatchString(lower) || l.ourselves.MatchString(lower) {
		return false // a request to the listener, or about them: not news about the speaker
	}
	lower = l.selfFillers.ReplaceAllString(lower, " ")
	if !l.firstPerson.MatchString(lower) {
		return false
	}
	han := 0
	for _, r := range lower {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	// "I'm an introvert", "我是左撇子": a few words that say what the speaker is.
	short := strings.TrimRight(strings.TrimSpace(lower), ".!。！")
	return han >= 5 || len(strings.Fields(lower)) >= 4 || presentSelfEN.MatchString(short) || presentSelfZH.MatchString(short)
}

// listenerAside is the listener named inside a description, not addressed: "the
// lumpiest bowl you've ever seen", "a view you wouldn't believe", "you know".
var listenerAside = regexp.MustCompile(`\b(?:that |which )?you(?:'ve| have|'d| would| will|'ll| could| can)?(?: ever| never| not|n't)?\s+(?:seen|see|met|meet|heard|hear|tasted|taste|imagine|believe|guess|laugh at|love|like|want to see)\b|,?\s*\byou know\b,?|(?:,\s*)?\bmind you\b,?`)

// deniedClause is a clause that says a former state no longer holds: "I'm not in Lyon
// anymore", "I no longer work at Initrode", "我已经不在厦门了", "不再住宿舍".
var deniedClause = regexp.MustCompile(`(?i)\bno longer\b|(?:\bnot\b|n't\b)[^,;.]*\b(?:anymore|any more|any longer)\b|\b(?:left|quit)\b|不再|已经不|不在[^，,；;。]*了|离开了|离职|辞职|辞了职` +
	// A thing parted with ("sold the old one", "已经送人了"): the old value, not the new.
	`|\b(?:sold|gave away|got rid of|gave up on|traded in|handed down)\b|送人|卖掉|卖了|转手|出掉了|处理掉|已经送`)

// presentSelfEN is the speaker telling what they do as a rule ("I work night shifts at …",
// "I bank with …"): a standing fact, not an event.
var presentSelfEN = regexp.MustCompile(`(?i)^(?:i|we)\s+(?:\w+ly\s+|mostly\s+|mainly\s+|still\s+)?(?:work|write|bank|code|study|teach|volunteer|commute|train|coach|speak|shop|cook|sing|rent|own|(?:don't|do\s+not|never)\s+(?:own|drive|drink|smoke|eat|cook|fly|swim))\b` +
	// "I'm a night owl", "I'm an only child", "I'm left-handed": what the speaker is, told
	// in a few words.
	`|^(?:i'm|i\s+am)\s+(?:an?\s+)?(?:[a-z-]+\s+)?(?:owl|child|person|bird|introvert|extrovert|ambivert|twin|sibling|handed|left-handed|right-handed|ambidextrous|insomniac|vegetarian|vegan|teetotaler|teetotaller|non-drinker|non-smoker|smoker|homeowner|renter|tenant|parent|grandparent|carer|caregiver)\s*$`)

// presentSelfZH is the same in Chinese, told in a few characters: "我有两个孩子", "我不会开车",
// "我在备考雅思", "我们家租房住".
var presentSelfZH = regexp.MustCompile(`^我(?:们家?|家)?(?:有[一二两三四五六七八九十几\d]+个|不会|不喝|不抽|不开|在学|在备考|在考|在准备|正在学|租房|是独生|是左撇子|是右撇子|是夜猫子|是早起|是上班族|是全职|是单亲|是丁克)`)

// partedEN is the speaker parting with a thing of theirs: "I sold my old van", "we got
// rid of our old sofa", "I traded in my bike", or told without a subject ("Gave up on
// the old laptop"). The group is the thing's noun.
var partedEN = regexp.MustCompile(`(?i)(?:^\s*|\b(?:i|we)\s+)(?:\w+ly\s+|just\s+|finally\s+)?(?:sold(?:\s+off)?|traded(?:\s+in)?|gave away|gave up on|got rid of|parted with|handed down|passed on|ditched|scrapped|donated|totall?ed|wrecked|quit|dropped\s+out\s+of)\s+(?:the|my|our)\s+(?:old\s+|trusty\s+|beloved\s+)?([a-z]{3,})\b`)

// departedEN is someone named leaving the speaker's life or a role in it: "Dana finally
// retired", "Dr Osei left the practice", "Priya moved on". The group holds the name and
// perhaps a word or two before it (departedNames keeps the name).
var departedEN = regexp.MustCompile(`\b((?:[A-Z][\p{L}'’.-]*\s+){0,2}[A-Z][\p{L}'’-]+)\s+(?:(?:has|had|have|just|finally|officially|recently|already|since|now)\s+)*` +
	`(?:retired|resigned|quit(?:\s+(?:her|his|their)\s+job)?(?:\s*[,.;!]|\s+(?:last|this|in|and|so)\b|$)|` +
	`left\s+(?:the\s+)?(?:company|firm|team|practice|clinic|school|agency|group|department|office|band|club|business|job)|` +
	`moved\s+(?:away|on)|passed\s+away|(?:was|got|has\s+been)\s+(?:fired|laid\s+off|let\s+go|transferred|replaced)|(?:is|'s|’s)\s+gone|` +
	// a place of work or a plan put behind ("Acme is officially behind me")
	`(?:is|'s|’s)\s+(?:officially\s+|now\s+|finally\s+)?(?:behind\s+me|history(?:\s*[,.;!]|$))|` +
	// a pet or a person gone from the speaker's home ("Biscuit went to live with my aunt")
	`went\s+to\s+live\s+with|(?:was|got)\s+(?:re-?homed|adopted\s+by|put\s+down|put\s+to\s+sleep)|ran\s+away|died|passed\s+on(?:\s*[,.;!]|$)|` +
	// someone of the speaker's work moving elsewhere ("Priya moved to the data team")
	`moved\s+(?:over\s+)?to\s+(?:the|a|another|a\s+different)\s+(?:[\w-]+\s+){0,2}(?:team|org|organi[sz]ation|department|group|division|office|branch|unit|project|squad)\b|` +
	// a partner the speaker parted from ("Sam and I split up")
	`and\s+(?:I|the\s+user)\s+(?:have\s+|had\s+|just\s+|finally\s+)?(?:broke\s+up|split(?:\s+up)?|separated|divorced|called\s+it\s+quits))`)

// replacedEN names who or what the speaker left for another: "Dr Lee took over from Dr
// Osei", "we replaced Acme with a local firm", "switched from Spotify to …", "Marta is no
// longer my trainer". The last group is the name.
var replacedEN = regexp.MustCompile(`\b(?:took\s+over\s+from|replaced|replacing|switched\s+(?:away\s+)?from|moved\s+(?:away\s+)?from|stopped\s+(?:seeing|using|working\s+with)|` +
	`broke\s+up\s+with|split\s+(?:up\s+)?with|divorced|cancell?ed|unsubscribed\s+from|rehomed|` +
	// skipped by the speaker ("we're skipping Coachella"), not someone skipping a person
	`(?:I|[Ww]e|[Tt]he\s+user)(?:'m|'re|'ll|'ve|\s+(?:am|are|is|will|just|also|probably|definitely|be|have|has))*\s+(?:skipping|skipped|skip)|` +
	`(?:migrated|moved|switched|got)\s+(?:[\w-]+\s+){0,3}?(?:off(?:\s+of)?|away\s+from)|` +
	`(?i:migrated|moved|transferred|ported|exported)\s+(?i:everything|it\s+all|all\s+of\s+it|all|(?:all\s+)?(?:my|our)\s+[\w-]+)\s+(?:over\s+)?(?:out\s+of|from)|` +
	// a race or an event the speaker withdrew from ("pulled out of Chicago")
	`(?i:pulled|dropped|backed)\s+out\s+of|(?i:withdrew)\s+from|(?i:bailed)\s+on|` +
	`` +
	`(?:don't|do\s+not|stop|quit)\s+call(?:ing)?\s+me|(?:(?:is|am|'m|are|'re)\s+)?no\s+longer\s+(?:at|with|using|on))\s+(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?([A-Z][\p{L}-]+)\b(?:[^'’\p{L}]|$)` +
	`|\b([A-Z][\p{L}'’-]+)\s+(?:is\s+no\s+longer|isn't|is\s+not)\s+(?:my|our)\s+[a-z]+(?:\s+[a-z]+)?(?:\s+(?:any\s?more|now))?\b`)

// swappedEN is a named thing the speaker let go of for another: "dropped Comcast for
// Fios", "swapped Pilates for spin", "cancelled Blue Apron, trying …". The group is the
// name, one or two capitalised words.
var swappedEN = regexp.MustCompile(`(?i:\b(?:dropped|ditched|dumped|swapped(?:\s+out)?|traded(?:\s+in)?|gave\s+up(?:\s+on)?|got\s+rid\s+of|cancell?ed|quit|left))\s+((?:[A-Z][\p{L}-]+)(?:\s[A-Z][\p{L}-]+)?)\s*(?i:for|with|in\s+favou?r\s+of|,|and\s+(?:went|got|switched|moved|signed|joined)|;)`)

// endedOwnEN is a named membership, subscription or account of the speaker's they
// ended: "cancelled my Peloton subscription", "closed my Barclays account". The group is
// the name.
var endedOwnEN = regexp.MustCompile(`(?i:\b(?:cancell?ed|cancell?ing|ended|dropped|quit|terminated|closed|froze|let\s+lapse)\s+(?:my|our)\s+(?:old\s+)?)((?:\p{Lu}[\p{L}&'-]*)(?:\s\p{Lu}[\p{L}&'-]*){0,2})\s+(?i:membership|subscription|account|plan|contract|card|policy|lease|pass)\b`)

var swappedCues = []string{"dropped", "ditched", "dumped", "swapped", "traded", "gave up", "got rid", "cancel", "quit", "left"}

// notAnymoreEN is a place of work or a provider the speaker left, told by its absence:
// "Not at Acme anymore", "I'm not with Chase any longer". The group is the name.
var notAnymoreEN = regexp.MustCompile(`\b[Nn]ot\s+(?:at|with|using|on|seeing|going\s+to|working\s+with|banking\s+with|driving)\s+(?:the\s+|my\s+)?(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?([A-Z][\p{L}-]+)\s+any\s?(?:more|longer)\b|\b(?:don't|do\s+not|no\s+longer)\s+(?:have|own|drive|use|see)\s+(?:the|my|our)\s+(?:old\s+)?([A-Z][\p{L}-]+)(?:\s+any\s?(?:more|longer)|\s*[,.;!]|$)`)

// forgetEN takes back what the speaker said of a thing: "forget what I said about the
// blue tiles". The group is the thing, a word or two.
var forgetEN = regexp.MustCompile(`(?i)\bforget\s+(?:what\s+(?:i|we|the\s+user)\s+(?:said|told\s+you)\s+)?about\s+(?:the\s+|my\s+|our\s+)?([a-z][\w-]*(?:\s+[a-z][\w-]*)?)`)

// notReplaced are capitalised words a change is often told from that are not what
// left (switched from Monday to Tuesday).
var notReplaced = map[string]bool{"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
	"saturday": true, "sunday": true, "january": true, "february": true, "march": true, "april": true, "may": true,
	"june": true, "july": true, "august": true, "september": true, "october": true, "november": true, "december": true}

// replacedZH names who or what the speaker dropped: "换掉了老周", "不再找小何了", "老周不干了".
var replacedZH = regexp.MustCompile(`(?:换掉了?|不再找|不找)(\p{Han}{2,4}?)(?:看病了?|看了|了|，|,|。|$)|(?:^|[，,。；;！!？?\s])(\p{Han}{2,4}?)(?:已经|也)?不干了|(?:别|不要)(?:再)?叫(?:我|用户)(\p{Han}{2,4}?|[A-Za-z]+)了|不再(?:跟|和|找)(\p{Han}{2,4}?)(?:练|学|上课|合作|联系|来往|做)|不在(\p{Han}{2,6}?)(?:上班|工作|干)?了|之前说的(\p{Han}{1,6}?)(?:不算了|作废|取消了?|就算了)` +
	// a partner the speaker parted from: "我和阿哲分手了"
	`|(?:我|我们)?(?:和|跟|与)(\p{Han}{2,4}?)(?:已经|早就|刚刚?|上个?月|去年|今年|前阵子|也)?(?:分手|离婚|分开|掰了)` +
	// an activity given up for another: "不让打网球了，改成…", "不跑步了，…改去…"
	`|(?:不让|不能再|不再|别再|不许|先别|别|不)(?:我)?(?:打|踢|练|跳|去|玩)?(\p{Han}{2,4}?)了[，,][^。！!？?]{0,10}?(?:改成|改为|换成|改去|改学|改到|改练)`)

// nameStop are capitalised words that open a clause without naming anyone.
var nameStop = map[string]bool{"i": true, "i'm": true, "i've": true, "i'll": true, "i'd": true, "we": true, "he": true, "she": true, "they": true, "it": true,
	"the": true, "my": true, "our": true, "your": true, "his": true, "her": true, "their": true,
	"this": true, "that": true, "so": true, "and": true, "but": true, "also": true, "well": true,
	"oh": true, "ok": true, "okay": true, "anyway": true, "btw": true, "fyi": true, "update": true,
	"yes": true, "no": true, "then": true, "now": true, "finally": true, "mr": true, "mrs": true,
	"ms": true, "dr": true, "dr.": true, "mr.": true, "mrs.": true, "ms.": true, "prof": true,
	"news": true, "sadly": true, "apparently": true, "guess": true, "turns": true, "our.": true,
	// A relative called by the relation ("Dad retired"): their life event, not a name.
	"mom": true, "mum": true, "dad": true, "mother": true, "father": true, "grandma": true, "grandpa": true,
	"granny": true, "nana": true, "papa": true, "mama": true, "grandad": true}

// kinBefore is a relative named just before a name ("my dad Gerald", "our son Theo").
var kinBefore = regexp.MustCompile(`(?i)\b(?:dad|father|mom|mum|mother|parents?|wife|husband|spouse|partner|son|daughter|kids?|child|brother|sister|sibling|grand(?:pa|ma|father|mother|son|daughter)|uncle|aunt|cousin|nephew|niece|boyfriend|girlfriend|fianc[eé]e?|in-law)s?\s*,?\s*$`)

// departedZH is someone leaving: "老周退休了", "郭经理上个月离职了", a transfer away
// ("老周调去分公司了", "何老师去带高三了"; not "…调到我们组"). The group is the name
// before the verb, at the start of a clause.
var departedZH = regexp.MustCompile(`(?:^|[，,。；;！!？?、\s]|说|听说|因为|表示|用户偏好|用户)(\p{Han}{2,4}?)(?:那边|那儿|那里|的年卡|的会员卡|的会员|的卡|的课|的账号)?(?:已经|早就|刚刚?|也|都|上个?月|上周|去年|今年|前阵子)?(?:\([0-9-]+(?: to [0-9-]+)?\))?(?:办完|办好)?(?:退休|离职|辞职|调走|调岗|走人|去世|过世|离世|不在了|走了(?:[，,。；;！!]|$)|不去了|不用了|撤了|关门了|倒闭了|换掉了?|停用了?|不练了|不学了|不弹了|不玩了|停了|停掉了|不上了|到期没续|没续|不续了|退卡了|(?:也)?放弃了|销户了?|注销了?|退订了?|不算了|作废了?|` +
	`(?:的事)?(?:先|暂时)?(?:搁置了|黄了|泡汤了|不搞了|不弄了)|` +
	`调(?:去|到|往)[^我咱，,。周下上明后今这0-9一二三四五六七八九十]|(?:去|转去|改去)(?:带|教|管)[^我咱，,。]|转(?:去|到)[^我咱，,。周下上明后今这0-9一二三四五六七八九十])`)

// facilityGoneZH is a place the speaker used that was taken away: "楼下的快递柜拆了",
// "那个菜鸟驿站撤了" (not "快递拆了": a parcel opened).
var facilityGoneZH = regexp.MustCompile(`(?:^|[，,。；;！!？?\s]|用户偏好|用户|的)(\p{Han}{1,4}?[柜站点店摊亭])(?:已经|也)?(?:拆了|撤了|关了|没了)`)

// partedZH is the speaker parting with a thing: "那台旧电脑已经送人了", "旧车卖了",
// "把Kindle转给同事了". The group is the thing, at the start of a clause.
var partedZH = regexp.MustCompile(`(?:^|[，,。；;！!？?\s])(?:我|我们|家里)?(?:把)?(?:那|这)?[台辆部个只块把架套间]?` +
	`(\p{Han}{2,9}?|[A-Za-z][A-Za-z0-9]*(?:\s[A-Za-z0-9]+)?)(?:已经|早就|刚刚?|也|前几天|上周|上个?月)?` +
	`(?:送人|送给|送我|送了|卖了|卖掉|卖给|转手|转给|转卖|捐了|捐给|出掉|处理掉|退掉|退了)`)

// notAThingZH are the words a clause opens with that are a person or a time, never
// the thing or the name that left (我爸退休了 is a parent, not a contact; 昨天卖了 a time).
var notAThingZH = regexp.MustCompile(`^[我你他她它们爸妈爷奶儿女哥姐弟妹叔姨舅孩娃谁啥天年月]|[我你他她它们谁啥天年月]|^[老大二小三]?[爸妈爷奶儿女哥姐弟妹叔姨舅孩娃]$|老公|老婆|[上下这本]周|时候|刚|才|最近|现在|以前|之前|后来|早上|晚上`)

// departedNames are the names a sentence says left the speaker's life (people who
// retired or moved on, things sold or given away, by their name), for the resolver to
// retire what was said of them before.
func departedNames(s string) []string {
	var out []string
	lower := strings.ToLower(s)
	han := hasHan(s)
	// The patterns are costly and run on every sentence: each runs only when a word it
	// needs is there.
	var leaving [][]int
	if containsAnyOf(lower, departedCues) {
		leaving = departedEN.FindAllStringSubmatchIndex(s, -1)
	}
	for _, ix := range leaving {
		if kinBefore.MatchString(s[:ix[2]]) {
			continue // "my dad Gerald retired": a relative's life event, not a contact gone
		}
		var name []string
		for _, w := range strings.Fields(s[ix[2]:ix[3]]) {
			if nameStop[strings.ToLower(w)] || len(w) <= 4 && strings.ToUpper(w) == w {
				name = name[:0] // a word before the name ("FYI", "So"): the name starts after it
				continue
			}
			name = append(name, strings.TrimRight(w, "’'"))
		}
		if len(name) > 0 && len(name[0]) >= 2 {
			out = append(out, name[0])
		}
	}
	var replaced [][]string
	if containsAnyOf(lower, replacedCues) {
		replaced = replacedEN.FindAllStringSubmatch(s, -1)
	}
	for _, m := range replaced {
		name := m[1] + m[2]
		if lo := strings.ToLower(name); !nameStop[lo] && !notReplaced[lo] && len(name) >= 2 && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if containsAnyOf(lower, swappedCues) {
		for _, m := range swappedEN.FindAllStringSubmatch(s, -1) {
			if name := strings.TrimSpace(m[1]); !nameStop[strings.ToLower(name)] && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	if containsAnyOf(lower, []string{"cancel", "ended", "dropped", "quit", "terminated", "closed", "froze", "lapse"}) {
		for _, m := range endedOwnEN.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(out, m[1]) && !nameStop[strings.ToLower(m[1])] {
				out = append(out, m[1])
			}
		}
	}
	for _, re := range []*regexp.Regexp{notAnymoreEN, forgetEN} {
		if re == notAnymoreEN && !containsAnyOf(lower, []string{"any more", "anymore", "any longer", "don't", "do not", "no longer"}) || re == forgetEN && !strings.Contains(lower, "forget") {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			name := strings.Join(m[1:], "")
			if !slices.Contains(out, name) && !nameStop[strings.ToLower(name)] {
				out = append(out, name)
			}
		}
	}
	if han {
		// Each pattern's name is in one of its groups (replacedZH has two alternatives).
		for _, re := range []*regexp.Regexp{replacedZH, departedZH, partedZH, facilityGoneZH} {
			for _, m := range re.FindAllStringSubmatch(s, -1) {
				x := strings.TrimSpace(strings.Join(m[1:], ""))
				if i := strings.Index(x, "的"); i > 0 {
					x = x[:i] // "游泳馆的卡退了": the gym, not its card
				}
				for _, d := range []string{"那", "这"} {
					if i := strings.Index(x, d); i > 0 {
						x = x[:i] // "莫干山那套民宿卖了": the place the thing is at names it
					}
				}
				if utf8.RuneCountInString(x) >= 2 && !notAThingZH.MatchString(x) && startsWithRelationZH(x) == "" {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

// departedCues and replacedCues are words departedEN and replacedEN cannot match without
// (lower-cased).
var (
	departedCues = []string{"retir", "resign", "quit", "left ", "moved", "passed", "fired", "laid", "let go", "transferr",
		"replac", "gone", "behind me", "history", "live with", "rehom", "re-hom", "adopted by", "put down", "put to sleep", "ran away",
		"died", "broke up", "split", "separated", "divorced", "called it quits"}
	replacedCues = []string{"took over", "replac", "switched", "moved", "stopped", "migrated", "transferred", "ported", "exported", "out of", "withdrew", "bailed", "broke up", "split", "divorced", "cancel",
		"unsubscrib", "skipp", "rehomed", "migrated", "got ", "call", "no longer", "isn't", "is not"}
)

// containsAnyOf reports s holding one of subs.
func containsAnyOf(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// singular is the singular of a plain English plural noun ("bikes" → "bike").
func singular(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return strings.TrimSuffix(w, "s")
	}
	return w
}

// recurring is a time that repeats: "every Tuesday", "on Thursdays", "weekly", 每周三.
var recurring = regexp.MustCompile(`\b(?:every|each)\s+(?:other\s+|single\s+)?(?:day|morning|afternoon|evening|night|week|weekend|weekday|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\b(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weekends)\b|\b(?:weekly|daily|nightly|fortnightly|biweekly)\b|每(?:周|天|晚|早|个?星期|个?礼拜|个?月|逢)|周[一二三四五六日天]都|天天`)

// pastTense marks a story told in the past: what happened, not what holds.
var pastTense = regexp.MustCompile(`\b(?:was|were|went|did|had|used to|last)\b|了|过`)

// negatedHaveEN is a clause that says what the speaker does not have ("I don't have a dog,
// but …"): nothing to remember, and told on it would read as a possession.
var negatedHaveEN = regexp.MustCompile(`(?i)^(?:i|we)\s+(?:don't|do not|didn't|did not|never)\s+(?:have|own|keep|got|had)\s+(?:a|an|any)\b[^,;]*(?:[,;]\s*(?:but\s+)?|$)`)

// dropNegatedHave removes a leading clause of what the speaker does not have.
func dropNegatedHave(s string) string {
	if loc := negatedHaveEN.FindStringIndex(s); loc != nil {
		return upperFirst(strings.TrimSpace(s[loc[1]:]))
	}
	return s
}

// dropDenied removes from s its clauses that deny a former state, and returns the rest
// ("" when nothing else is said).
func (l *lexicon) dropDenied(s string) string {
	if !deniedClause.MatchString(s) {
		return s
	}
	var kept []string
	sep := ", "
	if hasHan(s) {
		sep = "，"
	}
	for _, cl := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(",;，；", r) }) {
		if cl = strings.TrimSpace(cl); cl != "" && !deniedClause.MatchString(cl) {
			kept = append(kept, cl)
		}
	}
	return strings.Join(kept, sep)
}

// wrongNumber is a number or an identifier a correction says was wrong, with its
// currency and thousands separators ("$1,845", "B-2231").
const wrongNumber = `[$€£¥]?[\w-]*\d(?:[\d,.]*\d)?[\w-]*`

// corrected are the parts of a correction that name the value it replaces: "…, not the
// 12th", "不是周三，是周四" (→ "是周四").
var (
	correctedEN = regexp.MustCompile(`(?i),\s*(?:and\s+)?not\s+(?:on\s+|at\s+|in\s+|by\s+)?(?:the\s+)?(?:[\w:./' -]{1,24}[.!]?$|(?-i:\p{Lu}[\w'-]*(?:\s\p{Lu}[\w'-]*)?|` + wrongNumber + `)\s*,)`)
	correctedZH = regexp.MustCompile(`(?:而)?不是[^，。,；;]{1,12}[，,]\s*(?:而)?是`)
	// correctedTailZH is the wrong value told after the right one: "是4号，不是14号".
	correctedTailZH = regexp.MustCompile(`[，,]\s*(?:而)?不是[^，。,；;]{1,12}`)
)

// correctedValue is the value a correction says was wrong ("it's Mira, not Myra" →
// Myra, "不是叫阿梅，是叫阿玫" → 阿梅), or "" when s corrects nothing. Only a short value
// (a name, a word) is returned: a longer one is a clause, not a value.
func correctedValue(s string) string {
	var v string
	if hasHan(s) {
		if m := correctedValueZH.FindStringSubmatch(s); m != nil {
			v = m[1] + m[2]
		}
	} else if m := correctedValueEN.FindStringSubmatch(s); m != nil {
		v = m[1] + m[2] + m[3]
	}
	v = strings.Trim(strings.TrimSpace(v), `"'“”‘’`)
	if v == "" || utf8.RuneCountInString(v) > 20 || (!hasHan(v) && len(strings.Fields(v)) > 2) || notIdiomEN[strings.ToLower(v)] || notIdiomEN[strings.ToLower(strings.Fields(v)[0])] {
		return ""
	}
	return v
}

// notIdiomEN are what "…, not X" says as an idiom, no wrong value: "not bad", "not yet".
var notIdiomEN = map[string]bool{"bad": true, "too bad": true, "great": true, "much": true, "really": true, "sure": true,
	"yet": true, "at all": true, "exactly": true, "quite": true, "ideal": true, "cheap": true, "perfect": true,
	"kidding": true, "joking": true, "lying": true}

var (
	correctedValueEN = regexp.MustCompile(`(?i),\s*(?:and\s+)?not\s+(?:the\s+)?([\p{L}\d'-]+(?:\s[\p{L}\d'-]+)?)[.!]?$|,\s*(?:and\s+)?not\s+(?:the\s+)?(?-i:(\p{Lu}[\w'-]*(?:\s\p{Lu}[\w'-]*)?|` + wrongNumber + `))\s*,|\b(?:it's|it is|its|name is|called)\s+not\s+([\p{L}'-]+)\s*,?\s*(?:but|it's|it is)\b`)
	correctedValueZH = regexp.MustCompile(`不是(?:叫|姓|在|住在)?([^，。,；;是]{1,8})[，,]\s*(?:而)?是|(?:是|叫|在|定在|改到)(?:叫|姓)?[^，。,；;不]{1,8}[，,]\s*(?:而)?不是(?:叫|姓|在)?([^，。,；;]{1,8})`)
)

// correctedTo is the right value a correction gives beside the wrong one ("it's Mira,
// not Myra" → Mira; "不是叫阿梅，是叫阿玫" → 阿玫), or "": a name or a word, as
// correctedValue.
func correctedTo(s string) string {
	var v string
	if hasHan(s) {
		if m := correctedToZH.FindStringSubmatch(s); m != nil {
			v = m[1] + m[2]
		}
	} else if m := correctedToEN.FindStringSubmatch(s); m != nil {
		v = m[1] + m[2]
	}
	v = strings.Trim(strings.TrimSpace(v), `"'“”‘’`)
	if v == "" || utf8.RuneCountInString(v) > 20 || (!hasHan(v) && len(strings.Fields(v)) > 2) {
		return ""
	}
	return v
}

var (
	correctedToEN = regexp.MustCompile(`(?i)\b(?:it's|it is|its|name is|called|spelled|spelt|that's|that is)\s+(?-i:(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+)?|[\w-]*\d[\w-]*))\s*,?\s*(?:and\s+)?not\s+|\bnot\s+[\p{L}\d'-]+(?:\s[\p{L}\d'-]+)?\s*,?\s*(?:but|it's|it is)\s+(?-i:(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}\d'-]*)?|[\w-]*\d[\w-]*))`)
	correctedToZH = regexp.MustCompile(`不是(?:叫|姓|在|住在)?[^，。,；;是]{1,8}[，,]\s*(?:而)?是(?:叫|姓|在|住在)?([^，。,；;！!]{1,8})|是(?:叫|姓)?([^，。,；;不]{1,8})[，,]\s*不是`)
)

// A correction that gives only the right identifier ("sorry, it's actually B2213, I
// swapped two digits", "其实是 K5512，我记错了"): the memory it corrects holds an
// identifier of the same shape (see the resolver's sameShapeID).
var (
	correctedIDEN = regexp.MustCompile(`(?i)\b(?:actually|sorry|oops|i meant|correction|typo|wrong)\b[^.!?]{0,40}?\b((?-i:[A-Z]{0,5})-?\d[\dA-Za-z-]{2,15})\b`)
	correctedIDZH = regexp.MustCompile(`(?:其实|应该|实际上|正确的|更正|抱歉|不好意思|说错|记错|写错|搞错|打错|输错|填错|弄反|写反|记反)[^。！？]{0,12}?([A-Za-z]{0,5}-?\d[\dA-Za-z-]{2,15})`)
	correctionCue = regexp.MustCompile(`(?i)\b(?:actually|sorry|oops|i meant|correction|typo|wrong|mixed up|swapped)\b|其实|应该是|更正|说错|记错|写错|搞错|弄错|记反|打错|输错|填错|弄反|写反`)
)

// correctedID is the identifier a correction gives as the right one, or "".
func correctedID(s string) string {
	if !correctionCue.MatchString(s) {
		return ""
	}
	re := correctedIDEN
	if hasHan(s) {
		re = correctedIDZH
	}
	if m := re.FindStringSubmatch(s); m != nil && strings.ContainsAny(m[1], "0123456789") && !yearLike.MatchString(m[1]) {
		return m[1]
	}
	return ""
}

// yearLike is a year or a date by the year ("2026", "2026年8月"): a time, not an identifier
// whose copies a correction rewrites.
var yearLike = regexp.MustCompile(`^(?:19|20)\d{2}(?:年.*)?$`)

// dropCorrected removes from a correction the value it replaces.
func dropCorrected(s string) string {
	if hasHan(s) {
		return correctedTailZH.ReplaceAllString(correctedZH.ReplaceAllString(s, "是"), "")
	}
	// Mid-sentence the clause after the dropped value stays: its comma does too.
	return correctedEN.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, ",") {
			return ","
		}
		return ""
	})
}

// identityFact reports whether an identity rule of the extractor matches s.
func (l *lexicon) identityFact(s string) bool {
	for _, r := range l.idents {
		if r.re.MatchString(s) {
			return true
		}
	}
	return false
}

// identRule recognises one kind of identity fact; value is the submatch holding it.
type identRule struct {
	re    *regexp.Regexp
	kind  string
	value int
}

func newIdentRules() []identRule {
	re := regexp.MustCompile
	const zhVal = `([^，。,!！?？；;\s]{1,20})`
	const enVal = `([^,;!?]{2,60})`
	// placeName is a capitalised place name of up to three words ("Salt Lake City").
	const placeName = `(\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+){0,2})`
	return []identRule{
		{re: re(`我叫(\p{Han}{1,4}|[A-Za-z][A-Za-z .'-]{0,30}[A-Za-z])`), kind: "name", value: 1},
		{re: re(`我的名字(?:是|叫)(\p{Han}{1,4}|[A-Za-z][A-Za-z .'-]{0,30}[A-Za-z])`), kind: "name", value: 1},
		{re: re(`我(?:现在|目前|一直)?住在` + zhVal), kind: "location", value: 1},
		{re: re(`我家在` + zhVal), kind: "location", value: 1},
		// "现在住成都锦江区", "住浦东新区": 住 without 在, the place named by its division.
		{re: re(`我(?:们)?(?:现在|目前|如今|就|一直)?住(\p{Han}{1,6}?(?:省|市|区|县|镇))`), kind: "location", value: 1},
		{re: re(`我(?:现在|目前)?在([^，。,!！?？；;\s]{1,20}?)(?:工作|上班|任职)`), kind: "employer", value: 1},
		{re: re(`我(?:现在|目前)?就职于` + zhVal), kind: "employer", value: 1},
		{re: re(`我来自` + zhVal), kind: "origin", value: 1},
		{re: re(`我是(\p{Han}{2,4}?)人(?:[，。,.!！；;\s]|$)`), kind: "origin_zh", value: 1},
		{re: re(`我(?:现在|目前|已经)?(?:升职了[，,]\s*(?:现在|目前)?)?是(?:一名|一个|一位|个|名)?(\p{Han}{0,8}?(?:组长|队长|主任|负责人|店长|产品经理|工程师|设计师|程序员|开发者|经理|总监|主管|老师|教师|学生|研究生|博士生|博士|医生|护士|律师|会计|作家|记者|教授|研究员|运营|销售|创始人|老板|素食者|素食主义者|自由职业者)|[A-Z]{2,6})`), kind: "role", value: 1},
		{re: re(`我的([^，。,.!！?？是叫的\s]{1,10})(?:是|叫)([^，。,!！?？；;]{1,40})`), kind: "attr", value: 2},
		// A new value of an amount of the speaker's: "房租涨到了4800", "我的预算调成两万".
		{re: re(`(?:^|我的?|[，,])(房租|租金|工资|月薪|年薪|薪水|预算|房贷|月供|体重|血压|血糖)(?:又|也|已经)?(?:涨|降|调|加|减|升|变)(?:到|成|为)了?([^，。,!！?？；;]{1,20})`), kind: "attr", value: 2},
		// An attribute of a relation's: "我儿子的班主任是王老师", "我老婆的生日是…".
		{re: re(`我(?:的|家)?((?:` + relZH + `)的[^，。,.!！?？是叫的\s]{1,6}?)(?:现在|目前)?(?:是|叫)([^，。,!！?？；;]{1,40})`), kind: "attr", value: 2},
		// A name given for one the speaker no longer wants: "don't call me Bob anymore, just Robert".
		{re: re(`(?i:\b(?:don't|do\s+not|stop)\s+call(?:ing)?\s+me\s+[\p{L}'-]+(?:\s+any\s?more)?\s*[,;.]?\s*(?:just|call\s+me|it's|i'm|i\s+go\s+by)\s+)(\p{Lu}[\p{L}'-]*)`), kind: "name", value: 1},
		{re: re(`(?i:\bmy name is|\bcall me|\bi'm called|\bi am called)\s+(?i:now\s+|actually\s+|officially\s+|still\s+)?(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*){0,2})`), kind: "name", value: 1},
		// The name given by a noun phrase rather than a first-person verb ("the name's …").
		{re: re(`(?i:\b(?:everyone|everybody|people|friends|my friends|most people|folks)\s+(?:just\s+)?call(?:s)?\s+me|\bi\s+(?:usually\s+|now\s+|actually\s+|mostly\s+)?go\s+by)\s+(\p{Lu}[\p{L}'-]*)`), kind: "name", value: 1},
		{re: re(`(?i:\bthe name's|\bthe name is|\bname's)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*){0,2})`), kind: "name", value: 1},
		// Home as the subject of a copula: "home is Leeds", "home's still Quito".
		{re: re(`(?i:\bhome(?:\s+is|'s|\s+has been)(?:\s+(?:now|still|currently))?)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*){0,2})`), kind: "location", value: 1},
		// Work described by its object, then the organisation after at/for ("I do backend
		// work as an SRE over at Halcyon"): the capitalised name is the employer.
		{re: re(`(?i:\bi\b[^,;.!?]{0,60}?\b(?:work|working|job|engineer|developer|designer|manager|analyst|nurse|teacher|consultant|scientist|lead)\s+(?:over\s+|out\s+|down\s+|up\s+)?(?:at|for|with))\s+(\p{Lu}[\p{L}\d&.'-]*(?:\s\p{Lu}[\p{L}\d&.'-]*){0,3})`), kind: "employer", value: 1},
		{re: re(`(?i:\b(?:i|we) live in|\b(?:i'm|i am|we're|we are) based in|\b(?:i|we) currently live in|\b(?:i|we) now live in|\bi reside in|\bi moved to)\s+` + enVal), kind: "location", value: 1},
		// Living somewhere told with a particle or an aspect ("we live out in …", "I've been
		// living down in …", "I'm based out of …"): the place is a capitalised name.
		{re: re(`(?i:\b(?:i|we)(?:'ve|\s+have)?\s+(?:been\s+)?(?:still\s+|now\s+|currently\s+|actually\s+)?(?:live|living|lived)\s+(?:up|down|out|over|right|all the way)\s+(?:in|near)|\b(?:i'm|i am|we're|we are)\s+(?:now\s+|currently\s+)?(?:based|living|settled)\s+(?:out of|in|down in|up in|over in|out in)|\b(?:i|we)\s+(?:settled|settled down)\s+in)\s+` + placeName), kind: "location", value: 1},
		// Being somewhere stated as lasting ("I'm in … now", "we're in … for good"): a visit
		// is told with a span or a purpose and is not this.
		{re: re(`(?i:\b(?:i'm|i am|we're|we are)\s+(?:now\s+|finally\s+)?(?:in|out in|over in|down in|up in))\s+` + placeName + `(?i:\s+(?:now|for good|these days|permanently|full[- ]time)\b)`), kind: "location", value: 1},
		// Where the speaker is, told by "out here in …": "I run a shop out here in Tulsa".
		{re: re(`(?i:\b(?:out|over|down|up|back)\s+here\s+in)\s+` + placeName), kind: "location", value: 1},
		// A home named by where it is ("my flat in …", "our house in …").
		{re: re(`(?i:\b(?:my|our)\s+(?:(?:new|little|rented|tiny)\s+)?(?:flat|apartment|house|place|home|condo|studio)(?:'s|\s+is)?\s+(?:here\s+)?(?:in|near))\s+(?:the\s+)?` + placeName), kind: "location", value: 1},
		// "We rent a flat in Braga", "I own a little house in Sintra"
		{re: re(`(?i:\b(?:i|we)\s+(?:now\s+|still\s+)?(?:rent|own|share|have|bought|live\s+in)\s+(?:a|an|our|my)\s+(?:(?:new|little|small|tiny|two-bed|one-bed|rented)\s+)?(?:flat|apartment|house|place|home|condo|studio|cottage|bungalow)\s+(?:in|near))\s+(?:the\s+)?` + placeName), kind: "location", value: 1},
		// Living by a street or a district: "I live just off the Ringway", "we live near Old Market".
		{re: re(`(?i:\b(?:i|we)\s+(?:now\s+|still\s+)?live\s+(?:just\s+|right\s+)?(?:off|near|by|next to|around the corner from)\s+(?:the\s+)?)` + placeName), kind: "location", value: 1},
		// 在某地安家、定居、租房、买房，人在某地。
		{re: re(`我(?:们)?(?:现在|目前|如今|已经|人)*在(\p{Han}{2,6}?)(?:定居|安家|落户|租(?:了|的)?房|买(?:了|的)?房|租的|买的|住下)`), kind: "location", value: 1},
		{re: re(`我(?:们)?人(?:现在|目前)?在(\p{Han}{2,6}?)(?:[，。,.!！；;]|$)`), kind: "location", value: 1},
		{re: re(`(?i:\bi work at|\bi work for|\bi'm working at|\bi'm working for|\bi am working at|\bi am working for|\bi'm employed at|\bi'm employed by|\bi am employed by)\s+` + enVal), kind: "employer", value: 1},
		{re: re(`(?i:\bi'm from|\bi am from|\bi come from|\bi grew up in)\s+` + enVal), kind: "origin", value: 1},
		{re: re(`(?i:\bi'm|\bi am)\s+(?i:an?\s+)?((?i:vegetarian|vegan|pescatarian|gluten-free|dairy-free|plant-based|kosher|halal|keto))\b`), kind: "diet", value: 1},
		{re: re(`(?i:\bi'm|\bi am)\s+(?i:(?:now|officially|currently|finally|still)\s+)?(?i:an?)\s+([\p{L}][\p{L} -]{1,40})`), kind: "role", value: 1},
		// A job told as the capacity of the speaker's work: "I do X work as a …", "I serve as an …".
		{re: re(`(?i:\bi\b[^,;.!?]{0,40}?\b(?:work|working|serve|serving|employed|hired|started|starting|start|begin|beginning|joined|joining|join|came on|coming on)\s+as\s+an?)\s+([\p{L}][\p{L} -]{1,40}?)(?:\s+(?i:at|for|with|over|in|on|since)\b|[,;.!?]|$)`), kind: "role", value: 1},
		// the speaker's clause goes on without its subject ("I quit the shop, starting as a
		// nurse on Monday")
		{re: re(`(?i:\bi\b[^.!?]{0,80}?[,;]\s*(?:(?:and|now|then|and now|and then)\s+)?(?:starting|started|working|now working|joining)\s+as\s+an?)\s+([\p{L}][\p{L} -]{1,40}?)(?:\s+(?i:at|for|with|over|in|on|since|from|next|this|tomorrow)\b|[,;.!?]|$)`), kind: "role", value: 1},
		{re: re(`(?i:\bmy|\bour)\s+([a-z][a-z' -]{0,30}?)\s+(?i:is|are)\s+(?i:(?:actually|really|now)\s+)?((?:\d,\d|[^,;!?]){1,80})`), kind: "attr", value: 2},
		// A new value of an amount of the speaker's: "raised my rent to $1,700", "my
		// budget went down to 900".
		{re: re(`(?i:\b(?:raised|increased|bumped|upped|hiked|cut|lowered|reduced|dropped)\s+my)\s+([a-z]+(?:\s[a-z]+)?)\s+(?i:to)\s+((?:\d,\d|[^,;!?]){1,40})`), kind: "attr", value: 2},
		{re: re(`(?i:\bmy)\s+([a-z]+(?:\s[a-z]+)?)\s+(?i:went|goes|is\s+going|has\s+gone|was\s+raised|was\s+increased|was\s+cut|got\s+raised|got\s+bumped)\s+(?i:(?:up|down)\s+)?(?i:to)\s+((?:\d,\d|[^,;!?]){1,40})`), kind: "attr", value: 2},
	}
}

// Clauses of a long sentence and whose they are. A chatty turn strings together what
// happened to everyone ("the train was late, my flatmate's cat got stuck on the roof, anyway I
// signed up for …"): what the speaker says about themselves is the part to remember.
var (
	// otherSubjectEN opens a clause whose subject is someone else's: a possessive chain
	// ("my flatmate's brother", "Ana's uncle"), a colleague or a neighbour, or a noun phrase
	// with an article ("the bus").
	otherSubjectEN = regexp.MustCompile(`(?i)^(?:(?:and|but|so|also|plus|then|apparently|meanwhile|oh|well|anyway|honestly)[,]?\s+)*(?:(?:my|our)\s+(?:\w+\s+)?(?:neighbou?rs?|co-?workers?|colleagues?|roommates?|boss|classmates?|landlord|landlady|acquaintances?)\b|(?:my|our)\s+[\w-]+'s\b|\p{Lu}[\p{L}-]+'s\s+\w+|(?:the|a|an|this|that|some|his|her|their)\s+[\w-]+)`)
	// otherPeopleEN opens a sentence about a colleague's, a neighbour's or a flatmate's
	// doings: people around the speaker whose news is not the speaker's.
	otherPeopleEN = regexp.MustCompile(`(?i)^(?:(?:and|but|so|also|plus|then|apparently|meanwhile|oh|well|anyway|honestly)[,]?\s+)*(?:my|our)\s+(?:\w+\s+)?(?:neighbou?rs?|co-?workers?|colleagues?|roommates?|flatmates?|boss|classmates?|landlord|landlady|acquaintances?)\b`)
	// otherSubjectZH opens a clause about a colleague, a neighbour or a friend of the speaker.
	otherSubjectZH = regexp.MustCompile(`^(?:我(?:的)?)?(?:同事|邻居|室友|同学|朋友|房东|老板|领导|上司)`)
	clauseMarks    = ",;:，、；：—–"
)

// minChattyClauses is how many clauses make a sentence long enough to be told in parts.
// English names every clause's subject, so a sentence about others alone is caught whole
// (aboutOthers); a remark between two of the speaker's clauses costs little. Chosen on the
// LoCoMo dev conversations (conv-26, conv-30): three clauses there cut descriptions
// ("the colours were amazing") that observations hold.
const (
	minChattyClauses   = 3
	minChattyClausesEN = 4
)

// speakerPart keeps, of a sentence of several clauses, those about the speaker: in the
// first person (a colleague's or a neighbour's doings are not), stating a fact a rule
// knows, or going on about a clause kept. A shorter sentence is returned whole; so is one
// where no clause is the speaker's (its rules decide).
func (l *lexicon) speakerPart(s string) string {
	var parts []string
	start, bracket := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			bracket++ // a redaction placeholder ("[REDACTED:card_number]") is one word
		case ']':
			bracket = max(0, bracket-1)
		}
		if bracket == 0 && strings.ContainsRune(clauseMarks, r) && !(r == ':' && digitAround(s, i)) {
			parts = append(parts, s[start:i])
			start = i + utf8.RuneLen(r)
		}
	}
	parts = append(parts, s[start:])
	zh := hasHan(s)
	// A part too short to hold a subject and a verb ("My wife", "Ingrid", "anyway") is
	// an apposition or a lead: it belongs to the part after it.
	var merged []string
	carry := ""
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if carry != "" {
			p = carry + ", " + p
			carry = ""
		}
		short := len(strings.Fields(p)) < 3
		if zh {
			short = utf8.RuneCountInString(p) < 4
		}
		if short && i+1 < len(parts) {
			carry = p
			continue
		}
		merged = append(merged, p)
	}
	parts = merged
	if len(parts) < minChattyClauses || !zh && len(parts) < minChattyClausesEN {
		return s
	}
	var kept []string
	prevKept, first := false, true
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		lower := lowerText(p)
		keep := false
		switch {
		case zh:
			// Chinese drops a subject it keeps: a clause without one goes on about the
			// subject before it, a "是" too ("…换班主任了，现在是谭老师").
			other := otherSubjectZH.MatchString(p) || strings.ContainsAny(string([]rune(p)[0]), "他她它")
			speaker := speakerClauseZH(p) && (first || prevKept || !copulaLeadZH(p))
			// "公司VPN用的是…": a tool of the speaker's work is theirs to keep.
			keep = (l.firstPerson.MatchString(lower) && !other) || speaker || (prevKept && !other) || usesZH.MatchString(p)
		default:
			// English names each clause's subject: only one that is someone or something
			// else's ("the bus was late", "Ana's uncle sold …") is dropped.
			keep = !otherSubjectEN.MatchString(p) || l.identityFact(p) || l.clauses.matchAny(p)
		}
		if keep {
			kept = append(kept, p)
		}
		prevKept, first = keep, false
	}
	if len(kept) == 0 {
		return s
	}
	if zh {
		return strings.Join(kept, "，")
	}
	return strings.Join(kept, ", ")
}

// digitAround reports a digit on both sides of byte i of s: the colon of a time ("2:45").
func digitAround(s string, i int) bool {
	return i > 0 && i+1 < len(s) && s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= '0' && s[i+1] <= '9'
}

// aboutOthers reports a sentence whose subject is someone else the speaker knows ("my
// colleague's wife opened …", "我室友阿凯最近在学…") and that says nothing of the speaker
// after it: news of other people, not a fact about the speaker.
func (l *lexicon) aboutOthers(s string) bool {
	if hasHan(s) {
		if !otherSubjectZH.MatchString(s) {
			return false
		}
		rest := otherSubjectZH.ReplaceAllString(s, "")
		return !strings.ContainsAny(rest, "我咱")
	}
	loc := otherPeopleEN.FindStringIndex(s)
	if loc == nil {
		return false
	}
	return !l.firstPerson.MatchString(lowerText(s[loc[1]:]))
}

// assistantStatement is an assistant's sentence without the tag that asks the user to
// confirm it: "Your plan renews on the 5th, right?" states what it asks about.
func assistantStatement(s string) string {
	return tagQuestion.ReplaceAllString(strings.TrimSpace(s), ".")
}

// tagQuestion is the tag that turns a statement into a request for confirmation.
var tagQuestion = regexp.MustCompile(`(?i)(?:,\s*(?:right|correct|yes|yeah|no|isn't it|is that right|am i right|if i remember correctly)|，?\s*(?:对吧|对吗|是吧|是吗|没错吧|没错吗))\s*[?？]$`)
