package extractor

import (
	"regexp"
	"strings"
	"time"
)

// A relation's standing fact, told in the present ("My mom works at a bakery downtown",
// "我妹妹在深圳做设计"): no rule of a named slot took it, and it is not an event of a day.
var (
	relStandingEN = regexp.MustCompile(`^(?i:(?:and|but|so|also|oh|well)[,]?\s+)*(?i:my|our)\s+(?i:(?:older|younger|big|little|eldest|oldest|youngest|twin)\s+)?((?i:` + relEN + `|eldest|oldest|youngest|middle one|middle child|twins|boys|girls))(?i:s)?(?:\s+\p{Lu}[\p{L}'-]+)?,?\s+(?i:(?:still|now|also|usually|mostly|really|actually|currently|basically)\s+)?(?i:(works|pulls|plays|teaches|lives|runs|owns|uses|needs|wears|can't|cannot|doesn't|does\s+not|isn't|is\s+not|has\s+to|waters|feeds|walks|minds|watches|babysits|helps|drives|picks\s+up|looks\s+after|takes\s+care\s+of|studies|coaches|drives|speaks|volunteers|snores|goes\s+to|attends|manages|writes|sings|paints|knits|cooks|bakes|collects|trains|races|rides|sells|builds|fixes|designs|does))\b`)
	relStandingZH = regexp.MustCompile(`^我(?:的|家)?(` + relZH + `)(?:\p{Han}{0,3}?)(?:现在|目前|平时|一直|还)?(?:在[^，。,.！!？?]{1,12}?(?:上班|工作|做|教|读书|读|上学|当|开|上夜班|上白班)|(?:每天|每周|经常|常常|总是|老是))`)
	// worksAtEN is a workplace told after "works": the relation's employer slot.
	worksAtEN = regexp.MustCompile(`(?i)\bworks\s+(?:at|for)\s+`)
)

// relationStanding is the relation a standing fact of s is told of ("" for none), and
// the slot it fills ("" when it has none: a later fact of the relation stands beside it).
func (o *Offline) relationStanding(s string) (rel, key string) {
	if hasHan(s) {
		if pastTense.MatchString(s) {
			return "", ""
		}
		if m := relStandingZH.FindStringSubmatch(s); m != nil {
			return o.lex.clauses.rel(m[1]), ""
		}
		return "", ""
	}
	m := relStandingEN.FindStringSubmatch(s)
	if m == nil {
		return "", ""
	}
	rel = o.lex.clauses.rel(m[1])
	if strings.EqualFold(m[2], "works") && worksAtEN.MatchString(s) {
		key = "relation." + slugify(rel) + ".employer"
	}
	return rel, key
}

// moveAhead reports a move told at byte at of s that has not happened yet: said with a
// word of the future ("will", "going to", 要, 打算) or dated after ref ("in March",
// 下个月). "I moved to Denver last month" and "I'm moving to Denver" (under way) have.
func (o *Offline) moveAhead(s string, at int, ref time.Time) bool {
	clause := s
	if at >= 0 {
		start := strings.LastIndexAny(s[:at], ".!?;。！？；") + 1
		end := len(s)
		if i := strings.IndexAny(s[at:], ".!?;。！？；"); i >= 0 {
			end = at + i
		}
		clause = s[start:end]
	}
	lower := strings.ToLower(clause)
	if pastMoveEN.MatchString(lower) || pastMoveZH.MatchString(clause) {
		return false
	}
	if futureMoveEN.MatchString(lower) || futureMoveZH.MatchString(clause) {
		return true
	}
	today := dayOf(ref, 0)
	for _, m := range o.lex.temporal.Find(clause, ref) {
		if m.At.After(today) {
			return true
		}
	}
	return false
}

var (
	futureMoveEN  = regexp.MustCompile(`\b(?:will|'ll|going to|gonna|plan(?:ning)? to|about to|hope to|hoping to|want to|thinking of|considering|soon|next|in the (?:spring|summer|fall|autumn|winter|new year)|later this|this coming)\b`)
	droppedMoveEN = regexp.MustCompile(`^(?i:moving|relocating)\b`)
	pastMoveEN    = regexp.MustCompile(`\b(?:moved|relocated|have moved|'ve moved|just moved)\b`)
	futureMoveZH  = regexp.MustCompile(`要|打算|准备|计划|将|会|想|下个?月|明年|下周|年底|年后|过完年|以后`)
	pastMoveZH    = regexp.MustCompile(`(?:搬到|搬去|搬来|搬回|移居|调到|调去)了|已经|上个?月|去年|上周`)
)

// usedBeforeZH is a thing used before and the one used now ("之前用安卓，现在改用iPhone了").
var usedBeforeZH = regexp.MustCompile(`(?:以前|之前|原来|过去)(?:一直)?用(?:的是)?([^，。,！!？?]{1,12}?)[，,]\s*(?:现在|如今)(?:都)?(?:换成了?|改用了?|换了|用的是|用|换到了?)([^，。,！!？?]{1,12}?)(?:了)?(?:[，。,！!？?]|$)`)

// deviceOfEither is the kind of device one of a pair names ("" when neither names one):
// a phone by its system or maker, a computer only by a word for one.
func deviceOfEither(a, b string) string {
	for _, v := range []string{a, b} {
		if k := deviceKind(v); k != "computer" {
			return k
		}
	}
	for _, v := range []string{a, b} {
		if computerWordZH.MatchString(strings.ToLower(v)) {
			return "computer"
		}
	}
	return ""
}

var computerWordZH = regexp.MustCompile(`电脑|笔记本|台式机|\bmac|macbook|windows|linux|thinkpad`)

// usedToEN is what the speaker liked or did before ("used to be big on horror films",
// "used to drink loads of cola"): the thing is group 1.
var usedToEN = regexp.MustCompile(`(?i)\bused\s+to\s+(?:be\s+(?:(?:really|so|very|super)\s+)?(?:big\s+on|huge\s+on|into|obsessed\s+with|a\s+(?:big\s+|huge\s+)?fan\s+of)|love|like|enjoy|adore|watch|play|read|eat|drink|have|use|go\s+to)\s+((?:(?:a\s+lot\s+of|loads\s+of|lots\s+of|tons\s+of)\s+)?(?:[a-z0-9-]+\s+){0,2}?[a-z0-9-]+)(?:\s+(?:but|and|until|before|now|every|all|whenever)\b|[,.;!]|$)`)

// quantityLead is "lots of", "loads of", "a lot of" before a thing.
var quantityLead = regexp.MustCompile(`(?i)^(?:a\s+lot\s+of|lots\s+of|loads\s+of|tons\s+of|so\s+much|so\s+many)\s+`)

// The speaker's weight goal, one slot: "trying to lose 4 kg", "hit my goal weight", "想减掉
// 三公斤", "体重目标达到了".
var (
	weightGoalEN = regexp.MustCompile(`(?i)\b(?:lose|lost|losing|drop|dropping|shed|shedding|gain|gaining|put\s+on)\s+(?:another\s+|about\s+|around\s+)?(?:\d+(?:\.\d+)?|a\s+few|some|one|two|three|four|five|six|seven|eight|nine|ten)\s*(?:kg|kgs|kilos?|lbs?|pounds|stone)\b|\b(?:weight|weight-loss|weight\s+loss)\s+(?:goal|target)\b|\bgoal\s+weight\b|\btarget\s+weight\b`)
	weightGoalZH = regexp.MustCompile(`减(?:掉|肥|重)?[^，。,！!]{0,4}?(?:\d+|[一二两三四五六七八九十]+)(?:公斤|斤|kg)|体重目标|减肥目标|目标体重|增重[^，。]{0,4}(?:公斤|斤)`)
)

// backToEN opens a sentence whose subject, the speaker, was dropped: "Back to five days a week".
var backToEN = regexp.MustCompile(`(?i)^(?:back|down|up)\s+to\b`)

// relJobChangeZH is a relation leaving a job for another line of work: "我哥辞了原来的工作，
// 自己开了个面馆", "我妈退休以后去社区当志愿者".
var relJobChangeZH = regexp.MustCompile(`^我(?:的|家)?(` + relZH + `)[^，。,！!？?]{0,8}?(?:辞了|辞掉了|辞职|不干了|离开了|退休|离职|被裁)[^。！？!?]{0,14}?[，,]?\s*(?:以后|之后)?[，,]?\s*(?:自己|现在|如今|改)?(?:开了(?:个|一个|家|一家)|去(?:了)?[^，。]{1,8}(?:当|做)|在[^，。]{1,8}(?:当|做)|当起了|做起了|改行)`)

// jobChangeEN is someone leaving a job for other work: "Ines left the bank and opened a
// bakery", "My brother quit teaching and now drives a cab". Group 1 is who.
var jobChangeEN = regexp.MustCompile(`^((?i:(?:my|our)\s+(?:older\s+|younger\s+|big\s+|little\s+)?(?:` + relEN + `))|\p{Lu}[\p{Ll}'-]+)(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?i:just\s+|finally\s+|recently\s+)?(?i:left|quit|retired\s+from|gave\s+up)\s+[^,.;!?]{2,40}?\s+(?i:and|to)\s+(?i:now\s+|has\s+|just\s+)?(?i:opened|started|set\s+up|launched|became|is\s+now|now\s+works|works|joined|went\s+into|drives|teaches|runs|took\s+over|bought)\b`)

// A subscription or membership the speaker has or ended, one slot per service:
// "we subscribe to Crunchyroll", "cancelled Audible", "开了B站大会员", "爱奇艺会员没续".
var (
	subscriptionEN = regexp.MustCompile(`(?i:\b(?:subscribe(?:d)?\s+to|(?:a|my|our)\s+subscription\s+to|signed\s+up\s+for|cancell?ed|unsubscribed\s+from|dropped|ended|let)\s+(?:my\s+|our\s+|the\s+)?)(\p{Lu}[\p{L}\d&'-]*(?:\s\p{Lu}[\p{L}\d&'-]*)?\+?)(?:\s+(?i:lapse|membership|subscription|premium|plus))?`)
	subscriptionZH = regexp.MustCompile(`(?:订了|开了|开通了|买了|续了|办了|充了|退订了|取消了)?(?:个|一个)?([A-Za-z+]*)(\p{Han}{0,6}?)(?:大会员|会员|VIP|年卡|月卡|订阅)(?:[，。,！!]|$|没续|到期|退订|取消|不续|没再续|停了)`)
)

// carOwnedZH tells whether the speaker has a car: "家里没车", "上个月提了车", "把车卖了".
var carOwnedZH = regexp.MustCompile(`没有车|没车|不开车|买(?:了)?(?:辆|台)?(?:新|二手)?车|提(?:了)?(?:新)?车|卖(?:了)?车|把车卖`)

// childMovedEN is a child moved to another school: "we moved our son to St Anne's",
// "switched my daughter to Hillside Academy". Group 1 is the child.
var childMovedEN = regexp.MustCompile(`(?i:\b(?:moved|switched|transferred|enrolled|put)\s+(?:my|our)\s+)((?i:son|daughter|kid|kids|child|children|boy|girl|eldest|youngest|twins|little one))(?i:\s+(?:to|at|in|into))\s+((?:St\.?\s+)?\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*){0,3})`)

// The airline the speaker flies, one slot: "always fly KLM", "I book Lufthansa now",
// "lost my Delta status", "出差坐东航". The names are a gazetteer of the large carriers.
const airlinesEN = `KLM|Lufthansa|Delta|United|American\s+Airlines|British\s+Airways|BA|Emirates|Qatar(?:\s+Airways)?|Ryanair|easyJet|Southwest|JetBlue|Alaska(?:\s+Airlines)?|Air\s+France|Iberia|SAS|Finnair|Cathay(?:\s+Pacific)?|Singapore\s+Airlines|ANA|JAL|Qantas|Air\s+Canada|WestJet|Turkish(?:\s+Airlines)?|Etihad|Wizz(?:\s+Air)?|Vueling|TAP|Aer\s+Lingus|Virgin(?:\s+Atlantic|\s+Australia)?|Swiss|Austrian|Air\s+New\s+Zealand|Korean\s+Air|EVA(?:\s+Air)?|Frontier|Spirit`

var (
	airlineEN = regexp.MustCompile(`\b(?i:fly|flies|flying|flew|book|books|booking|booked|stick\s+with|sticking\s+with|loyal\s+to|status\s+with|switched\s+to|go\s+with|going\s+with|always\s+take|take)\s+(?i:with\s+)?(?:` + airlinesEN + `)\b|\b(?:` + airlinesEN + `)\s+(?i:status|miles|points|gold|silver|elite|frequent\s+flyer)\b`)
	airlineZH = regexp.MustCompile(`(?:坐|飞|订|选|改坐|改飞|换成|只坐|一般坐)(?:的是)?(?:国航|东航|南航|海航|川航|厦航|深航|春秋|吉祥|山航|华夏航空|首都航空|长龙)|(?:国航|东航|南航|海航|川航|厦航|深航)(?:的)?(?:金卡|银卡|会员|里程)`)
)

// projectZH is the project the speaker works on, one at a time: "这个季度我负责…迁移",
// "…交给小唐了，我转去做…".
var projectZH = regexp.MustCompile(`^(?:这个季度|今年|最近|目前|现在)?我(?:现在|目前|这个季度|今年|最近)?(?:主要)?(?:负责|牵头|主导|接手了?)[^，。,！!？?]{0,12}(?:项目|迁移|改版|重构|开发|上线|系统)|(?:交给|交接给|移交给)[\p{Han}A-Za-z]{1,8}?(?:了)?[，,]\s*我(?:转去|去|改去|开始|调去)(?:做|负责|跟)`)

// Getting over an illness ends the state told of it ("feeling fine again, the cold is
// gone", "感冒好了"): the speaker's status slot, with no end of its own.
var (
	recoveredEN = regexp.MustCompile(`(?i)\bfeeling\s+(?:fine|better|great|good|ok|okay|normal|much\s+better|100%)(?:\s+again|\s+now)?\b|\b(?:the|my|this)\s+(?:cold|flu|fever|cough|migraine|headache|covid|infection|sore\s+throat|rash|stomach\s+bug|bug)\s+(?:is|has|'s)\s+(?:gone|cleared(?:\s+up)?|finally\s+gone|over|better)\b|\b(?:fully\s+)?recovered\b|\ball\s+better\b|\bback\s+to\s+(?:normal|full\s+health|100%)\b`)
	recoveredZH = regexp.MustCompile(`(?:感冒|发烧|咳嗽|病|嗓子|过敏|肠胃|胃)(?:已经|终于|差不多)?(?:好了|好多了|痊愈了?|康复了?|退了)|身体(?:已经)?(?:恢复|好)了|康复了|痊愈了`)
)

// What the speaker holds that runs out on a date, one slot each: "my passport expires in
// May 2028", "驾照明年3月到期".
var (
	expiryEN = regexp.MustCompile(`(?i)\b(passport|visa|driving\s+licen[cs]e|driver'?s\s+licen[cs]e|licen[cs]e|id\s+card|residence\s+permit|work\s+permit|permit|green\s+card|lease|contract|warranty|insurance|membership)\b[^.;!?]{0,40}?\b(?:expires?|expiring|expired|runs?\s+out|ends?|is\s+up\s+for\s+renewal|needs\s+renewing|renews?)\b`)
	expiryZH = regexp.MustCompile(`(护照|签证|驾照|驾驶证|身份证|居住证|工作签|绿卡|租约|合同|保修|保险|会员卡)[^。！？；]{0,14}?(?:到期|过期|失效)`)
)

// correctionLeadZH opens a sentence that corrects what was said before: "说错了，…".
var correctionLeadZH = regexp.MustCompile(`^(?:(?:哎呀|啊|嗯|哦|不好意思|抱歉)[，,！!]?)*(?:说错了|打错了|写错了|记错了|不对|更正一下|更正|纠正一下|口误)[，,！!。]?`)

// When the speaker works out, one slot: "I hit the gym at 6 before work", "moved my
// workouts to lunchtime", "健身改到晚上了".
var (
	workoutEN   = regexp.MustCompile(`(?i)\b(?:hit\s+the\s+gym|go\s+to\s+the\s+gym|gym\s+sessions?|workouts?|working\s+out|work\s+out|train|training|exercise|lifting)\b`)
	timeOfDayEN = regexp.MustCompile(`(?i)\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}\s*o'clock|mornings?|lunch(?:time|times)?|evenings?|nights?|after\s+work|before\s+work|noon|midday|dawn)\b`)
	workoutZH   = regexp.MustCompile(`健身|锻炼|去健身房|撸铁|练器械|跑步机`)
	timeOfDayZH = regexp.MustCompile(`早上|早晨|上午|中午|下午|晚上|傍晚|夜里|下班后|上班前|午休|\d{1,2}点|[一二三四五六七八九十]{1,2}点`)
)

// petVetZH is where a pet is seen to: "我家猫一直在…看病", "狗狗换到…看了".
var petVetZH = regexp.MustCompile(`(` + petZH + `)[^，。,！!？?]{0,6}?(?:在|换到|转到|去|改去)([^，。,！!？?]{2,10}?)(?:看病|看了|打疫苗|就诊|看医生|复诊|看)`)

// nameMoveZH is someone named moving: "小雅去年调到福州了", "小周调到成都了".
var nameMoveZH = regexp.MustCompile(`^(\p{Han}{2,3}?)(?:为了[^，。,]{1,10}?|因为[^，。,]{1,10}?|上个?月|今年|去年|最近|已经)?(?:搬去|搬到|调到|调去|移居)(?:了)?(\p{Han}{2,4}?)(?:了|住|工作|生活|[，。！,.!]|$)`)

// notSubjectZH opens a clause with a word that is no one's name.
var notSubjectZH = regexp.MustCompile(`^(?:我|你|他|她|它|咱|这|那|公司|家里|孩子|大家|全家|今年|去年|明年|最近|已经|后来|然后|所以|因为|为了|上个|下个|这个|那个|我们|他们|她们)`)

// Chat shorthand, spelled out before the rules read a turn: "dentist appt tmrw", "mil is
// staying w/ us next wk", "明儿下午". Only forms that mean one thing are expanded; the
// days of the week only where they are told as days ("mon wed fri", "on thu").
var (
	chatTableEN = map[string]string{
		"tmrw": "tomorrow", "tmr": "tomorrow", "tmrow": "tomorrow", "2moro": "tomorrow", "tomoz": "tomorrow",
		"appt": "appointment", "appts": "appointments", "mtg": "meeting", "mtgs": "meetings", "wk": "week", "wks": "weeks",
		"wknd": "weekend", "bday": "birthday", "b-day": "birthday", "bf": "boyfriend", "gf": "girlfriend",
		"mil": "mother-in-law", "fil": "father-in-law", "sil": "sister-in-law", "bil": "brother-in-law", "hubs": "husband",
		"pls": "please", "plz": "please", "im": "I'm", "ive": "I've", "ill": "I'll", "dont": "don't", "cant": "can't",
		"wont": "won't", "didnt": "didn't", "doesnt": "doesn't", "isnt": "isn't", "u": "you", "ur": "your",
		"bc": "because", "b/c": "because", "abt": "about", "rn": "right now", "nxt": "next", "yr": "year", "yrs": "years",
		"mo": "month", "mos": "months", "hr": "hour", "hrs": "hours", "min": "minutes", "mins": "minutes",
		"kindy": "kindergarten",
	}
	// chatKinEN are shorthand kin told without "my": "mil is staying with us".
	chatKinEN   = map[string]bool{"mil": true, "fil": true, "sil": true, "bil": true, "bf": true, "gf": true, "hubs": true}
	chatTokenEN = regexp.MustCompile(`(?i)\b(?:b-day|[a-z0-9]+)\b`)
	chatSlashEN = regexp.MustCompile(`(?i)\b(w/o|w/|b/c)(\s|$)`)
	ownerWordEN = regexp.MustCompile(`(?i)\b(?:my|our|your|his|her|their|the|a)\s+$`)
	dayAbbrEN   = map[string]string{"mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday", "thu": "Thursday",
		"thur": "Thursday", "thurs": "Thursday", "fri": "Friday", "sat": "Saturday", "sun": "Sunday"}
	// daysToldEN is a run of two or more day abbreviations, or one after a word that takes a day.
	daysToldEN = regexp.MustCompile(`(?i)\b(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?:\s*(?:,|/|&|and|\s)\s*(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun))+\b|\b(?:on|every|next|this|last|till|until|by|from)\s+(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b`)
	dayAbbrOne = regexp.MustCompile(`(?i)\b(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b`)
	chatZH     = strings.NewReplacer("明儿个", "明天", "明儿", "明天", "今儿个", "今天", "今儿", "今天", "昨儿个", "昨天", "昨儿", "昨天", "后儿", "后天")
	lowerI     = regexp.MustCompile(`(^|[.!?]\s+|\s)i(\s|'m|'ve|'ll|'d)`)
)

// spelledOut is s with its chat shorthand written out.
func spelledOut(s string) string {
	if hasHan(s) {
		return chatZH.Replace(s)
	}
	s = daysToldEN.ReplaceAllStringFunc(s, func(run string) string {
		return dayAbbrOne.ReplaceAllStringFunc(run, func(d string) string { return dayAbbrEN[strings.ToLower(d)] })
	})
	s = chatSlashEN.ReplaceAllStringFunc(s, func(m string) string {
		w := strings.TrimSpace(m)
		return map[string]string{"w/o": "without", "w/": "with", "b/c": "because"}[strings.ToLower(w)] + m[len(w):]
	})
	var b strings.Builder
	last := 0
	for _, loc := range chatTokenEN.FindAllStringIndex(s, -1) {
		w := s[loc[0]:loc[1]]
		v, ok := chatTableEN[strings.ToLower(w)]
		if !ok || w != strings.ToLower(w) && len(w) <= 2 {
			continue
		}
		b.WriteString(s[last:loc[0]])
		if chatKinEN[strings.ToLower(w)] && !ownerWordEN.MatchString(s[:loc[0]]) {
			v = "my " + v // "mil is staying with us": the speaker's
		}
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return lowerI.ReplaceAllString(b.String(), "${1}I${2}")
}

// clubEN is the sports club the speaker plays for: "I play Sunday league football with the
// Rovers", "joined Hackney Marshes FC". Its name is no employer.
var (
	clubNameEN = `\p{Lu}[\p{L}']*(?:\s\p{Lu}[\p{L}']*)*\s+(?:FC|AFC|RFC|CC|United|Rovers|Athletic|Club|Wanderers|City|Harriers|Rangers)`
	clubEN     = regexp.MustCompile(`\b(?i:play|plays|playing)\s+(?:[A-Za-z-]+\s+){0,3}(?i:football|soccer|rugby|cricket|hockey|basketball|netball|volleyball|softball|baseball|water\s+polo)\s+(?i:for|with)\s+(?:the\s+)?\p{Lu}|\b(?i:joined|left|signed\s+for|moved\s+to|switched\s+to|play\s+for)\s+(?:the\s+)?` + clubNameEN + `\b`)
	clubOrgEN  = regexp.MustCompile(`^` + clubNameEN + `$`)
)

// relLessonsZH is a relation's lessons, by day or moved: "儿子每周三下午学游泳",
// "儿子的游泳课挪到周日了". Group 1 or 3 is the relation.
var relLessonsZH = regexp.MustCompile(`^(?:我(?:的|家)?)?(` + relZH + `)(?:每周[一二三四五六日天]|周[一二三四五六日天]|星期[一二三四五六日天])(?:上午|下午|晚上|早上)?(?:去)?(?:学|上|练)(\p{Han}{1,4}?)(?:课)?(?:[，。,！!]|$)|^(?:我(?:的|家)?)?(` + relZH + `)的?(\p{Han}{1,4}?)课(?:挪到|改到|换到|调到|改成|推到|提前到)`)

// petFoodChangedZH is what a pet eats now: "狗粮换成…了", "猫粮改成…".
var petFoodChangedZH = regexp.MustCompile(`(狗|猫)粮(?:现在)?(?:换成了?|改成了?|换了|改了|换到了?)`)

// hairByZH is who cuts the speaker's hair: "一直找…老师剪头", "现在找…剪".
var hairByZH = regexp.MustCompile(`找[^，。,！!？?]{1,10}?(?:剪头发?|剪|理发|做头发|烫头)`)

// slotRule is a pattern of a value of the speaker's and the slot a match fills.
type slotRule struct {
	re  *regexp.Regexp
	key func(m []string) string
}

func fixedSlot(k string) func([]string) string { return func([]string) string { return k } }

// ownSlotsEN and ownSlotsZH are the slots of values of the speaker's own, tried in order
// after the changing numbers; a sentence about a relation fills none of them.
var (
	ownSlotsEN = []slotRule{
		{clubEN, fixedSlot("user.club")},
		{recoveredEN, fixedSlot("user.status")},
		{expiryEN, func(m []string) string { return "expiry." + slugify(strings.ToLower(m[1])) }},
		{airlineEN, fixedSlot("travel.airline")},
		{subscriptionEN, func(m []string) string {
			name := strings.TrimSuffix(m[1], "+")
			if name != m[1] {
				name += "_plus" // "Disney+"
			}
			return "subscription." + slugify(name)
		}},
		{weightGoalEN, fixedSlot("user.goal.weight")},
	}
	ownSlotsZH = []slotRule{
		{subscriptionZH, func(m []string) string { return "subscription." + strings.ToLower(m[1]+m[2]) }},
		{expiryZH, func(m []string) string { return "expiry." + m[1] }},
		{hairByZH, fixedSlot("user.provider.hair")},
		{recoveredZH, fixedSlot("user.status")},
		{projectZH, fixedSlot("user.project")},
		{airlineZH, fixedSlot("travel.airline")},
		{carOwnedZH, fixedSlot("user.vehicle")},
		{weightGoalZH, fixedSlot("user.goal.weight")},
	}
)

// firstSlot is the slot of the first of rules that matches s, "" for none.
func firstSlot(rules []slotRule, s string) string {
	for _, r := range rules {
		if m := r.re.FindStringSubmatch(s); m != nil {
			return r.key(m)
		}
	}
	return ""
}

// ownSlotEN is the slot of a value of the speaker's that s tells, "" for none or when s
// is about a relation.
func ownSlotEN(s string) string {
	if kinLeadEN.MatchString(s) {
		return ""
	}
	if k := measureKey(s); k != "" {
		return k
	}
	if workoutEN.MatchString(s) && timeOfDayEN.MatchString(s) {
		return "schedule.workout"
	}
	return firstSlot(ownSlotsEN, s)
}

// ownSlotZH is the same in Chinese, where a pet's vet is told as the speaker's too ("我家
// 狗狗一直在…看病").
func (o *Offline) ownSlotZH(body string) string {
	kin := kinLeadZH.MatchString(body)
	if !kin {
		if k := measureKey(body); k != "" {
			return k
		}
		if workoutZH.MatchString(body) && timeOfDayZH.MatchString(body) {
			return "schedule.workout"
		}
	}
	if m := petVetZH.FindStringSubmatch(body); m != nil {
		return "pet." + o.lex.clauses.pet(m[1]) + ".vet"
	}
	if kin {
		return ""
	}
	return firstSlot(ownSlotsZH, body)
}
