package extractor

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// A clause rule recognises one kind of statement the speaker makes about themselves or
// their people, pets and things, and names the slot it fills, so that a later value of
// the same slot supersedes the earlier one in the resolver: a move replaces the old city,
// a new job the old employer, "can't eat X anymore" the earlier "loves X".
//
// Patterns are written against one sentence of at most maxClauseBytes (longer sentences
// are cut), with bounded repetitions only: the work per turn stays linear and small.
const maxClauseBytes = 600

// clauseRules are the compiled clause patterns. They live in the lexicon, so the gate
// passes every sentence one of them matches.
type clauseRules struct {
	intro, apposJob, jobAt, cityAfterJob         *regexp.Regexp
	moveEN, moveZH, liveZH                       *regexp.Regexp
	tzEN, tzOnEN, tzZH                           *regexp.Regexp
	relNameEN, relJobEN, relWorkEN               *regexp.Regexp
	relNameZH, relApposZH, relJobZH              *regexp.Regexp
	school                                       *regexp.Regexp
	petEN, petHaveEN, petZH, petHaveZH           *regexp.Regexp
	deviceEN, deviceZH, healthEN, healthZH       *regexp.Regexp
	workAsEN, nowJobEN, orgJobZH, quitEN, quitZH *regexp.Regexp
	asJobEN                                      *regexp.Regexp
	tasteEN, tasteZH                             *regexp.Regexp
	planEN, planZH                               *regexp.Regexp
	planHaveEN, planMovedEN                      *regexp.Regexp
	procBeforeEN, procBefore2EN, procStepsEN     *regexp.Regexp
	procToldEN, procToldZH                       *regexp.Regexp
	procZH, procStepsZH                          *regexp.Regexp
	workZH, liveDropZH, relIsZH                  *regexp.Regexp
	roleTheEN, teachEN, businessEN, vehicleEN    *regexp.Regexp
	noMoreEN, joinEN, relLiveEN, relLiveZH       *regexp.Regexp
	atNowEN                                      *regexp.Regexp
	petCountZH, petListEN, ownZH                 *regexp.Regexp
	procBefore3EN, procRuleZH, habitFoodZH       *regexp.Regexp
	procBeforeImpEN, likeZH, favEN               *regexp.Regexp
	selfStart, relAnyEN, relAnyZH                *regexp.Regexp
	commuteEN, commuteZH                         *regexp.Regexp
	notName                                      map[string]bool
	relWords                                     map[string]string
	petWords                                     map[string]string
}

const (
	// capName is a capitalised name of one to three words ("Ana", "Marcus Olsen").
	capName = `(\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+){0,2})`
	// orgName may hold capitals, digits and & inside ("Northwind", "AT&T", "3M").
	orgName = `(\p{Lu}[\p{L}\d&.'-]*(?:\s(?:of\s)?\p{Lu}[\p{L}\d&.'-]*){0,3})`
	relEN   = `mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|daughter-in-law|stepmom|stepmother|stepdad|stepfather|stepson|stepdaughter|godson|goddaughter|grandson|granddaughter|wife|husband|partner|spouse|son|daughter|kid|child|brother|sister|mom|mother|mum|dad|father|boss|manager|best friend|friend|girlfriend|boyfriend|fianc[ée]e?|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|niece|nephew|roommate|colleague|coworker|neighbou?r|mentor|kiddos?|hubby|wifey|missus|toddler|little one`
	relZH   = `房东|邻居|保姆|教练|合伙人|大宝|二宝|小宝|婆婆|公公|岳父|岳母|丈母娘|老丈人|小姑子|小叔子|大姑姐|嫂子|弟妹|姐夫|妹夫|舅舅|舅妈|姑姑|姨妈|小姨|叔叔|婶婶|侄子|侄女|外甥女|外甥|表哥|表姐|表妹|表弟|堂哥|堂姐|孙子|孙女|老婆|妻子|太太|爱人|老公|丈夫|儿子|女儿|闺女|孩子|妈妈|母亲|爸爸|父亲|老爸|老妈|哥哥|姐姐|弟弟|妹妹|男朋友|女朋友|未婚妻|未婚夫|老板|经理|领导|上司|主管|组长|上级|导师|同事|室友|好朋友|朋友|奶奶|爷爷|外婆|外公|姥姥|姥爷|对象|宝宝|小孩|爸|妈|哥|姐|弟|妹|娃`
	petEN   = `dog|cat|puppy|pup|kitten|kitty|parrot|bird|rabbit|bunny|hamster|fish|turtle|tortoise|horse|guinea pig|snake|lizard|ferret|` + dogBreedsEN + `|` + catBreedsEN
	petZH   = `猫咪|猫|狗狗|狗|小猫|小狗|鹦鹉|兔子|仓鼠|金鱼|乌龟|` + dogBreedsZH + `|` + catBreedsZH
	// Breeds name the kind of pet they are: "our beagle Luna" is a dog named Luna.
	dogBreedsEN = `golden retriever|german shepherd|border collie|labrador|labradoodle|goldendoodle|cockapoo|beagle|poodle|corgi|husky|terrier|retriever|dachshund|pug|bulldog|shepherd|spaniel|collie|chihuahua|schnauzer|greyhound|whippet|rottweiler|doberman|pomeranian|sheepdog|mutt|pitbull|pit bull|lab`
	catBreedsEN = `maine coon|tabby|siamese|ragdoll|sphynx|tomcat`
	dogBreedsZH = `拉布拉多|哈士奇|萨摩耶|雪纳瑞|柯基|金毛|泰迪|二哈|边牧|柴犬|比熊|博美|法斗`
	catBreedsZH = `布偶猫|英短|美短|橘猫|狸花猫|暹罗猫|加菲猫|布偶`
	jobZH       = `经理|总监|主管|老师|教师|学生|研究生|博士生|护士|律师|会计|作家|记者|教授|运营|销售|顾问|司机|警察|公务员|编辑|翻译|演员|歌手|画家|创始人|老板|店长|科学家|[师员医生家手长官工]`
	// fieldZH are lines of work named without a job suffix ("在一家银行做风控").
	fieldZH = `风控|开发|设计|运营|销售|市场|财务|人事|法务|前端|后端|全栈|测试|产品|算法|研发|运维|客服|数据分析|行政|采购|咨询|投资|审计|编程|策划|剪辑|文案|美术|插画|原画|动画|摄影|理赔|核保|精算|质检|物流|仓储|公关|品牌|招聘|培训|教研|售后|售前|理财|信贷|出纳|收银|导购|外贸|跟单|报关|装修|会展`
	zhName  = `(\p{Han}{2,3}|[A-Za-z][A-Za-z]+(?:\s[A-Z][a-z]+)?)`
)

func newClauseRules() *clauseRules {
	re := regexp.MustCompile
	c := &clauseRules{
		// "I'm Marcus," / "this is Ana Lopez." — a name, then a pause or the end.
		intro: re(`(?:^|[,.;]\s*|\b)(?i:i'm|i am|this is|name's)\s+` + capName + `\s*(?:[,.;!]|$|\s(?:and|from|here)\b)`),
		// ", a data engineer" right after a name.
		apposJob: re(`(?i:i'm|i am)\s+\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+){0,2},\s+(?:(?i:an?)\s+)?([a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?)(?:\s+(?:at|for|in|with|from|and|who)\b|[,.;!]|$)`),
		// "engineer at Northwind" / "work for Acme".
		// The job noun by its ending is lower-case: a capitalised "…or at" is a name
		// ("an appointment with Dr. Okafor at …").
		jobAt: re(`(?:(?i:\b(?:work(?:s|ing)?|employed|job|engineer|developer|dev|designer|manager|analyst|scientist|nurse|teacher|doctor|lawyer|consultant|accountant|researcher|intern|architect|writer|editor|lead|chef|barista|paralegal|pharmacist|vet|tech|rep|admin|SRE|PM))|\b[a-z]{3,}(?:er|ist|or|ian|ant))\s+(?i:at|for|by|with)\s+` + orgName),
		// "… at Northwind in Denver": where the job is, and so where the speaker lives.
		cityAfterJob: re(`(?i:\b(?:at|for)\s+)\p{Lu}[\p{L}\d&.'-]*(?:\s\p{Lu}[\p{L}\d&.'-]*){0,3}(?:\s+(?i:in|based in|out of)|,\s*(?i:(?:now\s+)?based\s+(?:in|out\s+of)))\s+` + capName),
		moveEN:       re(`(?i:(?:\b(?:i|we)(?:'ve| have|'re| are| am|'m)?\s+|^)(?:just\s+|recently\s+|finally\s+|now\s+|officially\s+|already\s+)?(?:(?:packed\s+up|sold\s+(?:the|our|my)\s+\w+|gave\s+notice|quit\s+(?:my|our)\s+\w+)\s+and\s+)?(?:moved|relocated|moving|relocating)(?:\s+(?:back|down|up|out|over|away|all\s+the\s+way))?\s+(?:here\s+)?(?:from\s+)?)(?:(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+){0,2})\s+)?(?i:to)\s+` + capName),
		moveZH:       re(`(?:从(\p{Han}{2,6}?))?(?:搬到|搬去|搬来|搬回|移居|定居|调到|调回|回到|外派到|派驻到|派到|调去|调往)了?(\p{Han}{2,6}?)(?:了|住|工作|生活|上班|定居|[，。,.!！；;]|$)`),
		liveZH:       re(`我(?:现在|目前|如今|已经)(?:住在|在)(\p{Han}{2,6}?)(?:了|住|工作|生活|上班|[，。,.!！；;]|$)`),
		tzEN:         re(`(?i:\btime ?zone\b[^.;!?]{0,24}?\b(?:is|to|now|as|be)\s+(?:now\s+)?)([A-Z][\w/+:-]*(?:\s[A-Z][\w/+:-]*){0,2})`),
		tzOnEN:       re(`(?i:\b(?:i'm|i am|we're|we are)\s+(?:now\s+)?(?:on|in)\s+(?:the\s+)?)([A-Z][\w/+:-]*(?:\s[A-Z][\w/+:-]*){0,2})\s+(?i:time(?:\s?zone)?)\b`),
		tzZH:         re(`时区(?:现在)?(?:是|改成|换成|变成|为|改为|调成)(?:了)?([^，。,.!！？?；;\s]{2,12})|(?:我|现在)(?:现在)?(?:用|按|是|在)(\p{Han}{2,6}时间)`),
		relNameEN:    re(`(?i:\bmy\s+(?:(?:little|older|younger|big|baby|eldest|youngest|oldest|new)\s+)?(` + relEN + `)(?:'s name is|,)?(?:\s+(?:is\s+)?(?:named|called))?)\s+` + capName),
		relJobEN:     re(`(?i:\bmy\s+(` + relEN + `)(?:,?\s+\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?,?)?\s+(?:is|works as|is working as)\s+(?:now\s+)?an?)\s+([a-z][a-z-]+(?:\s[a-z][a-z-]+){0,2}?)(?:\s+(?:at|for|in|and|who|with|from)\b|[,.;!]|$)`),
		relWorkEN:    re(`(?i:\bmy\s+(` + relEN + `)(?:,?\s+\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?,?)?\s+(?:works|is working|is employed)\s+(?:at|for|by))\s+` + orgName),
		relNameZH:    re(`我(?:的|家)?(` + relZH + `)(?:叫|名叫|的名字是|名字叫|名字是)` + zhName),
		relApposZH:   re(`我(?:的|家)?(` + relZH + `)` + `(\p{Han}{2,3}?)(?:是|在|住|今年|现在|已经|刚|上|要|下|明年|去年|也|就|马上|快|又|还|说|最近|今天|总是|老是|从)`),
		relJobZH:     re(`我(?:的|家)?(` + relZH + `)(?:叫[^，,。是]{1,6})?[，,]?(?:她|他)?(?:现在|目前)?(?:是|在[^，。,]{1,12}?(?:当|做)|当)(?:一名|一位|一个|个|名|位)?([^，。,.!！？?；;]{0,8}?(?:` + jobZH + `))(?:[，。,.!！；;了]|$)`),
		school:       re(`(?i:\b(?:starting|started|starts|start|entering|enters|going into|goes into|is in|in)\s+(?:the\s+)?((?:first|second|third|fourth|fifth|sixth|seventh|eighth|\d{1,2}(?:st|nd|rd|th))\s+grade|kindergarten|preschool|pre-k|middle school|high school|college|university))|(?:上|读|念|升|进)((?:一|二|三|四|五|六|初一|初二|初三|高一|高二|高三)年级|幼儿园|小学|初中|高中|大学)`),
		petEN:        re(`(?i:\b(?:my|our)\s+(?:new\s+|little\s+|rescue\s+|old\s+)?(` + petEN + `)(?:'s name is|,)?(?:\s+(?:is\s+)?(?:named|called))?)\s+` + capName),
		petHaveEN:    re(`(?i:\b(?:i|we)\s+(?:have|got|adopted|own|bought|rescued|brought home|just got|just adopted)\s+(?:an?|one|two|three|a new|a little)\s+(?:[a-z]+\s+)?(` + petEN + `)s?\s*,?\s+(?:named|called))\s+` + capName),
		petZH:        re(`(?:我|我们|我家)(?:的|家的|家)?(` + petZH + `)(?:叫|名叫|的名字是|名字叫|名字是)` + zhName),
		petHaveZH:    re(`养了(?:一只|一条|只|条|两只|一匹)?[^，。,]{0,4}?(` + petZH + `)[，,]?(?:它|她|他)?(?:叫|名叫|名字叫)` + zhName),
		deviceEN:     re(`(?i:(?:\b(?:i|we)(?:\s+(?:use|have|got|own|bought|switched to|work on|mostly use|just got)|(?:'m|\s+am|'re|\s+are)\s+(?:now\s+)?(?:all in on|on|using))|\bmy\s+(?:whole\s+|entire\s+|main\s+|work\s+|daily\s+)?(?:setup|laptop|machine|computer|rig|phone|daily driver)\s+is|^(?:just\s+|finally\s+)?(?:switched (?:over )?to|got|bought))\s+(?:an?\s+|my\s+|the\s+)?(?:new\s+)?)((?i:macbook(?: pro| air)?|mac|iphone|ipad|android(?: phone)?|windows(?: pc| laptop)?|linux|chromebook|pixel|galaxy|thinkpad|pc))\b`),
		deviceZH:     re(`我(?:的)?(?:一直|现在|目前|平时|主要|还是)?(?:用的是|用|手机是|电脑是|在用)(?:一台|一部|的)?(苹果手机|安卓手机|安卓|苹果电脑|华为手机|小米手机|小米\d+|(?i:mac|iphone|ipad|android|windows|linux|pixel|galaxy))`),
		tasteEN:      re(`(?i:\b(?:i|we)(?:'m| am| are)?\s+(?:(?:really|also|just|still|absolutely|totally|now|no longer|don't|do not|can't|cannot|can no longer|won't)\s+){0,2}(?:love|loves|like|enjoy|adore|hate|dislike|eat|drink|eating|drinking|(?:can't|cannot|can no longer|don't|do not|won't|shouldn't|no longer)\s+have)\s+(?:eating\s+|drinking\s+)?(?:a good\s+|good\s+|the\s+|some\s+|any\s+|a\s+|an\s+|more\s+)?)((?i:(?:[a-z0-9-]+\s+){0,2}[a-z0-9-]+))`),
		tasteZH:      re(`(?:喜欢|爱|讨厌|不能再|不再|不能|不|没法再|戒了|不敢再|不敢)(?:吃|喝)(?:一杯|一碗|一份|一点|点)?(\p{Han}{1,4}?)(?:了|$|，|。|,|\.|!|！)`),
		// habitFoodZH: what a habit eats or drinks ("每天早上都喝一杯豆浆"), in the taste slot.
		habitFoodZH: re(`(?:吃|喝)(?:一杯|一碗|一份|一点|一个|点|杯|碗)?(\p{Han}{1,4}?)(?:了|$|，|。|,|\.|!|！)`),
		// "I've got a root canal next Thursday": a dated thing the speaker has, whatever it is.
		planHaveEN: re(`(?i:\b(?:i|we)(?:'ve|\s+have)?\s+(?:got|have|booked|scheduled)\s+(?:an?|my|our)\s+)((?i:[a-z-]+\s+)?(?i:[a-z-]{3,}))(?i:\s+(?:appointment\s+)?(?:on|this|next|tomorrow|today|tonight|at|in)\b)`),
		// "the root canal got bumped to Monday": a thing rescheduled is a plan.
		planMovedEN:   re(`(?i:\b(?:my|our|the)\s+)((?i:[a-z-]+\s+)??(?i:[a-z-]{3,}))(?i:\s+(?:got|was|has been|is being|is)?\s*(?:bumped|moved|rescheduled|postponed|pushed(?:\s+back)?|delayed|brought forward|shifted)\b)`),
		planEN:        re(`(?i:\b(?:my|our|the)\s+)((?i:[a-z]+\s+)?(?i:appointment|interview|flight|exam|meeting|surgery|check-?up|visit|trip|party|wedding|deadline|test|class|lesson|reservation|booking|call|dinner|lunch|review|session|conference|workshop|webinar|training|audit|retreat|offsite|shift|concert|presentation|launch|release|demo|hearing|ceremony|recital|tournament|race|move))\b`),
		planZH:        re(`(\p{Han}{0,4}?(?:面试|面签|航班|考试|会议|预约|手术|体检|聚会|婚礼|截止日期|约会|复查|演出|答辩|发布会|出差|旅行|行程|飞机|火车|高铁))(?:改到|推迟到|提前到|改成|改在|定在|安排在|是在|在|是|不是[^，。,]{1,10}[，,]\s*(?:而)?是)`),
		procBeforeEN:  re(`(?i:\b(?:always|first)\s+)([^,.;!?]{3,80}?)(?i:\s+before\s+)([^,.;!?]{3,80})`),
		procBefore2EN: re(`(?i:\bbefore\s+)((?i:every|each|any|a|we|i|you)\s+[^,.;!?]{3,60}?)\s*,\s*(?i:(?:we\s+|i\s+|you\s+)?(?:always\s+|first\s+|must\s+|need to\s+|should\s+)+)([^.;!?]{3,100})`),
		// "…, so this is the process: do X, send Y, then Z": steps announced as such.
		procToldEN:  re(`(?i)\b(?:here's|here is|this is|that's|the)\s+(?:the\s+|my\s+|our\s+)?(?:order|process|procedure|routine|drill|steps|sequence|workflow|checklist)(?:\s+(?:for|with)\s+([^:]{2,40}))?\s*(?:is\s*)?:\s*([^:]{10,})$`),
		procToldZH:  re(`(?:流程|步骤|顺序|规矩)(?:是|如下|一般是)?[:：]\s*([^:：]{6,})$`),
		procStepsEN: re(`(?i:\bfirst\b)[^.;!?]{3,100}\b(?i:then|after that|next)\b[^.;!?]{3,100}`),
		procZH:      re(`(?:每次|每回|每当)([^，。,；;]{1,20}?)(?:前|之前|以前)[，,]?(?:都)?(?:要|得|必须)?先([^。；;]{1,40})`),
		procStepsZH: re(`先([^，。,；;]{2,20})[，,]?(?:再|然后|接着)([^。；;]{2,40})`),
		workZH:      re(`(?:^|我|[，,])(?:现在|目前|如今|已经)?在([^，。,]{2,14}?)(?:当|做|担任)(?:一名|一位|一个|个|名)?([^，。,.!！；;当做]{0,10}?(?:` + jobZH + `|` + fieldZH + `))(?:[，。,.!！；;了]|$)`),
		// A clause without its subject after one about the speaker ("我叫…，住在海边的小城"):
		// Chinese drops the repeated 我.
		liveDropZH: re(`[，,；;](?:现在|目前|一直)?(?:住在|定居在|生活在)(\p{Han}{2,6}?)(?:[，。,.!！；;]|$)`),
		// "我现在的组长是某某": a relation named with 是 (a job after 是 is relJobZH's).
		relIsZH: re(`我(?:现在|目前|新|以前|原来)?的(` + relZH + `)(?:现在|目前)?是(\p{Han}{2,3})(?:[，。,.!！；;]|$)`),
		// "I'm the head nurse at Mercy General": a role with "the" and where it is held.
		// "Being sous chef at X means I …", "As a nurse at X, I …": the participle's
		// subject is the speaker of the main clause.
		asJobEN:   re(`^(?i:(?:being|as)\s+(?:an?\s+|the\s+)?)((?i:[a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?))\s+(?i:at|for|with)\s+` + orgName + `(?i:[^.!?]*\b(?:i|i'm|i've|i am|me|my)\b)`),
		roleTheEN: re(`(?i:\b(?:i'm|i am)\s+(?:now\s+|currently\s+|still\s+|officially\s+)?the\s+(?:new\s+)?)((?i:[a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?))\s+(?i:at|for|of)\s+` + orgName),
		// "I teach piano at a music school": a profession told by its verb.
		teachEN: re(`(?i:\b(?:i|i've|i have)\s+(?:now\s+|currently\s+|still\s+)?(?:teach|taught|coach|lecture in|tutor)\s+)((?i:[a-z][a-z-]+(?:\s[a-z][a-z-]+){0,2}?))(?:\s+((?i:at|in|for))\s+` + orgName + `)?(?:[,.;!]|$|\s+(?i:and|but|since|to)\b)`),
		// "we own a bike shop in Utrecht": a business of the speaker's.
		businessEN: re(`(?i:\b(?:i|we)\s+(?:now\s+|still\s+|also\s+)?)((?i:run|own|manage|founded|co-founded))\s+((?i:an?|my own|our own|my|our)\s+(?i:[a-z][a-z'-]+(?:\s[a-z][a-z'-]+){0,3}?)(?:\s+(?:in|on|at)\s+\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+){0,2})?)(?:[,.;!]|$|\s+(?i:and|but|since|with|for|that|which)\b)`),
		// "my mom lives in Osaka" / "我爸妈住在大连": where a relation lives.
		relLiveEN: re(`(?i:\bmy\s+(` + relEN + `|parents|in-laws|kids|children)(?:,?\s+\p{Lu}[\p{Ll}'-]+,?)?\s+(?:still\s+|now\s+)?(?:lives?|is living|are living|is based|are based|moved)\s+(?:in|to))\s+` + capName),
		relLiveZH: re(`我(?:的|家)?(` + relZH + `)(\p{Han}{2,3}?)??(?:现在|目前|一直)?(?:住在|生活在|定居在)(\p{Han}{2,6}?)(?:[，。,.!！；;]|$)`),
		// "我养了一只柯基，叫豆豆": an animal counted by 只/条/匹 and named.
		petCountZH: re(`(?:养了|有|收养了|领养了)(?:一|两|三)?(?:只|条|匹)([^，。,]{1,6}?)[，,]?(?:它|她|他)?(?:叫|名叫|名字叫)` + zhName),
		// "I have two cats, Mochi and Tofu": pets named after their count.
		petListEN: re(`(?i:\b(?:i|we)\s+(?:have|own|got|adopted)\s+(?:two|three|four|2|3|4)\s+(` + petEN + `)s?\s*[,:(-]?\s*(?:named\s+|called\s+)?)` + `(\p{Lu}[\p{Ll}'-]+(?:(?:,\s*|\s+and\s+|\s*&\s*)\p{Lu}[\p{Ll}'-]+){1,3})`),
		// "我有一辆特斯拉": a possession counted by its classifier.
		ownZH: re(`我(?:家)?(?:有|买了|新买了|刚买了)(?:一|两)?(辆|台|部|套|架)([^，。,.!！；;]{1,10})`),
		// "Before every deploy we run the smoke tests": a routine without a comma.
		procBefore3EN: re(`(?i:\bbefore\s+)((?i:every|each|any)\s+[a-z-]+(?:\s+[a-z-]+)?)\s+(?i:we|i)\s+(?i:always\s+|first\s+)?([a-z][^.;!?]{3,100})`),
		// "Before any release, bump the version": a routine told as an order.
		procBeforeImpEN: re(`(?i:^\s*before\s+)((?i:every|each|any|a|an|you|we)\s+[^,.;!?]{3,60}?)\s*,\s*((?i:[a-z]+)\s[^.;!?]{3,100})`),
		// "平时最喜欢去滑雪": a liking of a thing to do, in its thing's slot.
		likeZH: re(`(?:最|很|特别|超|非常|挺|真)?(?:喜欢|爱|迷上了|爱上了)(?:去|玩|打|看|听|做|弹|练)?(\p{Han}{2,4}?)(?:了|$|，|。|,|\.|!|！)`),
		// "Sushi nights are my favourite treat": a favourite thing.
		favEN: re(`(?i)^(?:the\s+)?([a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?:is|are)\s+(?:definitely\s+|really\s+|still\s+)?(?:my|our)\s+(?:absolute\s+|all-time\s+|biggest\s+|one\s+|only\s+|secret\s+|true\s+|great\s+)?(?:favou?rite|weakness|guilty pleasure|vice|comfort food|obsession|addiction)\b`),
		// "上线之前一定要先通知运维": a rule about what comes first, without 每次.
		procRuleZH: re(`^([^，。,；;我]{1,12}?)(?:前|之前|以前)[，,]?(?:都)?(?:一定要|必须|要|得|务必)先([^。；;]{1,40})`),
		// "I just joined Initrode": a new employer.
		joinEN: re(`(?i:\b(?:(?:i|i've|i have|and)\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?(?:joined|started (?:a new job |working )?(?:at|for|with)|took a job (?:at|with)|got a job (?:at|with)|accepted (?:an |the )?(?:offer|job|position|role) (?:from|at|with)|signed (?:on )?with)|(?:i'm|i am)\s+now\s+(?:at|with))\s+)` + orgName + `(?:\s+(?:[a-z]|(?i:now|as|in|last|this|since)\b)|[,.;!]|$)`),
		// "I'm with Corvid now", said where work is the topic ("I don't work at X anymore, …").
		atNowEN: re(`(?i:\b(?:i'm|i am)\s+(?:at|with)\s+)` + orgName + `(?i:\s+now)\b`),
		// "I drive an old pickup": the speaker's vehicle.
		vehicleEN: re(`(?i:\b(?:i|we)(?:'m|\s+am|'re|\s+are|'ve been|\s+have been)?\s+(?:now\s+|still\s+|currently\s+)?(?:drive|ride|driving|riding)\s+(?:an?|the|my|our)\s+(?:new\s+|brand[- ]new\s+)?)([^,.;!?]{2,40}?)(?:[,.;!?]|$|\s+(?i:and|but|to|which|that|every|most)\b)`),
		// "I take the early bus to work", "I just bike in now": how the speaker gets to
		// work, one slot, so that a new way replaces the old.
		commuteEN: re(`(?i:\b(?:i|we)\s+(?:usually\s+|just\s+|always\s+|now\s+|mostly\s+|normally\s+|still\s+|typically\s+|actually\s+|generally\s+)*` +
			`(?:(?:take|catch|ride|get|hop on)\s+the\s+(?:[\d:.]+\s*(?:am|pm)?\s+)?(?:[a-z]+\s+){0,2}(?:train|bus|subway|metro|tube|tram|ferry|shuttle|light rail)\b[^,.;!?]{0,30}?\b(?:to|into)\s+(?:work|the office|the city|town|campus)` +
			`|(?:take|catch)\s+the\s+\d{1,2}[:.]\d{2}\s*(?:am|pm)?(?:\s+(?:[a-z]+\s+)?(?:train|bus|ferry|tram|shuttle)\b|\s*(?:[,.;!]|$)|\s+(?:most|every|each|on|these|now|daily)\b)` +
			`|work\s+(?:from\s+home|remotely)\s+(?:full[- ]time|every\s+day|all\s+week|now)` +
			`|(?:bike|cycle|walk|drive|carpool|scooter|skate|run)\s+(?:in(?:\s*$|\s*[,.;!]|\s+(?:now|these|every|most|daily|each|on)\b)|(?:to|into)\s+(?:work|the office|the city|town|campus))` +
			`|commute\s+(?:by|on|via)\s+[a-z]+)` +
			`|\bmy\s+(?:daily\s+)?commute\s+is\b|\bno\s+(?:more\s+)?commute\b|\bworking\s+from\s+home\s+full[- ]time\b)`),
		// "每天坐地铁上班", "现在骑车上班": how the speaker gets to work.
		commuteZH: re(`(?:坐|乘|搭|骑|开车|走路|步行|打车|蹬)[^，。；,;！!？?]{0,10}?(?:上班|上学|通勤|去公司|去单位)|通勤|(?:坐|改坐|赶)(?:\d{1,2}[:：]\d{2}|\d{1,2}点(?:\d{1,2}分?|半)?)的(?:地铁|公交|班车|车|火车|轮渡)?`),
		// "no more sweets for me": the end of a taste, told without a verb.
		noMoreEN:  re(`(?i:\bno (?:more|longer any)\s+)([a-z][a-z-]+(?:\s[a-z][a-z-]+)?)\b`),
		healthEN:  re(`(?i:\b(?:i|i've|i have|i was|i got|i'm|i am|we)\s+(?:just\s+|recently\s+|been\s+)*(?:been\s+)?diagnosed\s+with\s+)(?:an?\s+)?([^,.;!?]{3,40}?)(?:\s+(?:last|this|next|in|on|at|when|after|before|and|but|which|so|about|a\s+few|\d+\s+(?:days?|weeks?|months?|years?))\b|[,.;!?]|$)`),
		healthZH:  re(`我(?:最近|上周|去年|前段时间)?(?:被)?(?:诊断出|确诊了?|查出)(?:了|有)?(\p{Han}{2,8}?)(?:了|，|。|,|$)|我(?:一直|从小|本身)?(?:有|患有|得了)(糖尿病|高血压|哮喘|癫痫|抑郁症|焦虑症|心脏病|痛风|偏头痛|甲亢|甲减|关节炎|乳糖不耐受|腰椎间盘突出|颈椎病|过敏性鼻炎|湿疹)`),
		workAsEN:  re(`(?i:\b(?:i|i've been|i have been|i'm|i am)\s+(?:now\s+|currently\s+|still\s+)?(?:work|worked|working|employed)\s+as\s+an?\s+)([a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?)(?:\s+(?:at|for|in|with|and|since|from)\b|[,.;!]|$)`),
		nowJobEN:  re(`(?i:\b(?:i'm|i am)\s+(?:now|currently|still|actually)\s+an?\s+)([a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?)(?:\s+(?:at|for|in|with|and|since|from|who)\b|[,.;!]|$)`),
		orgJobZH:  re(`我(?:现在|目前|如今)?是(?:一名|一位|个)?([^，。,的是]{2,12})的([^，。,.!！；;的]{0,8}?(?:` + jobZH + `))`),
		quitEN:    re(`(?i:\b(?:i|i've|i have|i just|we)\s+(?:just\s+|finally\s+|recently\s+)?(?:left|quit|resigned from|was laid off from|got laid off from|no longer work (?:at|for)|don't work (?:at|for)|do not work (?:at|for)|stopped working (?:at|for))\s+(?:my job at\s+|my job with\s+)?)` + orgName),
		quitZH:    re(`我(?:已经|上个月|上周|刚刚|刚)?(?:从([^，。,\s]{2,12}?)(?:离职|辞职|辞了职|裸辞)|(?:不在|没在)([^，。,]{2,12}?)(?:工作|上班)了|([^，。,\s]{2,8}?)那边(?:的工作)?(?:已经|也)?(?:辞了|辞掉了|离职了|不干了))`),
		relAnyEN:  re(`(?i)\bmy\s+(` + relEN + `)\b`),
		relAnyZH:  re(`我(?:的|家)?(` + relZH + `)`),
		selfStart: re(`(?i)(?:^|[,:;!—–]\s*|\s-\s)(?:(?:so|well|actually|also|and|oh|btw|hi|hello|hey|ok|okay|yes|yeah|now|big news|news|update|fyi|quick intro|about me|anyway)[,!:]?\s+)*(?:[\w']+\s+){0,3}?(?:i|i'm|i've|i'll|my|this is|we|we're|our)\b`),
	}
	c.notName = map[string]bool{}
	for _, w := range strings.Fields("So Really Happy Sorry Glad Fine Good Back Here Ready Done Sure Not Still Just Also Excited Busy Tired Okay Ok Well Home Free Great Thrilled Stoked Proud Grateful Thankful Blessed Lucky Totally Definitely Always Never Currently Now Actually Looking Going Trying Working Thinking Hoping Planning Off On In At The A An Very Super Pretty Kinda Bit Sick Better Fine Alive Curious Sad Nervous Worried Afraid Scared Confused Interested Keen New Doing Feeling Getting Taking Making Learning Reading Writing Calling Leaving Moving Staying Visiting Traveling Travelling English Chinese") {
		c.notName[w] = true
	}
	c.relWords = map[string]string{"mom": "mother", "mum": "mother", "dad": "father", "kid": "child", "boss": "manager",
		"best friend": "best_friend", "grandma": "grandmother", "grandpa": "grandfather", "fiancé": "fiance", "fiancée": "fiance",
		"fiancee": "fiance", "neighbour": "neighbor", "coworker": "colleague", "kiddo": "child", "kiddos": "child",
		"hubby": "husband", "wifey": "wife", "missus": "wife", "toddler": "child", "little one": "child",
		"老婆": "wife", "妻子": "wife", "太太": "wife", "爱人": "spouse", "老公": "husband", "丈夫": "husband", "儿子": "son",
		"女儿": "daughter", "闺女": "daughter", "孩子": "child", "妈妈": "mother", "母亲": "mother", "爸爸": "father", "父亲": "father",
		"哥哥": "brother", "姐姐": "sister", "弟弟": "brother", "妹妹": "sister", "男朋友": "boyfriend", "女朋友": "girlfriend",
		"未婚妻": "fiance", "未婚夫": "fiance", "老板": "manager", "经理": "manager", "领导": "manager", "上司": "manager", "主管": "manager", "组长": "manager",
		"上级": "manager", "导师": "mentor", "邻居": "neighbor", "合伙人": "partner_business", "教练": "coach",
		"同事": "colleague", "室友": "roommate", "好朋友": "best_friend", "朋友": "friend", "奶奶": "grandmother", "爷爷": "grandfather",
		"外婆": "grandmother", "外公": "grandfather", "姥姥": "grandmother", "姥爷": "grandfather", "对象": "partner",
		"爸": "father", "妈": "mother", "老爸": "father", "老妈": "mother", "哥": "brother", "姐": "sister", "弟": "brother", "妹": "sister", "娃": "child", "宝宝": "child", "小孩": "child"}
	c.petWords = map[string]string{"puppy": "dog", "pup": "dog", "kitten": "cat", "kitty": "cat", "bunny": "rabbit",
		"tomcat": "cat", "布偶猫": "cat", "布偶": "cat", "英短": "cat", "美短": "cat", "橘猫": "cat", "狸花猫": "cat", "暹罗猫": "cat", "加菲猫": "cat",
		"tortoise": "turtle", "guinea pig": "guinea_pig", "猫咪": "cat", "猫": "cat", "小猫": "cat", "狗狗": "dog", "狗": "dog",
		"小狗": "dog", "鹦鹉": "parrot", "兔子": "rabbit", "仓鼠": "hamster", "金鱼": "fish", "乌龟": "turtle"}
	for _, b := range strings.Split(dogBreedsEN+"|"+dogBreedsZH, "|") {
		c.petWords[b] = "dog"
	}
	for _, b := range strings.Split(catBreedsEN, "|") {
		c.petWords[b] = "cat"
	}
	return c
}

// matchAny reports whether a clause rule matches s: the gate's test.
func (c *clauseRules) matchAny(s string) bool {
	s = clip(s)
	for _, r := range []*regexp.Regexp{c.intro, c.jobAt, c.moveEN, c.moveZH, c.liveZH, c.tzEN, c.tzOnEN, c.tzZH,
		c.relNameEN, c.relJobEN, c.relWorkEN, c.relNameZH, c.relApposZH, c.relJobZH, c.petEN, c.petHaveEN, c.petZH,
		c.petHaveZH, c.deviceEN, c.deviceZH, c.procBeforeEN, c.procBefore2EN, c.procZH, c.workZH, c.healthEN, c.healthZH, c.workAsEN, c.nowJobEN, c.asJobEN, c.orgJobZH, c.quitEN, c.quitZH,
		c.relIsZH, c.roleTheEN, c.teachEN, c.businessEN, c.vehicleEN, c.procStepsZH, c.procStepsEN,
		c.relLiveEN, c.relLiveZH, c.petCountZH, c.petListEN, c.ownZH, c.procBefore3EN, c.procRuleZH, c.joinEN, c.procBeforeImpEN,
		c.commuteEN, c.commuteZH} {
		if r.MatchString(s) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) <= maxClauseBytes {
		return s
	}
	cut := maxClauseBytes
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// maxSentenceBytes bounds what one sentence brings to extraction: past it, a sentence is a
// paste, not a statement, and only its beginning is read.
const maxSentenceBytes = 2000

func clipSentence(s string) string {
	if len(s) <= maxSentenceBytes {
		return s
	}
	cut := maxSentenceBytes
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func (c *clauseRules) rel(w string) string {
	w = strings.ToLower(w)
	if v, ok := c.relWords[w]; ok {
		return v
	}
	return w
}

func (c *clauseRules) pet(w string) string {
	w = strings.ToLower(w)
	if v, ok := c.petWords[w]; ok {
		return v
	}
	return w
}

// fact is one clause's memory before it becomes a draft.
type fact struct {
	key, content string
	cat          memory.Category
	typ          memory.Type
	imp          float64
	replace      bool // the sentence's other rules are less precise: drop them
	asTold       bool // steps that recur: their "next week" is no date to resolve
}

// clauseFacts are the facts of one sentence, one per slot.
func (o *Offline) clauseFacts(s string, ref time.Time) []fact {
	c := o.lex.clauses
	s = clip(s)
	zh := hasHan(s)
	var out []fact
	seen := map[string]bool{}
	add := func(f fact) {
		if f.key != "" && seen[f.key] {
			return
		}
		seen[f.key] = true
		if f.typ == "" {
			f.typ = memory.Semantic
		}
		if f.imp == 0 {
			f.imp = impIdentity
		}
		out = append(out, f)
	}
	profile := func(key, content string) { add(fact{key: key, content: content, cat: memory.CatProfile}) }
	// A user's sentence that opens with its verb ("Switched to …", "Moved to …") dropped
	// its subject, the speaker.
	selfish := c.selfStart.MatchString(s) || droppedSubjectEN.MatchString(s)
	for _, f := range o.shortSentenceFacts(s) {
		add(f)
	}

	if !zh {
		if selfish {
			if m := c.intro.FindStringSubmatch(s); m != nil && !c.notName[strings.Fields(m[1])[0]] {
				profile("user.name", "The user's name is "+m[1])
			}
			if m := c.apposJob.FindStringSubmatch(s); m != nil && validJob(m[1]) && jobNoun(m[1]) {
				profile("user.role", "The user is "+article(m[1])+m[1])
			}
			for _, r := range []*regexp.Regexp{c.workAsEN, c.nowJobEN} {
				if m := r.FindStringSubmatch(s); m != nil && validJob(m[1]) && (r == c.workAsEN || jobNoun(m[1])) {
					profile("user.role", "The user is "+article(m[1])+m[1])
				}
			}
			if m, who := c.clauseOf(promotedEN, s); m != nil && who == "" && validJob(m[1]) {
				// "Got promoted to team lead": the new role, in the role's slot.
				profile("user.role", "The user is "+article(m[1])+m[1])
			}
			if m := c.roleTheEN.FindStringSubmatch(s); m != nil && validJob(m[1]) && jobNoun(m[1]) && !c.notName[m[2]] {
				profile("user.role", "The user is the "+m[1]+" at "+m[2])
				profile("user.employer", "The user works at "+m[2])
			}
			if m := c.teachEN.FindStringSubmatch(s); m != nil && validJob(m[1]) {
				switch {
				case m[3] != "" && strings.EqualFold(m[2], "in") && !orgWordEN.MatchString(m[3]) && !c.notName[m[3]]:
					// "I teach chemistry in Tucson": a place, not a school.
					profile("user.role", "The user teaches "+m[1]+" in "+m[3])
					profile("user.location", "The user works in "+m[3])
				case m[3] != "" && !c.notName[m[3]]:
					profile("user.role", "The user teaches "+m[1]+" at "+m[3])
					profile("user.employer", "The user works at "+m[3])
				default:
					profile("user.role", "The user teaches "+m[1])
				}
			}
			if m := c.businessEN.FindStringSubmatch(s); m != nil && validJob(strings.TrimPrefix(strings.Fields(m[2] + " x")[1], "own")) {
				add(fact{key: "user.business", content: "The user " + thirdVerb(strings.ToLower(m[1])) + " " + o.pronounsEN(m[2], true), cat: memory.CatProfile})
			}
			if m := c.vehicleEN.FindStringSubmatch(s); m != nil {
				add(fact{key: "user.vehicle", content: "The user drives " + article(m[1]) + trimEnd(m[1]), cat: memory.CatFact, imp: impPreference})
			}
		}
		if m := usesEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] && !usesNotJob[strings.ToLower(m[2])] {
			// "We use Fastmail for email": the service the speaker uses for a job, in
			// the slot of the job, so that a switch to another replaces it.
			add(fact{key: "tool." + slugify(singular(strings.ToLower(m[2]))), content: "The user uses " + m[1] + " for " + m[2],
				cat: memory.CatFact, imp: impPreference})
		}
		if m := runAtEN.FindStringSubmatch(s); m != nil && !c.notName[m[2]] {
			// "I run the soil lab at Prairie Ridge": what the speaker runs, and where.
			profile("user.role", "The user "+thirdVerb(strings.ToLower(m[1]))+" "+m[2]+" at "+m[3])
			profile("user.employer", "The user works at "+m[3])
		}
		if m := c.asJobEN.FindStringSubmatch(s); m != nil && validJob(m[1]) && jobNoun(m[1]) && !c.notName[m[2]] {
			profile("user.role", "The user is "+article(m[1])+m[1]+" at "+m[2])
			profile("user.employer", "The user works at "+m[2])
		}
		if m := ownCarEN.FindStringSubmatch(s); m != nil && carTalk.MatchString(s) && !c.notName[strings.Fields(m[1])[0]] {
			// "My old Fiat Panda keeps stalling at lights": a named car the speaker has, told
			// by what cars do. The slot is the same as "I drive …", so a new car replaces it.
			add(fact{key: "user.vehicle", content: "The user drives " + article(m[1]) + m[1], cat: memory.CatFact, imp: impPreference})
		}
		if selfish {
			// Where the speaker works now comes before where they no longer do: the same
			// slot, and the new value is the one to keep.
			if m, who := c.clauseOf(c.joinEN, s); m != nil && who == "" && !c.notName[m[1]] && !clubOrgEN.MatchString(m[1]) {
				add(fact{key: "user.employer", content: "The user works at " + m[1], cat: memory.CatProfile, replace: true})
			}
			if m, who := c.clauseOf(c.atNowEN, s); m != nil && who == "" && !c.notName[m[1]] && workTalk.MatchString(s) {
				add(fact{key: "user.employer", content: "The user works at " + m[1], cat: memory.CatProfile, replace: true})
			}
			if m, who := c.clauseOf(c.jobAt, s); m != nil && !c.notName[m[1]] && !deniedClause.MatchString(m[len(m)-1]) && !notWorkAt.MatchString(m[0]) {
				if who == "" {
					profile("user.employer", "The user works at "+m[1])
				} else if who != "-" {
					add(fact{key: "relation." + slugify(c.rel(who)) + ".employer", content: "The user's " + strings.ToLower(who) + " works at " + m[1], cat: memory.CatRelationship})
				}
			}
			if m, who := c.clauseOf(c.quitEN, s); m != nil && who == "" && !c.notName[m[1]] {
				add(fact{key: "user.employer", content: "The user no longer works at " + m[1], cat: memory.CatProfile, replace: true})
			}
			if m, who := c.clauseOf(c.cityAfterJob, s); m != nil && who == "" {
				profile("user.location", "The user lives in "+m[1])
			}
			if m := pregnantEN.FindStringSubmatch(s); m != nil {
				add(fact{key: "user.health.pregnancy", content: "The user is " + strings.ToLower(m[1]) + "pregnant", cat: memory.CatFact})
			}
			if m := c.healthEN.FindStringSubmatch(s); m != nil {
				add(fact{key: "user.health." + slugify(firstWords(m[1], 3)), content: "The user was diagnosed with " + trimEnd(m[1]), cat: memory.CatFact})
			}
			if m := maritalEN.FindStringSubmatch(s); m != nil {
				// "I'm married", "we got divorced last year": one status at a time.
				add(fact{key: "user.marital_status", content: "The user is " + strings.ToLower(m[1]+m[2]), cat: memory.CatProfile, replace: true})
			}
			if m := marriedToEN.FindStringSubmatch(s); m != nil && !c.notName[m[2]] {
				// "married to Lena": whom, in the spouse's name slot.
				who := map[string]string{"married": "spouse", "engaged": "fiance"}[strings.ToLower(m[1])]
				add(fact{key: "relation." + who + ".name", content: "The user is " + strings.ToLower(m[1]) + " to " + m[2], cat: memory.CatRelationship})
			}
			if m := conditionEN.FindStringSubmatch(s); m != nil && c.healthEN.FindStringSubmatch(s) == nil {
				// "I have celiac", "I'm asthmatic": a standing condition, in its own slot.
				cond := strings.ToLower(m[1] + m[2])
				verb := "The user has "
				if m[2] != "" {
					verb = "The user is "
				}
				add(fact{key: "user.health." + slugify(conditionSlug(cond)), content: verb + cond, cat: memory.CatFact})
			}
			if m := c.tzOnEN.FindStringSubmatch(s); m != nil {
				profile("user.timezone", "The user's time zone is now "+m[1]+" time")
			}
			if m := c.deviceEN.FindStringSubmatch(s); m != nil {
				kind := deviceKind(m[1])
				add(fact{key: "user.device." + kind, content: "The user uses " + article(m[1]) + m[1], cat: memory.CatFact, imp: impPreference})
			} else if m := setupEN.FindStringSubmatch(s); m != nil && !c.notName[strings.Fields(m[2])[0]] {
				// "My work laptop is a Framework 13": a device of any make, by what it is to them.
				kind := deviceKind(m[2])
				switch strings.ToLower(m[1]) {
				case "phone":
					kind = "phone"
				case "tablet":
					kind = "tablet"
				}
				add(fact{key: "user.device." + kind, content: "The user uses " + article(m[2]) + m[2], cat: memory.CatFact, imp: impPreference})
			}
			if m, who := c.clauseOf(newJobEN, s); m != nil && who == "" && !c.notName[m[1]] {
				add(fact{key: "user.employer", content: "The user works at " + m[1], cat: memory.CatProfile, replace: true})
			}
			if m := reportToEN.FindStringSubmatch(s); m != nil && !c.notName[strings.Fields(m[1])[0]] {
				add(fact{key: "relation.manager.name", content: "The user reports to " + m[1] + ", their manager", cat: memory.CatRelationship})
			}
			if m := onPlanEN.FindStringSubmatch(s); m != nil {
				kind, key := strings.ToLower(m[2]), "user.plan"
				if kind != "plan" {
					key += "." + kind
				}
				add(fact{key: key, content: "The user is on the " + m[1] + " " + kind, cat: memory.CatFact, imp: impPreference})
			}
			if m := tripEN.FindStringSubmatch(s); m != nil && !c.notName[strings.Fields(m[1])[0]] {
				if occ := tripOccasion.FindStringSubmatch(s); occ != nil {
					add(fact{key: "plan.trip." + slugify(strings.ToLower(occ[1])), content: o.finish(upperFirst(trimEnd(o.pronounsEN(s, false))), ref), cat: memory.CatFact, imp: impPreference})
				}
			}
		}
		if m, who := c.clauseOf(gotDeviceEN, s); m != nil && who == "" {
			add(fact{key: "user.device." + deviceKind(m[1]), content: "The user now has " + article(m[1]) + m[1], cat: memory.CatFact, imp: impPreference})
		}
		if m := ownDeviceEN.FindStringSubmatch(s); m != nil {
			add(fact{key: "user.device." + deviceKind(m[1]), content: "The user has " + article(m[1]) + m[1], cat: memory.CatFact, imp: impPreference})
		}
		if m := joinedOrgEN.FindStringSubmatch(s); m != nil && workCueEN.MatchString(s) && !c.notName[strings.Fields(m[1])[0]] && !isPlace(m[1]) {
			add(fact{key: "user.employer", content: "The user now works at " + m[1], cat: memory.CatProfile, replace: true})
		}
		if m := c.moveEN.FindStringSubmatch(s); m != nil && !c.notName[m[2]] && o.moveAhead(s, strings.Index(s, m[0]), ref) {
			// "We're moving to Denver in March": the move is a plan; where the speaker
			// lives stays as it is until they tell it happened.
			told := s
			if droppedMoveEN.MatchString(told) {
				told = "I'm " + lowerFirst(told) // "Moving to Denver in March": the speaker is
			}
			add(fact{key: "plan.move", content: o.finish(upperFirst(trimEnd(o.pronounsEN(told, false))), ref), cat: memory.CatEvent, imp: impState})
		} else if m != nil && !c.notName[m[2]] {
			content := "The user moved to " + m[2] + " and lives there now"
			if m[1] != "" {
				content = "The user moved from " + m[1] + " to " + m[2] + " and lives there now"
			}
			add(fact{key: "user.location", content: content, cat: memory.CatProfile, replace: true})
			// A move changes the clock the speaker lives by: the time zone stated
			// before it no longer holds. An explicit new zone in the same sentence wins.
			if !c.tzEN.MatchString(s) && !c.tzOnEN.MatchString(s) && zoneOf(s) == "" {
				profile("user.timezone", "The user's time zone is now the local time of "+m[2]+", where they moved")
			}
		}
		if m := hereInEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] && !travelTalk.MatchString(s) && c.moveEN.FindStringSubmatch(s) == nil {
			// "the weather here in Tucson is brutal": where the speaker is, and not on a trip.
			profile("user.location", "The user lives in "+m[1])
		}
		if sinceMoveEN.MatchString(s) && c.moveEN.FindStringSubmatch(s) == nil && !travelTalk.MatchString(s) {
			if m := localPlaceEN.FindStringSubmatch(s); m != nil {
				if place := m[1] + m[2]; !c.notName[strings.Fields(place)[0]] {
					add(fact{key: "user.location", content: "The user lives in " + place + " since moving there", cat: memory.CatProfile, replace: true})
				}
			}
		}
		if m := livedSinceEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] && !travelTalk.MatchString(s) && c.moveEN.FindStringSubmatch(s) == nil {
			// "we've been in Savannah since June": where the speaker has lived since then.
			add(fact{key: "user.location", content: "The user lives in " + m[1], cat: memory.CatProfile, replace: true})
		}
		if m := localsEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] && c.moveEN.FindStringSubmatch(s) == nil {
			// "we're officially Asheville people now": the speaker lives there.
			add(fact{key: "user.location", content: "The user lives in " + m[1] + " now", cat: memory.CatProfile, replace: true})
			if !c.tzEN.MatchString(s) && !c.tzOnEN.MatchString(s) && zoneOf(s) == "" {
				profile("user.timezone", "The user's time zone is now the local time of "+m[1]+", where they moved")
			}
		}
		for _, m := range handlesEN.FindAllStringSubmatch(s, 2) {
			// "Dana handles our vendor contracts", "vendor contracts are with Ravi now":
			// who to go to for a thing, one holder at a time.
			who, what := m[1]+m[4], strings.ToLower(m[2]+m[3])
			if c.notName[who] || slugify(what) == "" {
				continue
			}
			add(fact{key: "contact." + slugify(lastWords(what, 3)), content: who + " handles the user's " + what, cat: memory.CatRelationship})
		}
		if m := c.tzEN.FindStringSubmatch(s); m != nil && (selfish || strings.Contains(lowerText(s), "my")) {
			profile("user.timezone", "The user's time zone is now "+m[1])
		}
		if z := zoneOf(s); z != "" {
			profile("user.timezone", "The user's time zone is "+z)
		}
		for _, m := range c.relNameEN.FindAllStringSubmatch(s, 4) {
			who := c.rel(m[1])
			if c.notName[strings.Fields(m[2])[0]] {
				continue
			}
			name := strings.TrimSuffix(strings.TrimSuffix(m[2], "'s"), "'")
			add(fact{key: "relation." + slugify(who) + ".name", content: "The user's " + strings.ToLower(m[1]) + " is named " + name, cat: memory.CatRelationship})
		}
		if m := relTurnsEN.FindStringSubmatch(s); m != nil {
			// "My niece Ada turns nine on Friday": the relation's birthday, dated.
			add(fact{key: "relation." + slugify(c.rel(m[1])) + ".birthday", content: o.finish(upperFirst(trimEnd(o.pronounsEN(s, false))), ref), cat: memory.CatRelationship})
		}
		for _, m := range c.relJobEN.FindAllStringSubmatch(s, 4) {
			if !validJob(m[2]) {
				continue
			}
			who := c.rel(m[1])
			add(fact{key: "relation." + slugify(who) + ".job", content: "The user's " + strings.ToLower(m[1]) + " is " + article(m[2]) + m[2], cat: memory.CatRelationship})
		}
		for _, m := range c.relWorkEN.FindAllStringSubmatch(s, 4) {
			who := c.rel(m[1])
			add(fact{key: "relation." + slugify(who) + ".employer", content: "The user's " + strings.ToLower(m[1]) + " works at " + m[2], cat: memory.CatRelationship})
		}
		for _, m := range c.petEN.FindAllStringSubmatch(s, 4) {
			if c.notName[strings.Fields(m[2])[0]] {
				continue
			}
			add(fact{key: "pet." + slugify(c.pet(m[1])) + ".name", content: "The user has a " + c.pet(m[1]) + " named " + m[2], cat: memory.CatRelationship})
		}
		for _, m := range c.relLiveEN.FindAllStringSubmatch(s, 4) {
			if schoolWordEN.MatchString(m[2]) {
				continue // "moved to Elm Academy": a school, not a home
			}
			who := strings.ToLower(m[1])
			named := who
			if n := c.relNameEN.FindStringSubmatch(s); n != nil && strings.EqualFold(n[1], m[1]) && !c.notName[strings.Fields(n[2])[0]] {
				named += " " + n[2] // "my cousin Ravi lives in Leeds": later told of by the name
			}
			add(fact{key: "relation." + slugify(c.rel(who)) + ".location", content: "The user's " + named + " lives in " + m[2], cat: memory.CatRelationship})
		}
		if m := c.petListEN.FindStringSubmatch(s); m != nil {
			kind := c.pet(m[1])
			add(fact{key: "pet." + slugify(kind) + ".names", content: "The user has " + kind + "s named " + m[2], cat: memory.CatRelationship})
		}
		for _, m := range c.petHaveEN.FindAllStringSubmatch(s, 4) {
			add(fact{key: "pet." + slugify(c.pet(m[1])) + ".name", content: "The user has a " + c.pet(m[1]) + " named " + m[2], cat: memory.CatRelationship})
		}
	} else {
		if m := surnameThenNameZH.FindStringSubmatch(s); m != nil && strings.HasPrefix(m[2], m[1]) {
			// "我姓严，叫严可欣": the surname, then the full name that begins with it.
			profile("user.name", "用户的名字是"+m[2])
		}
		if m := selfNameZH.FindStringSubmatch(s); m != nil && zhSurname(m[1]) && !selfKindZH.MatchString(m[1]) {
			// "我是顾清，在…": a name told by 是, known by its surname.
			profile("user.name", "用户的名字是"+m[1])
		}
		if m := hereZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) && !travelTalk.MatchString(s) {
			// "我们这边哈尔滨今天零下二十度": where the speaker is.
			profile("user.location", "用户住在"+m[1])
		}
		if m := handlesZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) {
			// "报销现在归小吴管": who to go to for a thing, one holder at a time.
			add(fact{key: "contact." + m[1], content: "用户的" + m[1] + "现在由" + m[2] + "负责", cat: memory.CatRelationship})
		}
		if m := c.moveZH.FindStringSubmatch(s); m != nil && strings.Contains(s, "我") && !badPlaceZH(m[2]) && speakerMovesZH(c, s, strings.Index(s, m[0])) &&
			o.moveAhead(s, strings.Index(s, m[0]), ref) {
			// "我们下个月搬去杭州": a plan, not yet where the speaker lives.
			add(fact{key: "plan.move", content: o.finish(o.thirdPersonZH(trimEnd(s), memory.CatEvent, "plan"), ref), cat: memory.CatEvent, imp: impState})
		} else if m != nil && strings.Contains(s, "我") && !badPlaceZH(m[2]) && speakerMovesZH(c, s, strings.Index(s, m[0])) {
			content := "用户搬到了" + m[2] + "，现在住在" + m[2]
			if m[1] != "" {
				content = "用户从" + m[1] + "搬到了" + m[2] + "，现在住在" + m[2]
			}
			add(fact{key: "user.location", content: content, cat: memory.CatProfile, replace: true})
			if strings.Contains(m[0], "调") || strings.Contains(m[0], "派") {
				// A transfer moves the place of work too.
				add(fact{key: "user.work_location", content: "用户调到" + m[2] + "工作", cat: memory.CatProfile, replace: true})
			}
			if !c.tzZH.MatchString(s) && zoneOf(s) == "" {
				profile("user.timezone", "用户搬到了"+m[2]+"，时区现在以"+m[2]+"当地时间为准")
			}
		} else if m := c.liveZH.FindStringSubmatch(s); m != nil && isPlace(m[1]) {
			add(fact{key: "user.location", content: "用户现在住在" + m[1], cat: memory.CatProfile, replace: true})
		}
		if m := c.workZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			where := m[1]
			if isPlace(where) {
				profile("user.location", "用户在"+where+"工作")
			} else {
				if i := strings.Index(where, "的"); i > 0 {
					if city := where[:i]; isPlace(city) {
						profile("user.location", "用户在"+city+"工作和生活")
					}
					where = where[i+len("的"):]
				}
				if n := coNameZH.FindStringSubmatch(s); n != nil {
					// "…，公司叫恒远": the company's name, told after its kind.
					where = n[1]
				}
				profile("user.employer", "用户在"+where+"工作")
			}
			profile("user.role", roleZH(m[2]))
		}
		if m := workCoZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			// "在一家做无人机的公司当测试，公司叫云翼": the company by its kind, then
			// by its name when the sentence gives one.
			where := m[1]
			if n := coNameZH.FindStringSubmatch(s); n != nil {
				where = n[1]
			}
			add(fact{key: "user.employer", content: "用户现在在" + where + "工作", cat: memory.CatProfile, replace: true})
			profile("user.role", roleZH(m[2]))
			if c := workCityZH.FindStringSubmatch(s); c != nil && isPlace(c[1]) {
				// "在厦门一家做外贸的公司当会计": the city of the work is where they live.
				profile("user.location", "用户在"+c[1]+"工作和生活")
			}
		}
		if m := teachZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) && !isPlace(m[1]) {
			// "我在城南中学教化学": a teacher, where they teach.
			profile("user.employer", "用户在"+m[1]+"工作")
			profile("user.role", "用户在"+m[1]+"教"+m[2])
		}
		if m := doWorkZH.FindStringSubmatch(s); m != nil && !strings.ContainsAny(m[1], "饭菜事") {
			profile("user.role", "用户是做"+m[1]+"的")
		}
		if m := switchedToZH.FindStringSubmatch(s); m != nil && joinZH.FindStringSubmatch(s) == nil && !isPlace(m[1]) && !badPlaceZH(m[1]) {
			add(fact{key: "user.employer", content: "用户现在在" + m[1] + "工作", cat: memory.CatProfile, replace: true})
		}
		if m := joinZH.FindStringSubmatch(s); m != nil && !isPlace(m[1]) {
			add(fact{key: "user.employer", content: "用户现在在" + m[1] + "工作", cat: memory.CatProfile, replace: true})
			profile("user.role", roleZH(m[2]))
		}
		if m := homeZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) && !badNameZH(m[1]) {
			profile("user.location", "用户家在"+m[1])
		}
		for _, m := range petApposZH.FindAllStringSubmatch(s, 4) {
			if badNameZH(m[2]) {
				continue
			}
			add(fact{key: "pet." + c.pet(m[1]) + ".name", content: "用户的" + m[1] + "叫" + m[2], cat: memory.CatRelationship})
		}
		if m := c.quitZH.FindStringSubmatch(s); m != nil {
			add(fact{key: "user.employer", content: "用户已经不在" + m[1] + m[2] + m[3] + "工作了", cat: memory.CatProfile, replace: true})
		}
		if m := c.orgJobZH.FindStringSubmatch(s); m != nil {
			if isPlace(m[1]) {
				profile("user.location", "用户在"+m[1]+"工作和生活")
			} else {
				profile("user.employer", "用户在"+m[1]+"工作")
			}
			profile("user.role", "用户是"+m[1]+"的"+m[2])
		}
		if m := c.tzZH.FindStringSubmatch(s); m != nil {
			v := m[1]
			if v == "" {
				v = m[2]
			}
			profile("user.timezone", "用户的时区现在是"+strings.TrimSuffix(v, "了"))
		}
		if z := zoneOf(s); z != "" {
			profile("user.timezone", "用户的时区是"+z)
		}
		for _, m := range c.relNameZH.FindAllStringSubmatch(s, 4) {
			name := cutAt(m[2], "是在住今来从的，,了也")
			add(fact{key: "relation." + c.rel(m[1]) + ".name", content: "用户的" + m[1] + "叫" + name, cat: memory.CatRelationship})
		}
		for _, m := range c.relLiveZH.FindAllStringSubmatch(s, 4) {
			if !badPlaceZH(m[3]) {
				who := m[1]
				if m[2] != "" && !badNameZH(m[2]) {
					who += m[2] // "我姐姐娜娜住在…": told with the name, for a later "娜娜搬去…" to meet
				}
				add(fact{key: "relation." + c.rel(m[1]) + ".location", content: "用户的" + who + "住在" + m[3], cat: memory.CatRelationship})
			}
		}
		if m := nameMoveZH.FindStringSubmatch(s); m != nil && !badNameZH(m[1]) && !notSubjectZH.MatchString(m[1]) && startsWithRelationZH(m[1]) == "" && !badPlaceZH(m[2]) {
			// "小雅去年调到福州了": someone known by name moved; the resolver meets
			// the relation's home told with that name.
			add(fact{key: "person." + m[1] + ".location", content: m[1] + "搬到了" + m[2], cat: memory.CatRelationship})
		}
		if m := c.petCountZH.FindStringSubmatch(s); m != nil && strings.Contains(s, "我") {
			name := cutAt(m[2], "是在住今来从的，,了也")
			add(fact{key: "pet." + c.pet(strings.TrimPrefix(m[1], "小")) + ".name", content: "用户养了一只" + m[1] + "，叫" + name, cat: memory.CatRelationship})
		}
		if m := gotNewZH.FindStringSubmatch(s); m != nil && (strings.Contains(s, "我") || strings.Contains(s, "换") || strings.Contains(s, "旧")) &&
			ownClauseZH(c, s, strings.Index(s, m[0])) {
			// "换了台…": what the speaker uses now, in the slot of its kind, so that it
			// replaces the one before.
			what := strings.TrimSpace(m[2])
			if key := deviceSlotZH(m[1], what); m[1] != "个" {
				add(fact{key: key, content: "用户现在用的是" + what, cat: memory.CatFact, imp: impPreference})
			} else if kind := deviceNounZH(s); deviceKind(what) != "computer" || kind != "" {
				// 个 measures anything: the kind comes from the maker or the sentence's noun.
				if kind == "" {
					kind = deviceKind(what)
				}
				add(fact{key: "user.device." + kind, content: "用户现在用的是" + what, cat: memory.CatFact, imp: impPreference})
			}
		} else if m := usedBeforeZH.FindStringSubmatch(s); m != nil && !kinLeadZH.MatchString(s) {
			// "之前用安卓，现在改用iPhone了": the device used now, in the slot of its kind.
			if kind := deviceOfEither(m[1], m[2]); kind != "" {
				add(fact{key: "user.device." + kind, content: "用户以前用" + m[1] + "，现在用" + trimEnd(m[2]), cat: memory.CatFact, imp: impPreference, replace: true})
			}
		} else if m := ownDeviceZH.FindStringSubmatch(s); m != nil && deviceTalkZH.MatchString(s) {
			// "我那台…用了好几年，屏幕都黄了": a device of the speaker's, told by what
			// devices do.
			what := strings.TrimSpace(m[2])
			add(fact{key: deviceSlotZH(m[1], what), content: "用户用的是" + what, cat: memory.CatFact, imp: impPreference})
		}
		if m := driveZH.FindStringSubmatch(s); m != nil {
			// "我开的是一辆老款卡罗拉": the car the speaker drives, whatever its make.
			add(fact{key: "user.vehicle", content: "用户开的是" + trimEnd(m[1]), cat: memory.CatFact, imp: impPreference})
		}
		if m := c.ownZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			key := "user.owns." + m[2]
			if m[1] == "辆" {
				key = "user.vehicle"
			}
			add(fact{key: key, content: "用户有一" + m[1] + trimEnd(m[2]), cat: memory.CatFact, imp: impPreference})
		}
		for _, m := range c.relIsZH.FindAllStringSubmatch(s, 4) {
			if badNameZH(m[2]) || jobLikeZH.MatchString(m[2]) {
				continue
			}
			add(fact{key: "relation." + c.rel(m[1]) + ".name", content: "用户的" + m[1] + "是" + m[2], cat: memory.CatRelationship})
		}
		if m := c.liveDropZH.FindStringSubmatch(s); m != nil && speakerLeadsZH(s) && !badPlaceZH(m[1]) {
			profile("user.location", "用户住在"+m[1])
		}
		for _, m := range c.relApposZH.FindAllStringSubmatch(s, 4) {
			if badNameZH(m[2]) {
				continue
			}
			add(fact{key: "relation." + c.rel(m[1]) + ".name", content: "用户的" + m[1] + "叫" + m[2], cat: memory.CatRelationship})
		}
		for _, m := range c.relJobZH.FindAllStringSubmatch(s, 4) {
			add(fact{key: "relation." + c.rel(m[1]) + ".job", content: "用户的" + m[1] + "是" + m[2], cat: memory.CatRelationship})
		}
		if m := relJobChangeZH.FindStringSubmatch(s); m != nil {
			// "我哥辞了…的工作，自己开了个…": the relation's work now, in the job slot.
			add(fact{key: "relation." + relSlot(c, m[1]) + ".job", content: o.pronounsOf(trimEnd(s)), cat: memory.CatRelationship, replace: true})
		}
		for _, m := range c.petZH.FindAllStringSubmatch(s, 4) {
			name := cutAt(m[2], "是在住今来从的，,了也")
			add(fact{key: "pet." + c.pet(m[1]) + ".name", content: "用户的" + m[1] + "叫" + name, cat: memory.CatRelationship})
		}
		for _, m := range c.petHaveZH.FindAllStringSubmatch(s, 4) {
			name := cutAt(m[2], "是在住今来从的，,了也")
			add(fact{key: "pet." + c.pet(m[1]) + ".name", content: "用户养了一只" + m[1] + "，叫" + name, cat: memory.CatRelationship})
		}
		if m := maritalZH.FindStringSubmatch(s); m != nil {
			add(fact{key: "user.marital_status", content: "用户" + m[1], cat: memory.CatProfile, replace: true})
		}
		if pregnantZH.MatchString(s) {
			add(fact{key: "user.health.pregnancy", content: o.finish("用户"+pregnantZH.FindString(s)[len("我"):], ref), cat: memory.CatFact})
		}
		if m := c.healthZH.FindStringSubmatch(s); m != nil && m[2] != "" {
			add(fact{key: "user.health." + m[2], content: "用户有" + m[2], cat: memory.CatFact})
		} else if m != nil {
			add(fact{key: "user.health." + m[1], content: "用户被诊断出" + m[1], cat: memory.CatFact})
		} else if m := checkupZH.FindStringSubmatch(s); m != nil && !someoneElseBefore(s, strings.Index(s, m[0])) {
			// "体检查出来血脂偏高": a finding of a check-up the speaker had.
			add(fact{key: "user.health." + m[1], content: "用户体检查出" + m[1] + m[2], cat: memory.CatFact})
		}
		if m := c.deviceZH.FindStringSubmatch(s); m != nil {
			add(fact{key: "user.device." + deviceKind(m[1]), content: "用户用的是" + m[1], cat: memory.CatFact, imp: impPreference})
		}
		if m := dietEndZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			add(fact{key: "food.diet", content: "用户" + strings.TrimPrefix(m[0], "我"), cat: memory.CatProfile, replace: true})
		}
		if m := petRenamedZH.FindStringSubmatch(s); m != nil && !badNameZH(m[2]) {
			// "我家猫改名叫团团了": the pet's name slot.
			add(fact{key: "pet." + c.pet(m[1]) + ".name", content: "用户的" + m[1] + "现在叫" + m[2], cat: memory.CatRelationship, replace: true})
		}
		if m := weightZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			// "我体重65公斤", "瘦到60公斤了": the speaker's weight.
			add(fact{key: "user.weight", content: "用户体重" + m[1], cat: memory.CatProfile, replace: true})
		}
		if m := workWeekZH.FindStringSubmatch(s); m != nil && speakerBeforeZH(c, s, strings.Index(s, m[0])) {
			add(fact{key: "schedule.work_week", content: "用户" + m[0], cat: memory.CatFact, replace: true})
		}
		if m := favoriteZH.FindStringSubmatch(s); m != nil && !c.relAnyZH.MatchString(s[:strings.Index(s, m[0])]) {
			// "我最喜欢的餐厅是…", "最喜欢的面馆变成…了": a favourite, one at a time.
			add(fact{key: "favorite." + m[1], content: "用户最喜欢的" + m[1] + "是" + strings.TrimSuffix(m[2], "了"), cat: memory.CatPreference, replace: true})
		}
		if m := relLeftWorkZH.FindStringSubmatch(s); m != nil {
			// A relation that stopped working: their job and employer are history.
			rel := relSlot(c, m[1])
			add(fact{key: "relation." + rel + ".job", content: "用户的" + m[1] + m[2], cat: memory.CatRelationship, replace: true})
			add(fact{key: "relation." + rel + ".employer", content: "用户的" + m[1] + m[2], cat: memory.CatRelationship, replace: true})
		}
		if m := relEmployerZH.FindStringSubmatch(s); m != nil {
			// "我姐姐在招商银行上班", "哥哥跳槽到了顺丰": where a relation works, one at a time.
			add(fact{key: "relation." + relSlot(c, m[1]) + ".employer", content: "用户的" + m[1] + "在" + m[2] + m[4] + workVerbZH(m[3]), cat: memory.CatRelationship, replace: true})
		}
	}
	// A child's school year, with the relation it belongs to.
	if m := c.school.FindStringSubmatch(s); m != nil {
		who := ""
		if r := c.relNameEN.FindStringSubmatch(s); r != nil {
			who = r[1]
		} else if r := c.relAnyEN.FindStringSubmatch(s); r != nil && !zh {
			who = r[1]
		} else if r := c.relApposZH.FindStringSubmatch(s); r != nil {
			who = r[1]
		} else if r := c.relAnyZH.FindStringSubmatch(s); r != nil && zh {
			who = r[1]
		}
		if who != "" {
			grade := m[1] + m[2]
			content := "The user's " + strings.ToLower(who) + " is in " + grade
			if zh {
				content = "用户的" + who + "上" + grade
			}
			add(fact{key: "relation." + c.rel(who) + ".school", content: o.finish(content, ref), cat: memory.CatRelationship})
		} else if n := namedGradeEN.FindStringSubmatch(s); n != nil && !zh && !c.notName[n[1]] && !nameStop[strings.ToLower(n[1])] {
			// "Maya started 4th grade": a child known by name; the slot is the name's.
			add(fact{key: "person." + slugify(n[1]) + ".school", content: upperFirst(trimEnd(o.pronounsEN(s, false))), cat: memory.CatRelationship})
		}
	}
	if !zh {
		if m := jobChangeEN.FindStringSubmatch(s); m != nil {
			// "Ines left the bank and opened a bakery", "my brother quit teaching and now
			// drives a cab": someone's work now, in the slot of their job.
			who, key := strings.TrimSpace(m[1]), ""
			if r := kinLeadEN.FindString(who); r != "" {
				key = "relation." + slugify(c.rel(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(r), "my "), "our ")))) + ".job"
			} else if !c.notName[who] && !nameStop[strings.ToLower(who)] {
				key = "person." + slugify(who) + ".job"
			}
			if key != "" {
				add(fact{key: key, content: upperFirst(trimEnd(o.pronounsEN(s, false))), cat: memory.CatRelationship, replace: true})
			}
		}
	}
	if !zh {
		if m := relTasteEN.FindStringSubmatch(s); m != nil {
			// "My wife can't stand olives": the relation's taste, in a slot of the
			// relation's, never the speaker's own (food.*), so that neither replaces the other.
			who, verb, obj := slugify(c.rel(strings.ToLower(m[1]))), strings.ToLower(m[2]), trimEnd(m[3])
			key := "relation." + who + ".taste." + slugify(firstWords(strings.ToLower(obj), 3))
			switch {
			case strings.Contains(verb, "allergic"):
				key = "relation." + who + ".allergy." + slugify(firstWords(strings.ToLower(obj), 3))
			case obj == "", relDietEN.MatchString(verb):
				// "is vegan these days": a diet, whatever follows it.
				key, obj = "relation."+who+".diet", ""
			}
			content := "The user's " + strings.ToLower(m[1]) + " " + verb
			if obj != "" {
				content += " " + o.pronounsEN(obj, true)
			}
			add(fact{key: key, content: o.finish(content, ref), cat: memory.CatRelationship, imp: impPreference})
		}
	}
	if zh {
		if m := usesZH.FindStringSubmatch(s); m != nil && !o.lex.aboutOthers(s) {
			// "公司VPN用的是EasyConnect": the tool used for a job, in that job's slot.
			what := strings.TrimSpace(m[1])
			add(fact{key: "tool." + strings.ToLower(what), content: "用户的" + what + "用的是" + strings.TrimSpace(m[2]), cat: memory.CatFact, imp: impPreference})
		}
	} else if m := thingIsEN.FindStringSubmatch(s); m != nil {
		// "Our studio is on the second floor of the Harlow Building": where or under whom
		// a thing of the speaker's is, in the thing's slot.
		noun := strings.ToLower(m[1])
		add(fact{key: "thing." + slugify(noun), content: o.finish("The user's "+noun+" "+strings.ToLower(m[2])+" "+trimEnd(m[3]), ref), cat: memory.CatFact, imp: impPreference})
	}
	if zh {
		if m := relLangZH.FindStringSubmatch(s); m != nil {
			// "我奶奶只会说客家话": what a relation reads or speaks.
			add(fact{key: "relation." + relSlot(c, m[1]) + ".language", content: "用户的" + m[1] + m[2], cat: memory.CatRelationship})
		}
		if m := relHeNameZH.FindStringSubmatch(s); m != nil && !badNameZH(m[2]) {
			// "帮我给导师回封邮件，他叫邵明远": the relation named in the clause after.
			add(fact{key: "relation." + relSlot(c, m[1]) + ".name", content: "用户的" + m[1] + "叫" + m[2], cat: memory.CatRelationship})
		}
		if m := relNickZH.FindStringSubmatch(s); m != nil && !nickNotName[m[2]] {
			// "我弟弟阿强…": a relation named by a familiar name (阿/小/老 and one character).
			add(fact{key: "relation." + relSlot(c, m[1]) + ".name", content: "用户的" + m[1] + "叫" + m[2], cat: memory.CatRelationship})
		}
		if m := yearsAsZH.FindStringSubmatch(s); m != nil {
			// "我干了十年的出纳": the speaker's line of work.
			add(fact{key: "user.role", content: "用户做了" + m[1] + "的" + m[2], cat: memory.CatProfile})
		}
		if m := hometownZH.FindStringSubmatch(s); m != nil {
			if place := m[1] + m[2]; isPlaceLike(place) && !badPlaceZH(place) {
				// "春节回贵阳老家": where the speaker's family home is.
				add(fact{key: "user.origin", content: "用户老家在" + place, cat: memory.CatProfile})
			}
		}
	} else {
		if m := relLangEN.FindStringSubmatch(s); m != nil && languageEN[strings.ToLower(m[3])] {
			// "my stepdad, he only speaks Dutch": what a relation reads or speaks.
			add(fact{key: "relation." + slugify(c.rel(strings.ToLower(m[1]))) + ".language",
				content: "The user's " + strings.ToLower(m[1]) + " " + strings.ToLower(m[2]) + " " + m[3], cat: memory.CatRelationship})
		}
		if m := notBeforeEN.FindStringSubmatch(s); m != nil {
			// "nothing before 10am", "no calls after 6pm": a bound on the speaker's time.
			key := "schedule.not_before"
			if strings.EqualFold(m[1], "after") || strings.EqualFold(m[1], "later than") {
				key = "schedule.not_after"
			}
			add(fact{key: key, content: "The user wants " + strings.ToLower(trimEnd(m[0])), cat: memory.CatConstraint, imp: impConstraint})
		}
		if m := relLeftWorkEN.FindStringSubmatch(s); m != nil {
			who := strings.ToLower(m[1])
			rel := slugify(c.rel(who))
			content := "The user's " + who + " " + strings.ToLower(m[2])
			add(fact{key: "relation." + rel + ".job", content: content, cat: memory.CatRelationship, replace: true})
			add(fact{key: "relation." + rel + ".employer", content: content, cat: memory.CatRelationship, replace: true})
		}
		if m := relRunsEN.FindStringSubmatch(s); m != nil {
			// "my cousin runs a florist's in Hove": what a relation does, by the business.
			who := strings.ToLower(m[1])
			add(fact{key: "relation." + slugify(c.rel(who)) + ".job", content: "The user's " + who + " " + strings.ToLower(m[2]) + " " + trimEnd(m[3]), cat: memory.CatRelationship})
		}
		if dietEndEN.MatchString(s) && !someoneElseEN.MatchString(s) {
			// "I eat meat again", "no longer vegetarian": the diet slot's new value.
			add(fact{key: "food.diet", content: upperFirst(o.pronounsEN(trimEnd(o.clean(s)), false)), cat: memory.CatProfile, replace: true})
		}
		if m := weightEN.FindStringSubmatch(s); m != nil && !someoneElseEN.MatchString(s) {
			// "I weigh 82 kg", "down to 76 kg now": the speaker's weight, one at a time.
			add(fact{key: "user.weight", content: "The user weighs " + strings.TrimSpace(m[1]+m[2]), cat: memory.CatProfile, replace: true})
		}
		if m := workWeekEN.FindStringSubmatch(s); m != nil && !someoneElseEN.MatchString(s) {
			// "I work Monday through Thursday now", "a three-day week": the speaker's working week.
			told := trimEnd(o.clean(s))
			if backToEN.MatchString(told) {
				told = "I'm " + lowerFirst(told) // "Back to five days a week"
			}
			add(fact{key: "schedule.work_week", content: upperFirst(o.pronounsEN(told, false)), cat: memory.CatFact, replace: true})
		}
		if m := favoriteLabelEN.FindStringSubmatch(s); m != nil {
			// "New favourite café: Dishoom" tells a favourite by its label.
			add(fact{key: "favorite." + slugify(strings.ToLower(m[1])), content: "The user's favourite " + strings.ToLower(m[1]) + " is " + trimEnd(m[2]), cat: memory.CatPreference, replace: true})
		}
		if m := childMovedEN.FindStringSubmatch(s); m != nil {
			// "We moved our son to St Anne's": a child changes school.
			who := strings.ToLower(m[1])
			add(fact{key: "relation." + c.rel(who) + ".school", content: upperFirst(trimEnd(o.pronounsEN(s, false))), cat: memory.CatRelationship, replace: true})
		} else if m := schoolNameEN.FindStringSubmatch(s); m != nil {
			// "my son goes to Elm Primary": the relation's school, one at a time.
			who := strings.ToLower(m[1])
			add(fact{key: "relation." + c.rel(who) + ".school", content: "The user's " + who + " goes to " + m[2], cat: memory.CatRelationship, replace: true})
		}
		if m := heightEN.FindStringSubmatch(s); m != nil {
			// "I'm 6'4\" so most desks are too short": the speaker's height.
			add(fact{key: "user.height", content: "The user is " + strings.TrimSpace(m[1]) + " tall", cat: memory.CatProfile})
		}
		if m := hometownEN.FindStringSubmatch(s); m != nil && !c.notName[m[1]] {
			// "a flight home to Accra for Christmas": where the speaker's home is.
			add(fact{key: "user.origin", content: "The user's home town is " + m[1], cat: memory.CatProfile})
		}
	}
	// standing is a fact about the speaker that a later value replaces, told in their
	// words (third person): office days, pay, an address, a commute.
	standing := func(key, text string) {
		add(fact{key: key, content: o.finish(o.thirdPerson(trimEnd(text), memory.CatFact, "clause"), ref), cat: memory.CatFact, imp: impPreference})
	}
	// ownBefore: no relation of the speaker's is named before byte at ("我老公每天开车上班"
	// is the husband's way to work).
	ownBefore := func(at int) bool {
		rel := c.relAnyZH.FindStringIndex(s)
		return (rel == nil || rel[0] > at) && !o.lex.aboutOthers(s)
	}
	// Which days the speaker is at the office, and what they earn: one slot each, so
	// that a new policy or a raise replaces the old value.
	if zh {
		if officeDaysZH.MatchString(s) && !o.lex.aboutOthers(s) {
			standing("schedule.office_days", s)
		}
		if m := salaryZH.FindStringSubmatch(s); m != nil && !o.lex.aboutOthers(s) {
			add(fact{key: "user.salary", content: "用户" + strings.TrimPrefix(m[0], "我"), cat: memory.CatFact, imp: impPreference})
		}
		if m := nowUsesZH.FindStringSubmatch(s); m != nil {
			what, noun := strings.TrimSpace(m[1]), deviceNounZH(s)
			if kind := cmp.Or(noun, deviceKind(what)); kind != "computer" || noun != "" {
				// "旧的那台卖了，如今在用荣耀X50": the device used now, in its kind's slot.
				add(fact{key: "user.device." + kind, content: "用户现在用的是" + what, cat: memory.CatFact, imp: impPreference})
			}
		}
	} else {
		if officeDaysEN.MatchString(s) {
			standing("schedule.office_days", s)
		}
		if loc := salaryEN.FindStringIndex(s); loc != nil {
			standing("user.salary", clauseAt(s, loc[0]))
		}
	}
	// Where the speaker's parcels go is one slot: a new address replaces the old.
	if zh {
		if loc := addressZH.FindStringIndex(s); loc != nil && ownBefore(loc[0]) {
			standing("user.address", s)
		}
	} else if addressEN.MatchString(s) && !o.lex.aboutOthers(s) {
		standing("user.address", s)
	}
	// How the speaker gets to work is one slot whatever the way: a new way ("these days I
	// just cycle in") replaces the bus or the line told before. Only its clause: the rest
	// of the sentence may tell another slot (the city).
	if zh {
		if loc := c.commuteZH.FindStringIndex(s); loc != nil && ownBefore(loc[0]) && (strings.ContainsAny(s, "我咱") || !otherSubjectZH.MatchString(s)) {
			cl := clauseAt(s, loc[0])
			if !strings.ContainsAny(cl, "我咱") && strings.ContainsAny(s, "我咱") {
				cl = "我" + cl
			}
			standing("user.commute", cl)
		}
	} else if loc := c.commuteEN.FindStringIndex(s); loc != nil {
		standing("user.commute", clauseAt(s, loc[0]))
	}
	return out
}

// clauseOf finds re in s (submatches, then the clause up to the match's end) and says
// whose clause the match is in: "" for the speaker's,
// the relation word ("wife") for a relation's ("my wife Ana is a pilot at Aerion"), "-"
// for someone else's ("she works at …").
func (c *clauseRules) clauseOf(re *regexp.Regexp, s string) ([]string, string) {
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return nil, ""
	}
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	head := s[:loc[0]]
	if i := strings.LastIndexAny(head, ",;:.!?"); i >= 0 {
		head = head[i+1:]
	}
	if i := strings.LastIndex(strings.ToLower(head), " and "); i >= 0 {
		head = head[i+5:]
	}
	// The last element is the clause up to the match's end, for checks of its polarity.
	m = append(m, head+m[0])
	if r := c.relAnyEN.FindStringSubmatch(head); r != nil {
		return m, r[1]
	}
	if otherSubject.MatchString(head) {
		return m, "-"
	}
	return m, ""
}

// workTalk marks a sentence about where someone works.
var workTalk = regexp.MustCompile(`(?i)\b(?:work(?:s|ed|ing)?|jobs?|employ\w*|company|employer|quit|left|joined)\b`)

// Devices and cars of the speaker's in Chinese, by their measure word: 辆 a vehicle, 部 a
// phone, 台 a computer (unless its name says phone).
var (
	gotNewZH     = regexp.MustCompile(`(?:换了|换成了|换成|新买了|入手了|入了|新入了|买了|提了|新提了|订了)(?:一)?(台|部|辆|个)([^，。,.!！；;]{2,30}?)(?:[，。,.!！；;]|$)`)
	ownDeviceZH  = regexp.MustCompile(`我(?:的|家)?(?:那|这)?(台|部|辆)([^，。,.!！；;]{2,20}?)(?:用了|开了|开机|电池|屏幕|键盘|死机|卡得|充电|油耗|刹车|发动机)`)
	deviceTalkZH = regexp.MustCompile(`用了|开了|开机|电池|屏幕|键盘|死机|卡得|充电|油耗|刹车|发动机|续航`)
)

// namedGradeEN is a school year told of someone by name: "Maya is in 3rd grade".
var namedGradeEN = regexp.MustCompile(`^(?:(?i:so|and|oh|also|btw),?\s+)?(\p{Lu}[\p{Ll}'-]+)\s+(?:(?:just|now|finally)\s+)?(?i:is\s+in|is\s+starting|started|starts|is\s+going\s+into|went\s+into|moved\s+up\s+to|will\s+be\s+in|is\s+now\s+in|entered)\b`)

// driveZH is the car the speaker drives: "我开的是思域", "我平时开一辆二手高尔夫".
var driveZH = regexp.MustCompile(`^我(?:现在|平时|一直|目前|自己)?(?:开的是|开的车是|开一辆|开着一辆|开了(?:[一二两三四五六七八九十几好\d]+年多?)?的)(?:一辆)?([^，。,.!！；;吗呢？?]{2,16}?)(?:[，。,.!！；;]|$)`)

// deviceSlotZH is the slot of a device or car named with measure word mw.
func deviceSlotZH(mw, what string) string {
	switch {
	case mw == "辆", carLineZH.MatchString(strings.ToLower(what)):
		return "user.vehicle"
	case mw == "部", deviceKind(what) == "phone":
		return "user.device.phone"
	}
	return "user.device." + deviceKind(what)
}

// relTurnsEN is a relation's coming birthday ("my son turns six next week").
var relTurnsEN = regexp.MustCompile(`(?i:\bmy\s+(?:(?:little|older|younger|big|baby|eldest|youngest|oldest)\s+)?(` + relEN + `)(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?:turns|will turn|is turning|'s turning)\s+)(\w+)`)

// ownCarEN is a named thing of the speaker's ("my old Fiat Panda"), carTalk what is
// said only of cars.
var (
	ownCarEN = regexp.MustCompile(`\b[Mm]y\s+(?:old\s+|new\s+|trusty\s+|little\s+|beloved\s+)?(\p{Lu}[\p{L}-]+(?:\s(?:\p{Lu}[\p{L}\d-]*|\d[\w-]*)){1,2})\b`)
	carTalk  = regexp.MustCompile(`(?i)\b(?:brakes?|braking|engine|tyres?|tires?|mileage|mechanic|oil change|transmission|clutch|gearbox|dashboard|parked|parking|windshield|windscreen|exhaust|mpg|test drive|car wash|fill(?:ed)? up|charging|chargers?|road trip)\b`)
)

var otherSubject = regexp.MustCompile(`(?i)\b(?:he|she|they|his|her|their|him|them)\b`)

// speakerBeforeZH reports that the clause at byte offset at is the speaker's: the last 我
// before it is not the start of a relation (我妻子, 我的老板) and no 他/她 comes between.
func speakerBeforeZH(c *clauseRules, s string, at int) bool {
	if at < 0 {
		return false
	}
	before := s[:at]
	me := strings.LastIndex(before, "我")
	if me < 0 {
		return at == 0 || !strings.ContainsAny(before, "他她")
	}
	rest := s[me:]
	if loc := c.relAnyZH.FindStringIndex(rest); loc != nil && loc[0] == 0 {
		return false
	}
	return !strings.ContainsAny(s[me:at], "他她")
}

// ownClauseZH reports that the clause holding byte at of s is the speaker's: in a clause
// of its own the dropped subject is the speaker ("小新送我表弟了，咬咬牙入了台…"), and
// "我哥哥刚买了一辆…" is the brother's.
func ownClauseZH(c *clauseRules, s string, at int) bool {
	if at < 0 {
		return false
	}
	start := strings.LastIndexAny(s[:at], "，,；;。！？!?") + 1
	return speakerBeforeZH(c, s[start:], at-start)
}

// speakerMovesZH reports that the move told at byte at of s is the speaker's: the clause
// before the verb names the speaker, or no one (then the sentence's subject goes on).
// "张总调去深圳了" is a colleague's transfer, "我们公司搬到了望京" the office's move.
func speakerMovesZH(c *clauseRules, s string, at int) bool {
	before := s[:at]
	if i := strings.LastIndexAny(before, "，,。；;！!？?"); i >= 0 {
		_, w := utf8.DecodeRuneInString(before[i:])
		before = before[i+w:]
	}
	if rest := moverAdverbsZH.ReplaceAllString(before, ""); rest != "" && !strings.Contains(rest, "我") {
		return false
	}
	if strings.Contains(before, "我") && moverNotSpeakerZH.MatchString(before) {
		return false
	}
	return speakerBeforeZH(c, s, at)
}

// moverAdverbsZH are the times and adverbs a clause may put before its move verb.
var moverAdverbsZH = regexp.MustCompile(`已经|早就|刚刚?|才|也|都|就|终于|总算|马上|准备|打算|计划|要|会|前阵子|最近|上个?月|下个?月|这个?月|上周|下周|去年|今年|明年|年底|年初|月底|\d+月(?:份)?|[上下这]?(?:周|星期)[一二三四五六日天]|\s`)

// moverNotSpeakerZH is the speaker's organisation or a relative before a move verb: their
// move, not the speaker's ("我们公司搬到了…", "我妹调到北京了").
var moverNotSpeakerZH = regexp.MustCompile(`我们?(?:的)?(?:公司|部门|单位|团队|工作室|店|学校|办公室|老板|领导|同事|爸|妈|哥|姐|弟|妹|儿子|女儿|孩子|老公|老婆|朋友)`)

// localsEN is the speaker calling themselves people of a place: "we're officially
// Asheville people now", "I'm a Leeds local these days". The group is the place.
var livedSinceEN = regexp.MustCompile(`(?i:\b(?:we've|we\s+have|i've|i\s+have)\s+(?:now\s+|actually\s+)?been\s+(?:living\s+|based\s+|settled\s+)?(?:in|out\s+in|up\s+in|down\s+in)\s+)` + capName + `(?i:\s+(?:since|for\s+(?:(?:about|almost|over|nearly|more\s+than)\s+)?(?:a|\d+|two|three|four|five|six|several|a\s+few|many)\s+(?:years?|months?)\b))`)

var localsEN = regexp.MustCompile(`(?i:\b(?:we're|we\s+are|i'm|i\s+am)\s+(?:now\s+|officially\s+|finally\s+|proper\s+|(?:an?\s+))*)` + capName + `(?i:\s+(?:people|residents|locals?|folks?)\b)`)

// handlesEN is who handles a thing for the speaker: "<Name> handles/looks after/is the
// one who handles our <thing>" (groups 1, 2) or "<thing> is/are with|handled by <Name>
// now" (groups 3, 4).
var handlesEN = regexp.MustCompile(`(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+)?)\s+(?:is\s+the\s+one\s+who\s+)?(?i:handles|manages|owns|looks\s+after|takes\s+care\s+of|runs|does)\s+(?i:all\s+)?(?i:our|my|the)\s+((?:[a-z][a-z-]*\s+){0,2}(?:contracts?|payroll|invoices?|taxes|accounts?|bookings?|billing|expenses|books|hiring|renewals?|claims?|approvals?|orders?|scheduling))\b` +
	`|(?i:\b(?:our|my|the)?\s*)((?i:[a-z][a-z-]*\s+){0,2}(?:contracts?|payroll|invoices?|taxes|accounts?|bookings?|billing|expenses|books|hiring|renewals?|claims?|approvals?|orders?|scheduling))\s+(?i:are|is|go|goes)\s+(?i:(?:now\s+)?(?:with|handled\s+by|owned\s+by|to))\s+(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+)?)`)

// hereInEN is a place the speaker says they are in ("the weather here in Tucson",
// "out here in Lincoln").
var hereInEN = regexp.MustCompile(`(?i:\b(?:out\s+|over\s+|up\s+|down\s+|around\s+)?here\s+in)\s+` + capName)

// sinceMoveEN is a sentence that dates itself from the speaker's move ("since the move",
// "since we moved"); the place it names as the setting of life there (localPlaceEN: "the
// Glasgow winters", "around Leeds") is where the speaker lives now.
var (
	sinceMoveEN  = regexp.MustCompile(`(?i)\b(?:since|after)\s+(?:the|our|my)\s+(?:big\s+|recent\s+)?move\b|\bsince\s+(?:we|i)\s+moved\b|\bsince\s+moving\b`)
	localPlaceEN = regexp.MustCompile(`(?:\b(?i:the)\s+` + capName + `\s+(?i:weather|winters?|summers?|rain|traffic|heat|cold|humidity|food|prices|rents?|accent|pace|vibe|scene|commute|hills|sun|wind|fog|snow)\b|\b(?i:in|around)\s+` + capName + `)`)
)

// hereZH is the same in Chinese: "我们这边哈尔滨…", "我这儿昆明…".
var hereZH = regexp.MustCompile(`我们?(?:这边|这儿|这里)(\p{Han}{2,4}?)(?:今天|这几天|最近|天气|冷|热|下雨|下雪|[，,])`)

// travelTalk marks a stay that is not home: a trip, a visit, a conference.
var travelTalk = regexp.MustCompile(`(?i)\b(?:visiting|trip|vacation|holiday|conference|business\s+travel|layover|for\s+the\s+week(?:end)?|staying\s+at)\b|出差|旅游|旅行|玩几天|度假|开会`)

// signoffEN is a name signed at the end of a quoted text; ownWriting, a request about the
// speaker's own text.
var (
	signoffEN  = regexp.MustCompile(`(?i:\b(?:thanks|cheers|best|regards|best\s+regards|kind\s+regards|sincerely|thank\s+you|warmly))\s*,?\s+(\p{Lu}\p{Ll}+)\s*[.!]?\s*['"’”]`)
	ownWriting = regexp.MustCompile(`(?i)\b(?:proofread|proof-read|look\s+over|check\s+(?:this|my)|my\s+(?:email|message|draft|note|reply))\b`)
)

// handlesZH is who handles a thing for the speaker: "报销现在归小吴管", "合同由法务的
// 老林对接". Groups: the thing, who.
var handlesZH = regexp.MustCompile(`(?:^|[，,。；;：:])(?:我们?的?|公司的?)?(\p{Han}{2,6}?)(?:的事|这块|这一块)?(?:现在|以后|目前|今后)?(?:都|就)?(?:归|由)(\p{Han}{2,6}?)(?:负责|管|处理|对接)`)

// lastWords is the last n words of s.
func lastWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[len(f)-n:]
	}
	return strings.Join(f, " ")
}

// workCityZH is the city told before the company a speaker works at.
var workCityZH = regexp.MustCompile(`在(\p{Han}{2,3}?)的?(?:一家|家)`)

// jobLikeZH is a value that names a job, not a person ("医生", "产品经理").
var jobLikeZH = regexp.MustCompile(`(?:` + jobZH + `|` + fieldZH + `)$`)

// speakerLeadsZH reports a sentence whose first clause is about the speaker ("我叫…",
// "大家好，我是…"), so that a later clause without a subject is about them too; a relation
// named before the speaker makes it about that person instead.
func speakerLeadsZH(s string) bool {
	i := strings.Index(s, "我")
	if i < 0 {
		return false
	}
	head := s[i:]
	if j := strings.IndexAny(head, "，,；;"); j >= 0 {
		head = head[:j]
	}
	for _, r := range []string{"的", "家"} {
		if strings.HasPrefix(head, "我"+r) {
			return false
		}
	}
	return true
}

// thirdVerb is an English verb in the third person singular ("run" → "runs").
func thirdVerb(v string) string {
	switch {
	case strings.HasSuffix(v, "ed"):
		return v
	case strings.HasSuffix(v, "s"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"):
		return v + "es"
	}
	return v + "s"
}

// usesEN is a named service or tool the speaker uses for a job: "we use Parcelwise for
// shipping labels", "I'm using Notion to track tasks".
var usesEN = regexp.MustCompile(`(?i:\b(?:i|we)(?:'re|\s+are|\s+am|'m)?\s+(?:now\s+|mostly\s+|mainly\s+|currently\s+|still\s+)?(?:use|using|rely on|switched to)\s+)(\p{Lu}[\w.-]*(?:\s\p{Lu}[\w.-]*){0,2})(?i:\s+(?:for|to handle|to track|to run|to do)\s+(?:our\s+|my\s+|the\s+|all\s+(?:our\s+|my\s+)?)?)([a-z][a-z-]+)`)

// usesNotJob are words after "use X for" that name no job.
var usesNotJob = map[string]bool{"everything": true, "anything": true, "all": true, "it": true, "that": true, "this": true,
	"these": true, "now": true, "work": true, "years": true, "ages": true, "a": true, "an": true}

// runAtEN is a unit the speaker runs at an organisation: "I run the soil lab at …".
var runAtEN = regexp.MustCompile(`(?i:\b(?:i|we)\s+(?:also\s+|now\s+|currently\s+)?(run|manage|lead|head|direct|oversee|coordinate)\s+)((?i:the|a|an)\s+(?i:[a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?))\s+(?i:at|for)\s+` + orgName)

// marriedToEN names the speaker's spouse or fiancé(e): "married to Lena".
var marriedToEN = regexp.MustCompile(`(?i:(?:^|,\s*|\b(?:i'm|i\s+am|i've\s+been|i\s+got|we\s+got|i\s+just\s+got)\s+)(?:happily\s+|newly\s+|recently\s+|just\s+)?(married|engaged)\s+to\s+)(\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?)`)

// maritalEN and maritalZH are the speaker's marital status.
var (
	maritalEN = regexp.MustCompile(`(?i)\b(?:i'm|i am|i've been|i have been)\s+(?:(?:now|happily|recently|newly|just|finally|officially|still)\s+)*(married|divorced|engaged|separated|single|widowed)\b|\b(?:i|we)\s+(?:just\s+|finally\s+|recently\s+)?got\s+(married|divorced|engaged)\b`)
	maritalZH = regexp.MustCompile(`我(?:们)?(?:已经|刚|去年|今年|上个月)?((?:结婚了|离婚了|订婚了|已婚|未婚|离异|单身))`)
)

// conditionEN is a chronic condition the speaker lives with: "I have type 2 diabetes",
// "I've got asthma", "I'm diabetic".
var conditionEN = regexp.MustCompile(`(?i)\b(?:i\s+have|i've\s+got|i\s+have\s+got|i\s+live\s+with|i\s+suffer\s+from|i\s+deal\s+with)\s+(?:(?:a|mild|severe|chronic|bad)\s+)*((?:type\s+[12]\s+)?diabetes|asthma|c(?:o)?eliac(?:\s+disease)?|epilepsy|migraines|ibs|adhd|arthritis|high\s+blood\s+pressure|hypertension|a\s+heart\s+condition|crohn's(?:\s+disease)?|lupus|eczema|psoriasis|sleep\s+apnea|tinnitus|glaucoma|a\s+bad\s+back|a\s+bad\s+knee|anxiety|depression|long\s+covid)\b|\b(?:i'm|i\s+am)\s+(?:a\s+)?(diabetic|asthmatic|epileptic|anemic|anaemic|hypoglycemic|colou?r-?blind|deaf|hard\s+of\s+hearing)\b`)

// conditionSlug names a condition's slot by what it is, not how it was said.
func conditionSlug(c string) string {
	switch {
	case strings.Contains(c, "diabet"):
		return "diabetes"
	case strings.Contains(c, "eliac"):
		return "celiac"
	case strings.Contains(c, "asthma"):
		return "asthma"
	case strings.Contains(c, "epilep"):
		return "epilepsy"
	}
	return strings.TrimPrefix(c, "a ")
}

// durationZH is a length of time ("半年", "三个月", "两周多").
var durationZH = regexp.MustCompile(`^(?:半|[一二两三四五六七八九十几\d]+)(?:个)?(?:年|月|周|星期|天|礼拜)`)

// doWorkZH is the speaker's line of work told as "我是做X的"; switchedToZH a new employer
// told by going there ("跳槽到字节了", "入职了美团").
var (
	doWorkZH     = regexp.MustCompile(`我(?:现在|目前|一直)?是(?:做|搞|干)([A-Za-z]{2,8}|\p{Han}{2,6}?)(?:这一?行)?的`)
	switchedToZH = regexp.MustCompile(`我(?:已经|刚刚?|上个月|上周|今年|去年|前段时间|前阵子|最近|这个月|年初|年底|早就)*(?:跳槽到|跳到|入职了?|加入了?)([A-Za-z][\w&]{1,15}|\p{Han}{2,8}?)(?:了|$|[，。,！!])`)
)

// roleZH says the speaker's work: a job by its title ("用户是会计"), a line of work by
// what they do ("用户做理赔").
func roleZH(v string) string {
	if fieldEndZH.MatchString(v) && !jobEndZH.MatchString(v) {
		return "用户做" + v
	}
	return "用户是" + v
}

var (
	fieldEndZH = regexp.MustCompile(`(?:` + fieldZH + `)$`)
	jobEndZH   = regexp.MustCompile(`(?:` + jobZH + `)$`)
)

// workCoZH is a job at a company named by its kind ("在一家做硬件的公司当产品经理");
// coNameZH the company's name told after it ("公司叫云翼").
var (
	workCoZH = regexp.MustCompile(`在(?:\p{Han}{2,3}?的?)?((?:一家|家)[^，。,]{1,14}?(?:公司|企业|单位|机构|工作室|学校|医院|银行|工厂))(?:当|做|担任)(?:一名|一位|一个|个|名)?([^，。,.!！；;]{0,10}?(?:` + jobZH + `|` + fieldZH + `))(?:[，。,.!！；;了]|$)`)
	coNameZH = regexp.MustCompile(`(?:公司|单位|工作室|厂子)(?:叫|名叫|名字叫)([\p{Han}A-Za-z]{2,10}?)(?:[，。,.!！；;\s]|$)`)
)

// checkupZH is a check-up's finding: "体检查出来血脂偏高", "检查发现尿酸超标".
var checkupZH = regexp.MustCompile(`(?:体检|检查|化验|复查)(?:结果)?(?:查出来|查出|发现|显示|说)(?:了|有)?(\p{Han}{2,6}?)(偏高|偏低|异常|超标|过高|过低|不太好|有问题)`)

// someoneElseBefore reports someone other than the speaker named before position at of s
// (他, 她, 我妈 …): what follows is theirs.
func someoneElseBefore(s string, at int) bool {
	before := s[:max(at, 0)]
	return strings.ContainsAny(before, "他她") || relAfterMe.MatchString(before)
}

var relAfterMe = regexp.MustCompile(`我(?:的|家)?(?:` + relZH + `)`)

// zhNoThing are words in a taste's place that name nothing to eat: "不能吃东西" is fasting.
var zhNoThing = map[string]bool{"东西": true, "饭": true, "啥": true, "什么": true, "了": true}

// teachZH is where the speaker teaches and what: "我在城南中学教化学".
var teachZH = regexp.MustCompile(`(?:^|我|[，,])(?:现在|目前|如今|已经)?在([^，。,在]{2,14}?)教(\p{Han}{1,4}?)(?:[，。,.!！；;]|课|$)`)

// carLineZH names car makers and models, told with any measure word ("换了台比亚迪").
var carLineZH = regexp.MustCompile(`比亚迪|特斯拉|理想|蔚来|小鹏|丰田|本田|大众|宝马|奔驰|奥迪|卡罗拉|凯美瑞|雅阁|思域|轩逸|零跑|问界|极氪|五菱|长安|吉利|哈弗|红旗|别克|雪佛兰|福特|马自达|日产|现代|起亚|小米su7|tesla|byd`)

// phoneLine names makers and lines sold mostly as phones.
var phoneLine = regexp.MustCompile(`一加|荣耀|华为mate|华为p\d|小米\d|红米|魅族|oppo|vivo|realme|真我|\boneplus\b|\bhonor\b|\bredmi\b|\bxiaomi\b|\bfairphone\b|\bmoto(?:rola)?\b|\bnokia\b|\bnothing phone\b`)

// deviceNounZH is the kind of device a Chinese sentence names by its noun.
func deviceNounZH(s string) string {
	switch {
	case strings.Contains(s, "手机"):
		return "phone"
	case strings.Contains(s, "平板"):
		return "tablet"
	case strings.Contains(s, "电脑") || strings.Contains(s, "笔记本"):
		return "computer"
	}
	return ""
}

func deviceKind(v string) string {
	l := strings.ToLower(v)
	switch {
	case strings.Contains(l, "iphone"), strings.Contains(l, "android"), strings.Contains(l, "pixel"), strings.Contains(l, "galaxy"), strings.Contains(l, "手机"), l == "安卓",
		phoneLine.MatchString(l):
		return "phone"
	case strings.Contains(l, "ipad"):
		return "tablet"
	case strings.Contains(l, "kindle"), strings.Contains(l, "kobo"):
		return "ereader"
	}
	return "computer"
}

// validJob rejects "I'm a big fan", "a bit tired": phrases with "a" that are no job.
func validJob(v string) bool {
	f := strings.Fields(strings.ToLower(v))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "bit", "little", "lot", "fan", "big", "huge", "few", "couple", "total", "vegetarian", "vegan", "pescatarian",
		"good", "great", "bad", "new", "proud", "happy", "very", "real", "true", "long", "mess", "part", "member", "person",
		"way", "chance", "while", "kind", "sort", "nice", "quick", "fun", "lucky", "lover", "huge fan",
		"diabetic", "asthmatic", "epileptic", "coeliac", "celiac", "insomniac", "smoker", "non-smoker", "beginner", "newbie":
		return false
	}
	return true
}

// jobNoun reports a phrase whose head looks like a job ("pastry chef", "UX researcher",
// "head of growth"): a noun of agency by its ending, or one of the common job nouns that
// have none. "a night owl", "a mom of two", "a morning person" are not jobs, and must not
// replace the speaker's role.
func jobNoun(v string) bool {
	f := strings.Fields(strings.ToLower(v))
	if len(f) == 0 {
		return false
	}
	head := f[len(f)-1]
	for i, w := range f {
		if i > 0 && (w == "of" || w == "at" || w == "for" || w == "in" || w == "with" || w == "on") {
			head = f[i-1]
			if f[0] == "head" || f[0] == "director" || f[0] == "chief" || f[0] == "vp" {
				return true
			}
			break
		}
	}
	if strings.ToUpper(head) == head && len(head) >= 2 { // CEO, CTO
		return true
	}
	for _, suf := range []string{"er", "or", "ist", "ian", "ant", "ent", "eer", "ect", "ic", "ive", "man", "woman", "ee", "ary", "ster"} {
		if strings.HasSuffix(head, suf) && len(head) > len(suf)+2 {
			switch head {
			case "lover", "member", "fan", "sister", "brother", "mother", "father", "daughter", "partner", "owner", "beginner",
				"vegetarian", "parent", "student", "patient", "introvert", "extrovert", "ambivert", "fanatic", "addict":
				return head == "student" || head == "owner"
			}
			return true
		}
	}
	switch head {
	case "nurse", "chef", "cook", "pilot", "clerk", "judge", "nanny", "intern", "surgeon", "coach", "tutor", "vet", "barista",
		"midwife", "paramedic", "priest", "pastor", "monk", "cashier", "dentist", "model", "artist", "soldier", "cop", "detective",
		"lead", "head", "sales", "ops", "freelance", "freelancer", "student", "owner", "founder", "postdoc", "resident", "fellow",
		"principal", "dean", "engineer", "staff", "officer", "agent", "clinician", "therapist", "pharmacist", "mechanic",
		"dev", "tech", "rep", "admin", "paralegal", "sre", "pm", "analyst":
		return true
	}
	return false
}

func article(v string) string {
	if v == "" {
		return ""
	}
	if strings.ContainsRune("aeiouAEIOU", rune(v[0])) {
		return "an "
	}
	return "a "
}

func badNameZH(v string) bool {
	for _, w := range []string{"今年", "明年", "去年", "现在", "已经", "刚刚", "最近", "每天", "下周", "上周", "今天", "明天", "昨天", "马上",
		"一直", "们", "也是", "还是", "就是", "总是", "小时", "今", "明", "现", "已", "刚", "每", "也", "都", "还", "很", "说", "要", "想", "在", "是", "和", "跟", "的", "得", "了",
		// A verb where a name would be ("我闺女学钢琴三年了"): what the relation does.
		"学", "去", "读", "练", "考", "住", "做", "当", "开", "打", "玩", "看", "吃", "喝", "有", "没", "不", "在", "给", "把", "被", "让", "又", "才", "快", "用",
		"调", "搬", "换", "回", "到", "来", "辞", "退", "升", "转", "跳", "离", "上",
		// The second character of a kinship word ("我姐姐住在…" read as 姐 + 姐住).
		"姐", "哥", "弟", "妹", "妈", "爸", "爷", "奶", "婆", "公",
		// A day or a part of one ("老大周日下午学跳舞").
		"周一", "周二", "周三", "周四", "周五", "周六", "周日", "周天", "周末", "星期", "礼拜", "上午", "下午", "晚上", "早上", "中午", "后天", "前天",
		// A time or a manner adverb ("我妈下个月要来", "我哥上次说").
		"下个", "上个", "这个", "这周", "这两", "这几", "那天", "前几", "过几", "本周", "本月", "年底", "月底", "年初", "月初", "春节", "国庆", "暑假", "寒假",
		"平时", "经常", "偶尔", "一般", "天天", "刚才", "突然", "终于", "居然", "其实", "真的", "特别", "非常", "比较", "这次", "上次", "下次", "第一", "好像", "可能", "应该"} {
		if strings.HasPrefix(v, w) {
			return true
		}
	}
	if monthOrDayZH.MatchString(v) {
		return true // "闺女九月上小学": a month, not a name
	}
	// A thing of the relation's where a name would be ("我妈家地址是…", "我老公手机号是…").
	if strings.HasPrefix(v, "家") {
		return true
	}
	for _, w := range []string{"地址", "电话", "手机", "生日", "工作", "公司", "学校", "单位", "身体", "脾气", "爱好", "名字", "微信", "邮箱", "号码"} {
		if strings.Contains(v, w) {
			return true
		}
	}
	return false
}

// orgWordEN is in the name of a school or another organisation, not of a place.
var orgWordEN = regexp.MustCompile(`(?i)\b(?:school|high|academy|college|university|institute|elementary|primary|secondary|prep|montessori|inc|ltd|llc|corp|company|center|centre|hospital|clinic)\b`)

// verbPlaceZH opens a verb phrase where a place would be.
var verbPlaceZH = regexp.MustCompile(`^(?:备考|准备|学习|复习|考|学|练|做|写|看|忙|等|找|读|上课|上班|加班|开会|减肥|健身|休息|养病|坐月子)`)

// monthOrDayZH is a month or a day of one: "九月", "3号".
var monthOrDayZH = regexp.MustCompile(`^(?:[一二三四五六七八九十]{1,3}|\d{1,2})(?:月|号|日)`)

// orgUnitZH ends the name of a shift or a unit of an organisation (not 东部, 西部).
var orgUnitZH = regexp.MustCompile(`(?:班|部门|[^东西南北中]部|组|科室|科|岗位?|团队|项目|处|室)(?:了|工作|上班)?$`)

func badPlaceZH(v string) bool {
	if verbPlaceZH.MatchString(v) {
		return true // "我在备考雅思": what the speaker is doing, not where
	}
	for _, w := range []string{"这里", "那里", "这边", "那边", "新家", "公司", "一起", "楼下", "楼上", "隔壁", "附近"} {
		if strings.HasPrefix(v, w) {
			return true
		}
	}
	// "调到白班", "调到市场部": a shift or a unit of the employer, not a place to live.
	if orgUnitZH.MatchString(v) {
		return true
	}
	return durationZH.MatchString(v) // "搬来半年" tells how long, not where

}

// objectKey is the slot of an attitude towards a thing ("I adore fresh figs", "can't eat
// figs anymore" → taste.fig), so that a later attitude to the same thing replaces the
// earlier one. Empty when the sentence holds no such clause.
func (o *Offline) objectKey(s string) string {
	c := o.lex.clauses
	s = clip(s)
	if m := c.tasteZH.FindStringSubmatch(s); m != nil && !zhNoThing[m[1]] {
		return "taste." + m[1]
	}
	if m := c.likeZH.FindStringSubmatch(s); m != nil && hasHan(s) {
		return "taste." + m[1]
	}
	m := c.tasteEN.FindStringSubmatch(s)
	if m == nil {
		m = c.favEN.FindStringSubmatch(s)
	}
	if m == nil {
		if m = c.noMoreEN.FindStringSubmatch(s); m == nil {
			if m = intoEN.FindStringSubmatch(s); m == nil {
				return ""
			}
		}
	}
	obj := strings.ToLower(m[1])
	if mm := measureEN.FindStringSubmatchIndex(s); mm != nil {
		// "a mug of cocoa": the thing is what the measure is of.
		obj = strings.ToLower(s[mm[2]:mm[3]])
	}
	// The noun phrase: leading determiners and qualities skipped, a verb of doing
	// ("watching", "eating") passed over, ended by a preposition or a conjunction. Its
	// head names the thing ("aged cheddar" → cheddar), unless the head is a generic word
	// ("Thai food" → thai).
	var words []string
	fs := strings.Fields(obj)
	for i, w := range fs {
		w = strings.Trim(w, ",.;!?")
		switch w {
		case "good", "great", "nice", "fresh", "hot", "cold", "spicy", "big", "little", "red", "white", "whole", "real",
			"homemade", "fried", "grilled", "raw", "aged", "any", "some", "more", "of", "my", "our", "your", "their", "a", "an", "the":
			if len(words) == 0 {
				continue
			}
		case "it", "that", "this", "them", "those", "these", "to", "with", "and", "or", "when", "how", "in", "on", "at", "for",
			"anymore", "now", "every", "too", "so", "because", "but", "online", "outside", "outdoors", "together", "alone",
			"here", "there", "daily", "often", "lately", "nowadays", "sometimes", "again", "much", "lot", "all", "most":
			if len(words) == 0 && (w == "it" || w == "that" || w == "this" || w == "them") {
				return ""
			}
		default:
			if len(words) == 0 && strings.HasSuffix(w, "ing") && i+1 < len(fs) || strings.Trim(w, "0123456789") == "" {
				continue
			}
			words = append(words, singular(w))
			continue
		}
		if len(words) > 0 {
			break
		}
	}
	if len(words) == 0 {
		return ""
	}
	head := words[len(words)-1]
	switch head {
	case "food", "dish", "dishe", "cuisine", "music", "movie", "film", "show", "book", "game", "song", "place", "restaurant", "stuff", "thing",
		"class", "classe", "lesson", "session", "club", "team", "practice":
		if len(words) > 1 {
			head = words[0]
		}
	}
	if len(head) < 3 {
		return ""
	}
	return "taste." + slugify(head)
}

// intoEN is a liking told with "into" ("I'm really into bouldering", "not into jazz anymore").
var intoEN = regexp.MustCompile(`(?i)\b(?:i'm|i am|we're|we are)\s+(?:not\s+|no longer\s+)?(?:really\s+|so\s+|very\s+|totally\s+|big\s+|quite\s+|also\s+)?into\s+((?:[a-z0-9-]+\s+){0,2}[a-z0-9-]+)`)

// measureEN is a quantity of a thing ("a mug of cocoa", "a bowl of ramen").
var measureEN = regexp.MustCompile(`(?i)\b(?:glass|cup|mug|bowl|slice|piece|plate|bottle|pint|bag|box|bite|scoop|serving|pot)s?\s+of\s+((?:[a-z-]+\s+){0,2}[a-z-]+)`)

// planKey is the slot of a dated plan or appointment ("my dentist appointment is on …",
// "面试改到…"), so that a moved date replaces the first one. Empty without a date. The
// slot is plan.<what>, with .<qualifier> when the sentence says which one ("my Initrode
// interview", "interview with Initrode", "去大理的高铁" → plan.interview.initrode,
// plan.高铁.大理): a revision that names only the kind ("高铁改到…") meets the one of
// its kind (see the resolver's slot rules), two named plans of a kind stay apart.
func (o *Offline) planKey(s string, ref time.Time) string {
	c := o.lex.clauses
	s = clip(s)
	dated := len(o.lex.temporal.Find(s, ref)) > 0 || absDate.MatchString(s) || dayName.MatchString(s)
	if !dated {
		return ""
	}
	if k := o.visitKey(s); k != "" {
		return k
	}
	loc := c.planZH.FindStringSubmatchIndex(s)
	if loc == nil {
		loc = planGoZH.FindStringSubmatchIndex(s)
	}
	if loc != nil {
		what := s[loc[2]:loc[3]]
		head := planHeadZH.FindString(what)
		qual := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(what, head), "我的"), "我"), "的"), "之")
		qual = strings.TrimLeft(qual, "去到飞回坐")
		if qual == "" || utf8.RuneCountInString(qual) > 4 {
			return "plan." + head
		}
		return "plan." + head + "." + qual
	}
	m := c.planEN.FindStringSubmatch(s)
	if m == nil {
		m = c.planHaveEN.FindStringSubmatch(s)
	}
	if m == nil {
		m = c.planMovedEN.FindStringSubmatch(s)
	}
	if m != nil && !planNotThing[strings.ToLower(m[1])] {
		f := strings.Fields(strings.ToLower(m[1]))
		head := f[len(f)-1]
		qual := ""
		if len(f) > 1 && !planGenericEN[f[0]] {
			qual = f[0]
		} else if q := planWithEN.FindStringSubmatch(s[strings.Index(s, m[1])+len(m[1]):]); q != nil {
			qual = strings.ToLower(q[1])
		}
		if qual == "" {
			return "plan." + slugify(head)
		}
		return "plan." + slugify(head) + "." + slugify(qual)
	}
	if m := planLeadEN.FindStringSubmatch(s); m != nil && !pronounLeadEN.MatchString(m[1]) {
		// "dentist appointment tomorrow at 3": a dated plan told by its noun alone.
		f := strings.Fields(strings.ToLower(m[1]))
		if head := f[len(f)-1]; eventNounsEN[head] {
			if len(f) > 1 {
				return "plan." + slugify(head) + "." + slugify(strings.Join(f[:len(f)-1], " "))
			}
			return "plan." + slugify(head)
		}
	}
	if m := planIsOnEN.FindStringSubmatch(s); m != nil && !planNotThing[strings.ToLower(m[1])] {
		// "Sports day is on the 23rd": whatever is dated, named by its noun.
		f := strings.Fields(strings.ToLower(strings.ReplaceAll(m[1], "-", " ")))
		head := f[len(f)-1]
		if !notEventHeadEN[head] && !kinLeadEN.MatchString("my "+head) {
			if len(f) > 1 {
				return "plan." + slugify(head) + "." + slugify(strings.Join(f[:len(f)-1], " "))
			}
			return "plan." + slugify(head)
		}
	}
	if m := planArriveEN.FindStringSubmatch(s); m != nil {
		// "My new couch is supposed to arrive on Friday": the delivery of the thing, the
		// slot "the couch delivery got pushed to …" fills too.
		f := strings.Fields(strings.ToLower(m[1]))
		return "plan.delivery." + slugify(f[len(f)-1])
	}
	return ""
}

// planLeadEN is a sentence that opens with a plan's noun and goes on with its day.
var planLeadEN = regexp.MustCompile(`(?i)^(?:(?:my|our|the)\s+)?((?:(?:i|we|you|he|she|they|it|i'm|we're)\s+)?(?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:tomorrow|tonight|today|this\s+\w+|next\s+\w+|on\s+\w+|at\s+\d|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)

// pronounLeadEN opens a clause with its subject pronoun: "I play Sunday league" is no plan
// named by its noun.
var pronounLeadEN = regexp.MustCompile(`(?i)^(?:i|we|you|he|she|they|it|i'm|we're)\s`)

// planIsOnEN is a thing told with its day, at the head of the sentence ("Parent-teacher
// evening is on the 19th", "Our street party's next Saturday").
var planIsOnEN = regexp.MustCompile(`^(?i:(?:the|our|my)\s+)?((?:[\p{L}-]+\s+){0,2}[\p{L}-]{3,})(?i:\s+is|\s+are|'s)\s+(?i:now\s+|still\s+|actually\s+)?(?i:on|this|next|tomorrow|today|tonight)\b`)

// notEventHeadEN are heads of a sentence that name no event ("it's on Friday", "she is
// on the 3rd").
var notEventHeadEN = map[string]bool{"it": true, "that": true, "this": true, "he": true, "she": true, "they": true,
	"we": true, "i": true, "there": true, "what": true, "which": true, "who": true, "everything": true, "nothing": true,
	"weather": true, "forecast": true, "heating": true, "light": true, "tv": true}

// planArriveEN is a thing the speaker awaits, told by its arrival.
var planArriveEN = regexp.MustCompile(`(?i:\b(?:my|our|the)\s+)((?i:[a-z-]+\s+)?(?i:[a-z-]{3,}))\s+(?i:is\s+supposed\s+to\s+(?:arrive|be\s+delivered|ship)|should\s+(?:arrive|ship|be\s+delivered)|is\s+(?:arriving|shipping|coming)|arrives|will\s+(?:arrive|ship|be\s+delivered)|is\s+due\s+to\s+arrive|is\s+being\s+delivered|gets\s+delivered|is\s+getting\s+delivered|ships)\b`)

var (
	// planGoZH is a plan told by going to it: "下周三我要去面试", "约了周五复查".
	planGoZH   = regexp.MustCompile(`(?:要去|得去|去|约了|安排了|有个|有一个|有场|有一场)(\p{Han}{0,4}?(?:面试|面签|考试|会议|预约|手术|体检|聚会|婚礼|约会|复查|演出|答辩|发布会|出差))`)
	planHeadZH = regexp.MustCompile(`(?:面试|面签|航班|考试|会议|预约|手术|体检|聚会|婚礼|截止日期|约会|复查|演出|答辩|发布会|出差|旅行|行程|飞机|火车|高铁)$`)
	// planWithEN names which plan after its noun: "call with Acme", "appointment at the clinic".
	planWithEN = regexp.MustCompile(`^\s+(?i:with|at)\s+(?:(?i:the|my|our|dr\.?)\s+)?(\p{Lu}[\p{L}'-]+|[a-z]{3,})`)
	// planGenericEN are modifiers that do not tell one plan from another of its kind.
	// planNotThing are words planHaveEN and planMovedEN take that name no event.
	planNotThing = map[string]bool{"lot": true, "bit": true, "few": true, "couple": true, "time": true, "day": true,
		"week": true, "chance": true, "feeling": true, "idea": true, "way": true, "car": true, "house": true}
	planGenericEN = map[string]bool{"next": true, "big": true, "first": true, "new": true, "upcoming": true, "last": true,
		"final": true, "important": true, "own": true, "little": true, "annual": true, "weekly": true, "monthly": true}
)

// habitKey is the slot of something the speaker does regularly or has stopped doing ("我每周
// 都去爬山" / "我不再爬山了", "I usually swim on Sundays" / "I no longer swim"), so that
// giving a habit up replaces it: habit.<verb>[.<object>]. Empty when s states no habit.
func (o *Offline) habitKey(s string) string {
	c := o.lex.clauses
	s = clip(s)
	if hasHan(s) {
		for _, cl := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("，,。；;！!？?", r) }) {
			// The speaker must be the one who does it: 我 before the habit word, in its
			// clause or an earlier one (Chinese drops the repeated subject), and no one
			// else named in between.
			loc := habitZH.FindStringIndex(cl)
			if loc == nil {
				continue
			}
			before := s[:strings.Index(s, cl)+loc[0]]
			me := strings.LastIndex(before, "我")
			if me < 0 && !strings.ContainsAny(s, "我他她它你您") && !c.relAnyZH.MatchString("我"+s) {
				// No one named at all: Chinese dropped the speaker as subject.
				me = 0
			}
			if me < 0 || c.relAnyZH.MatchString(before[me:]) || strings.ContainsAny(before[me:], "他她它") {
				continue
			}
			// The thing is what follows the habit word ("经常去爬山"), or, when nothing
			// does ("滑雪不再去了"), the topic before it.
			after := []rune(strings.Trim(strings.TrimRight(cl[loc[1]:], "了啦呢吧啊呀 "), "去来再做玩"))
			if !twoHan(after) {
				after = []rune(strings.TrimRight(cl[:loc[0]], "也都就还 "))
			}
			if !twoHan(after) {
				continue
			}
			return "habit." + string(after[len(after)-2:])
		}
		return ""
	}
	// "on Mondays", "on Monday evenings" recur as "every Monday" does.
	m := habitEN.FindStringSubmatch(onWeekdaysEN.ReplaceAllString(s, "every $1$2"))
	if m == nil {
		return ""
	}
	verb := m[1] + m[3] + m[5]
	obj := m[2] + m[4] + m[6]
	if f := strings.Fields(verb); len(f) == 2 {
		// "gave up my guitar lessons": the determiner is not the thing.
		verb = f[1]
	}
	if v := strings.ToLower(verb); v == "go" || v == "went" {
		if f := strings.Fields(obj); len(f) > 0 && strings.HasSuffix(f[0], "ing") {
			verb, obj = f[0], strings.Join(f[1:], " ")
		}
	}
	switch strings.ToLower(verb) {
	case "work", "live", "be", "am", "is", "are", "have", "stay", "want", "need", "like", "love", "know", "think":
		return "" // the slots of identity and taste, not habits
	}
	key := "habit." + slugify(verbStem(strings.ToLower(verb)))
	// The direct object, if any: determiners are skipped, a preposition or an adverb ends it.
	for _, w := range strings.Fields(strings.ToLower(obj)) {
		switch w {
		case "a", "an", "the", "my", "our", "his", "her", "their", "your", "its", "some", "any", "more", "much":
			continue
		case "to", "every", "each", "on", "in", "at", "with", "for", "before", "after", "anymore", "now", "again",
			"often", "daily", "regularly", "together", "it", "them", "that", "this", "when", "because", "since", "and", "but",
			// A quantity or a time is not the thing done ("smoke about half a pack", "quit three weeks ago").
			"about", "around", "like", "roughly", "nearly", "almost", "half", "over", "up", "once", "twice", "one", "two",
			"three", "four", "five", "six", "few", "couple", "last", "next", "ago", "years", "months", "weeks", "days",
			"cold", "altogether", "completely", "entirely", "recently", "finally", "already", "yesterday", "today", "while":
		default:
			key += "." + slugify(strings.TrimSuffix(w, "s"))
		}
		break
	}
	return key
}

// twoHan reports rs ending in two Han characters.
func twoHan(rs []rune) bool {
	return len(rs) >= 2 && unicode.Is(unicode.Han, rs[len(rs)-1]) && unicode.Is(unicode.Han, rs[len(rs)-2])
}

var (
	negatedHabit = regexp.MustCompile(`不|没|别|\b(?:no|not|don't|never|stopped|quit|can't|cannot|won't|anymore)\b`)
	habitZH      = regexp.MustCompile(`每天|每晚|每周|每个?(?:周末|早上|晚上|月|星期)|经常|总是|一直都|平时|通常|现在都|如今都|现在一般|一般都|基本都|不再|再也不|已经不|戒了|不能再?|不会再|没法再|不[练学弹玩打踢跑游骑画唱跳追]了`)
	// habitEN: "I (always|usually …) V O", "I V O every day", "I no longer V O", "I don't V
	// O anymore", "I stopped V-ing O". Groups 1-2, 3-4, 5-6 are the verb and its object.
	habitEN = regexp.MustCompile(`(?i)\b(?:i|we)\s+(?:(?:always|usually|often|normally|regularly|generally|still|only|mostly|mainly)\s+|no longer\s+|(?:don't|do not|can't|cannot|won't)\s+)([a-z]+)((?:\s+[a-z'-]+){0,3})|\b(?:i|we)\s+([a-z]+)((?:\s+[a-z'-]+){0,4}?)\s+(?:every|each|a|per)\s+(?:day|morning|evening|night|week|weekend|month|sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b|\b(?:i|we)\s+(?:have\s+|had\s+)?(?:stopped|quit|gave up|given up)\s+(?:on\s+)?((?:my\s+|the\s+|our\s+)?[a-z]+)((?:\s+[a-z'-]+){0,2})`)
)

var onWeekdaysEN = regexp.MustCompile(`(?i)\bon\s+(?:(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s|(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+(?:mornings|evenings|nights|afternoons))\b`)

// verbStem is the base of an English verb or gerund, enough to meet its other forms
// ("running", "runs" → "run").
func verbStem(v string) string {
	switch {
	case strings.HasSuffix(v, "ing") && len(v) > 5:
		v = strings.TrimSuffix(v, "ing")
		if n := len(v); n >= 2 && v[n-1] == v[n-2] && !strings.ContainsRune("aeioulsz", rune(v[n-1])) {
			v = v[:n-1]
		}
	case strings.HasSuffix(v, "es") && len(v) > 4 && strings.ContainsAny(v[len(v)-3:len(v)-2], "shxz"):
		v = strings.TrimSuffix(v, "es")
	case strings.HasSuffix(v, "s") && !strings.HasSuffix(v, "ss") && len(v) > 3:
		v = strings.TrimSuffix(v, "s")
	}
	// A final e comes and goes with the ending (smoke, smoking): drop it.
	if len(v) > 3 && strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee") {
		v = strings.TrimSuffix(v, "e")
	}
	return v
}

// dayName is a weekday named alone ("on Tuesday", "是周四"): a plan's day, though
// without a week it is not rewritten to a date.
var dayName = regexp.MustCompile(`(?i)\b(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|(?:周|星期|礼拜)[一二三四五六日天]`)

// absDate is a written date: "March 15", "15 March", "3月15日", "2026-03-15", "the 20th".
var absDate = regexp.MustCompile(`(?i)\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|\d{1,2}\s*月\s*\d{1,2}\s*[日号]?|\b\d{4}-\d{2}-\d{2}\b|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}\s*[日号]`)

// procedure recognises a routine ("always X before Y", "每次 X 前先 Y", "first X, then Y")
// and returns its memory; ok is false when s states none.
func (o *Offline) procedure(s string) (fact, bool) {
	c := o.lex.clauses
	s = clip(s)
	if hasHan(s) {
		if m := c.procZH.FindStringSubmatch(s); m != nil {
			return fact{key: "procedure." + trimEnd(m[1]), content: "用户的流程：每次" + m[1] + "前，先" + trimEnd(m[2]),
				cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
		}
		if m := c.procRuleZH.FindStringSubmatch(s); m != nil {
			return fact{key: "procedure." + trimEnd(m[1]), content: "用户的流程：" + m[1] + "之前，先" + trimEnd(m[2]),
				cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
		}
		if loc := c.procStepsZH.FindStringSubmatchIndex(s); loc != nil && !o.lex.event.MatchString(s) {
			// The clause before the steps says when they apply ("出差报销时，先…再…").
			when := strings.TrimRight(strings.TrimSpace(s[:loc[0]]), "，,：: ")
			if when != "" {
				when = o.pronounsOf(when) + "，"
			}
			return fact{content: "用户的步骤：" + when + "先" + s[loc[2]:loc[3]] + "，再" + trimEnd(s[loc[4]:loc[5]]), cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
		}
		return fact{}, false
	}
	if m := c.procBefore3EN.FindStringSubmatch(s); m != nil && !c.procBefore2EN.MatchString(s) {
		return fact{key: "procedure." + slugify(firstWords(m[1], 3)), content: "The user's routine: before " + m[1] + ", " + o.pronounsEN(trimEnd(m[2]), true),
			cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
	}
	if m := c.procBeforeImpEN.FindStringSubmatch(s); m != nil && !c.procBefore2EN.MatchString(s) && !c.procBefore3EN.MatchString(s) && orderVerb(m[2]) && !strings.HasSuffix(strings.TrimSpace(s), "?") {
		return fact{key: "procedure." + slugify(firstWords(m[1], 3)), content: "The user's routine: before " + m[1] + ", " + o.pronounsEN(trimEnd(m[2]), true),
			cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
	}
	if m := c.procBefore2EN.FindStringSubmatch(s); m != nil {
		return fact{key: "procedure." + slugify(firstWords(m[1], 3)), content: "The user's routine: before " + o.pronounsEN(m[1], true) + ", " + o.pronounsEN(trimEnd(m[2]), true),
			cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
	}
	if m := c.procBeforeEN.FindStringSubmatch(s); m != nil {
		return fact{key: "procedure." + slugify(firstWords(m[2], 3)), content: "The user's routine: before " + o.pronounsEN(trimEnd(m[2]), true) + ", first " + o.pronounsEN(m[1], true),
			cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
	}
	// "First X, then Y" is a procedure unless it tells what happened ("first we went …").
	if c.procStepsEN.MatchString(s) && !o.lex.event.MatchString(lowerText(s)) {
		return fact{content: "The user's steps: " + o.pronounsEN(lowerFirst(trimEnd(s)), true), cat: memory.CatSkill, typ: memory.Procedural, imp: impPreference}, true
	}
	return fact{}, false
}

// toldSteps recognises steps announced as such ("…, so this is the process: do X, send Y,
// then Z", "报销的流程是：…"). It reads the whole sentence: what the steps are for is told
// before the label, and a "you" inside the steps is anyone doing them, not the listener.
func (o *Offline) toldSteps(s string, ref time.Time) (draft, bool) {
	c := o.lex.clauses
	s = clip(o.clean(s))
	var f fact
	if loc := c.procToldZH.FindStringSubmatchIndex(s); hasHan(s) && loc != nil && strings.ContainsAny(s[loc[2]:loc[3]], "，,、；;") {
		when := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(s[:loc[0]]), "，,：: "), "的")
		if when != "" {
			when = o.pronounsOf(when) + "："
		}
		f = fact{content: "用户的步骤：" + when + trimEnd(s[loc[2]:loc[3]])}
	} else if loc := c.procToldEN.FindStringSubmatchIndex(s); !hasHan(s) && loc != nil && strings.Contains(s[loc[4]:loc[5]], ",") &&
		orderVerb(s[loc[4]:loc[5]]) {
		// What the steps are for is told in the label ("the process for new hires") or
		// before it ("Invoices go out on Mondays, so here is the drill: …").
		content := "The user's steps"
		if loc[2] >= 0 {
			content += " for " + o.pronounsEN(s[loc[2]:loc[3]], true)
		}
		if when := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(s[:loc[0]]), ",;: "), " and"); when != "" {
			content += " (" + o.pronounsEN(lowerFirst(strings.TrimRight(when, ",; ")), true) + ")"
		}
		f = fact{content: content + ": " + o.pronounsEN(trimEnd(s[loc[4]:loc[5]]), true)}
	} else if lead, items := numberedSteps(s); len(items) >= 2 {
		// "When you release: 1) tag it 2) build 3) announce" — numbered steps.
		if hasHan(s) {
			content := "用户的步骤："
			if lead != "" {
				content += o.pronounsOf(lead) + "："
			}
			f = fact{content: content + strings.Join(items, "，然后"), asTold: true}
		} else {
			for _, it := range items {
				if !orderVerb(it) {
					return draft{}, false
				}
			}
			content := "The user's steps"
			if lead != "" {
				content += " (" + o.pronounsEN(lowerFirst(lead), true) + ")"
			}
			last := len(items) - 1
			if !strings.HasPrefix(strings.ToLower(items[last]), "then ") {
				items[last] = "then " + items[last]
			}
			f = fact{content: content + ": " + o.pronounsEN(strings.Join(items, ", "), true), asTold: true}
		}
	} else {
		return draft{}, false
	}
	f.cat, f.typ, f.imp = memory.CatSkill, memory.Procedural, impPreference
	d := o.factDraft(f, ref, "procedure")
	d.confidence = confInstruction
	d.meta["instruction"] = true
	return d, true
}

// stepMarker numbers a step in a list written on one line: "1)", "2.", "(3)", "4、",
// "step 2:", "第三步".
var stepMarker = regexp.MustCompile(`(?i)(?:^|[\s:：,，;；])(?:\(?\d{1,2}[).、）]|（\d{1,2}）|step\s+\d{1,2}\s*[:.]?|第[一二三四五六七八九十]步[，,：:]?)\s*`)

// numberedSteps splits s into what its numbered steps are for (the text before the first
// number) and the steps, in order; a list needs two steps at least, numbered from 1.
func numberedSteps(s string) (lead string, items []string) {
	locs := stepMarker.FindAllStringIndex(s, -1)
	if len(locs) < 2 {
		return "", nil
	}
	first := strings.TrimLeft(s[locs[0][0]:locs[0][1]], " \t:：,，;；(（")
	if !strings.HasPrefix(first, "1") && !strings.HasPrefix(strings.ToLower(first), "step 1") && !strings.HasPrefix(first, "第一") {
		return "", nil
	}
	lead = strings.TrimRight(strings.TrimSpace(s[:locs[0][0]]), ":：,， ")
	for i, loc := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		it := strings.TrimSpace(trimEnd(strings.TrimRight(strings.TrimSpace(s[loc[1]:end]), ",，;；、")))
		it = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(it, "and "), "然后"))
		if it == "" {
			return "", nil
		}
		items = append(items, it)
	}
	return lead, items
}

// ruleToldEN and ruleToldZH are a rule announced by its label: "New rule for the weekly
// report: tables only, no charts", "新规矩：周报一律用表格".
var (
	ruleToldEN = regexp.MustCompile(`(?i)^(?:(?:new|one|house|my|our|a|the|standing|small)\s+)*(?:rule|rules|policy|convention)(?:\s+(?:for|on|about|with)\s+([^:]{2,50}))?\s*:\s*(.{4,})$`)
	ruleToldZH = regexp.MustCompile(`^(?:新|一条|我的|我们的)?(?:规矩|规则)(?:是)?[:：]\s*(.{4,})$`)
)

// toldRule is a rule the speaker announces by its label, a standing preference in the
// slot of its topic, so that a later rule about the same thing replaces it.
func (o *Offline) toldRule(s string, ref time.Time) (draft, bool) {
	s = strings.TrimSpace(s)
	var content string
	if m := ruleToldZH.FindStringSubmatch(s); m != nil {
		content = "用户的规矩：" + trimEnd(m[1])
	} else if m := ruleToldEN.FindStringSubmatch(s); m != nil {
		content = "The user's rule"
		if m[1] != "" {
			content += " for " + o.pronounsEN(m[1], true)
		}
		content += ": " + o.pronounsEN(trimEnd(m[2]), true)
	} else {
		return draft{}, false
	}
	return draft{typ: memory.Semantic, cat: memory.CatPreference, key: o.topics.key(lowerText(s)), content: o.finish(content, ref),
		importance: impPreference, confidence: confInstruction, rule: "rule", meta: map[string]any{"instruction": true}}, true
}

// orderVerb reports a clause that opens with a verb, as an order does ("run the tests"),
// rather than with a subject ("I get nervous", "the office closes").
func orderVerb(s string) bool {
	w := strings.ToLower(strings.Fields(s)[0])
	switch w {
	case "i", "we", "you", "he", "she", "they", "it", "there", "the", "a", "an", "my", "our", "this", "that", "i'm", "we're",
		"it's", "everyone", "someone", "nobody", "people", "is", "was", "are", "were",
		// A question or a reply is no order ("before you go, can you …").
		"can", "could", "would", "will", "should", "do", "does", "did", "what", "how", "why", "where", "when", "who", "which",
		"thanks", "thank", "yes", "yeah", "no", "ok", "okay", "sure", "oh", "wait", "hmm":
		return false
	}
	return !strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "'s")
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	var out []string
	for _, w := range f {
		switch strings.ToLower(w) {
		case "the", "a", "an", "we", "i", "you", "our", "my", "any", "every", "each":
			continue
		}
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, " ")
}

// addClauses completes the rule memories ds of sentence s with its clause facts: a fact in
// a slot ds does not fill is added; a keyless preference or constraint about a thing gets
// the thing's slot, a dated plan its plan slot; a routine replaces a looser reading.
func (o *Offline) addClauses(ds []draft, s string, ref time.Time) []draft {
	s = o.clean(s)
	if s == "" {
		return ds
	}
	if f, ok := o.procedure(s); ok && !o.lex.aboutListener(s) {
		d := o.factDraft(f, ref, "procedure")
		d.confidence = confInstruction
		d.meta["instruction"] = true
		return []draft{d}
	}
	facts := o.clauseFacts(s, ref)
	keys := map[string]bool{}
	for _, d := range ds {
		if d.key != "" {
			keys[d.key] = true
		}
	}
	if len(facts) > 0 {
		// A revision the clause rules told slot by slot needs no memory of its own: it
		// would keep the old value ("no longer at X, now at Y") outside the slot. So
		// does a keyless reading of a sentence that denies a former state.
		denies := deniedClause.MatchString(s)
		// A keyless reading beside a fact in a slot that changes ("my whole setup is a
		// <laptop>") would keep the value outside the slot when it changes: the slot's
		// memory takes the whole sentence instead (the detail, below).
		slotted := false
		for _, f := range facts {
			if changeable([]draft{{key: f.key}}) == 0 {
				slotted = true
			}
		}
		// "relation.son" beside "relation.son.allergy.peanuts": the finer slot tells it.
		relFiner := slices.ContainsFunc(facts, func(f fact) bool {
			return strings.Count(f.key, ".") >= 2 && strings.HasPrefix(f.key, "relation.") && !strings.HasSuffix(f.key, ".name")
		})
		kept := ds[:0]
		for _, d := range ds {
			loose := d.key == "" && d.typ == memory.Semantic && (d.rule == "identity" || d.rule == "preference")
			if attr, ok := strings.CutPrefix(d.key, "user.attr."); ok && d.rule == "identity" {
				// "user.attr.shipping_address" beside "user.address": the slot tells it.
				loose = loose || slices.ContainsFunc(facts, func(f fact) bool {
					i := strings.LastIndex(f.key, ".")
					return i >= 0 && strings.Contains(attr, f.key[i+1:])
				})
			}
			if d.rule == "identity" && strings.HasPrefix(d.key, "relation.") && relFiner {
				// Only a coarser slot gives way ("relation.son" to "relation.son.allergy.x"),
				// not the same slot the clause rules fill too.
				loose = loose || slices.ContainsFunc(facts, func(f fact) bool { return strings.HasPrefix(f.key, d.key+".") })
			}
			if d.rule != "revision" && !(denies && d.key == "") && !(slotted && loose) {
				kept = append(kept, d)
			}
		}
		ds = kept
		// A slot whose reading was dropped is free for its clause fact.
		clear(keys)
		for _, d := range ds {
			if d.key != "" {
				keys[d.key] = true
			}
		}
	}
	// A taste or rule told of a relation ("我老婆不吃辣") lives in the relation's slots, so
	// that it neither replaces the speaker's own nor is replaced by it.
	relWho, relTold := o.lex.clauses.relationSubject(s), false
	for _, d := range ds {
		relTold = relTold || relWho != "" && (d.cat == memory.CatPreference || d.cat == memory.CatConstraint)
	}
	for _, f := range facts {
		if relTold && (strings.Contains(f.key, ".taste.") || strings.Contains(f.key, ".allergy.")) {
			continue
		}
		if f.replace {
			// A move is told better by its rule than by the identity reading of "I moved
			// to X"; keep the other slots.
			kept := ds[:0]
			for _, d := range ds {
				if d.key != f.key {
					kept = append(kept, d)
				}
			}
			ds = kept
			delete(keys, f.key)
		}
		if keys[f.key] {
			continue
		}
		keys[f.key] = true
		ds = append(ds, o.factDraft(f, ref, "clause"))
	}
	for i := range ds {
		d := &ds[i]
		if d.key == "user.status" || strings.HasPrefix(d.key, "user.attr.") {
			// A dated plan ("面试改到下周四") is more than a passing state: its slot lets a
			// later change of the plan replace it.
			if k := o.planKey(s, ref); k != "" {
				d.key = k
			}
		}
		if d.key != "" || d.typ != memory.Semantic {
			continue
		}
		switch d.cat {
		case memory.CatPreference, memory.CatConstraint:
			if d.rule == "revision" {
				// A revision is keyed by what it gives up ("滑雪不去了，改学潜水"):
				// that is the slot whose old value it replaces.
				d.key = o.habitKey(s)
			}
			if d.key == "" {
				d.key = o.objectKey(s)
			}
			if d.key == "" && d.rule == "revision" {
				// "go back to English for everything": the topic's slot.
				d.key = o.topics.key(lowerText(s))
			}
		}
		if d.key == "" && (d.cat == memory.CatFact || d.cat == memory.CatConstraint || d.cat == memory.CatPreference) {
			d.key = o.planKey(s, ref)
		}
		if d.key == "" && (d.cat == memory.CatConstraint || d.cat == memory.CatPreference) {
			d.key = o.habitKey(s)
		}
	}
	if relTold {
		for i := range ds {
			if k := ds[i].key; k != "" && !strings.HasPrefix(k, "relation.") && (ds[i].cat == memory.CatPreference || ds[i].cat == memory.CatConstraint) {
				ds[i].key = "relation." + relWho + "." + k
			}
		}
	}
	if len(ds) == 0 && !negatedHabit.MatchString(lowerText(s)) {
		// A habit no other rule took ("我每晚都练琴", "I swim every Sunday") is a
		// standing fact about the speaker, in the slot its giving up would fill.
		if key := o.habitKey(s); key != "" && o.planKey(s, ref) == "" {
			d := o.draft(s, ref, memory.Semantic, memory.CatPreference, "habit", impPreference, confExplicit)
			// A habit about a known topic lives in the topic's slot (drink.tea), where a
			// later preference or constraint about it lands too.
			if k := o.topics.key(lowerText(s)); k != "" {
				key = k
			} else if m := o.lex.clauses.habitFoodZH.FindStringSubmatch(s); m != nil && hasHan(s) {
				key = "taste." + m[1]
			}
			d.key = key
			return append(ds, d)
		}
	}
	if len(ds) == 0 {
		// A dated plan no other rule took ("my flight is on Friday", "面试改到3月20日").
		if key := o.planKey(s, ref); key != "" {
			d := o.draft(s, ref, memory.Semantic, memory.CatEvent, "plan", impState, confEvent)
			d.key, d.expire = key, o.expiry(s, ref)
			ds = append(ds, d)
		}
	}
	return ds
}

func (o *Offline) factDraft(f fact, ref time.Time, rule string) draft {
	content := f.content
	if !f.asTold {
		content = o.finish(content, ref)
	}
	return draft{typ: f.typ, cat: f.cat, key: f.key, content: content, importance: f.imp,
		confidence: confExplicit, rule: rule, meta: map[string]any{}}
}

// narrative is the episodic memory of a turn's statements about the speaker that no rule
// took: what they did, plan, feel or have, in the third person with dates made absolute.
func (o *Offline) narrative(story []string, ref time.Time) (draft, bool) {
	var parts []string
	zh := false
	for _, s := range story {
		s = o.clean(s)
		if s == "" {
			continue
		}
		if hasHan(s) {
			zh = true
			parts = append(parts, o.thirdPersonZH(s, memory.CatEvent, "event"))
			continue
		}
		if droppedSubjectEN.MatchString(s) {
			// "Just got back from …": the subject dropped is the speaker.
			s = "I " + lowerFirst(s)
		}
		parts = append(parts, upperFirst(o.pronounsEN(s, false)))
	}
	if len(parts) == 0 || !o.newsworthy(story, ref) {
		return draft{}, false
	}
	sep := ". "
	if zh {
		sep = "。"
	}
	content := strings.Join(parts, sep)
	d := draft{typ: memory.Episodic, cat: memory.CatEvent, content: o.finish(content, ref), importance: impEvent,
		confidence: confEvent, rule: "event", meta: map[string]any{}}
	if len(story) == 1 && (!zh && presentSelfEN.MatchString(o.clean(story[0])) && !o.lex.event.MatchString(lowerText(story[0])) ||
		zh && presentSelfZH.MatchString(restoreSubjectZH(o.clean(story[0])))) {
		// What the speaker does as a rule is a standing fact: a later change can replace it.
		d.typ, d.cat, d.rule, d.importance = memory.Semantic, memory.CatFact, "self", impState
	}
	if len(story) == 1 {
		if rel, key := o.relationStanding(o.clean(story[0])); rel != "" {
			// What a relation does as a rule is theirs and lasts: a later change of it can
			// replace it where it has a slot.
			d.typ, d.cat, d.rule, d.importance, d.key = memory.Semantic, memory.CatRelationship, "relation", impState, key
		}
	}
	if whole := lowerText(strings.Join(story, " ")); recurring.MatchString(whole) && !pastTense.MatchString(whole) {
		// A timetable ("lessons are on Tuesdays at 5", "每周三晚上练琴") is a standing fact:
		// when it moves, the new one replaces it, where an event would stand beside it.
		d.typ, d.cat, d.rule, d.importance = memory.Semantic, memory.CatFact, "routine", impState
	}
	d.expire = o.expiry(strings.Join(story, " "), ref)
	return d, true
}

// newsworthy reports a story that holds news rather than a passing remark ("Makes me
// happy."): an event, plan or possession of the speaker, a date, or a long enough account.
func (o *Offline) newsworthy(story []string, ref time.Time) bool {
	s := strings.Join(story, " ")
	if o.lex.event.MatchString(lowerText(s)) || len(o.lex.temporal.Find(s, ref)) > 0 ||
		(len(story) == 1 && (presentSelfEN.MatchString(o.clean(s)) || presentSelfZH.MatchString(restoreSubjectZH(o.clean(s))))) {
		return true
	}
	if rel, _ := o.relationStanding(o.clean(s)); len(story) == 1 && rel != "" {
		return true
	}
	han := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	return han >= minStoryHan || len(strings.Fields(s)) >= minStoryWords
}

// Chosen on the LoCoMo dev conversations (conv-26, conv-30): shorter stories without an
// event rarely hold an annotated observation.
const (
	minStoryWords = 10
	minStoryHan   = 8
)

// relationNameKey turns the slot of "my wife's name is …" / "我的老板叫…" into the
// relation's name slot (relation.wife.name), the one the clause rules fill, so both
// readings of a sentence meet and a later name replaces an earlier one.
func (o *Offline) relationNameKey(key, attr, clause, value string) string {
	if !strings.HasPrefix(key, "relation.") {
		return key
	}
	a := withoutWhichLead(strings.ToLower(strings.TrimSpace(attr)))
	named := strings.HasSuffix(a, " name") || strings.HasSuffix(a, "'s name") || strings.Contains(clause, a+"叫")
	lv := strings.ToLower(value)
	if !named && ((strings.HasPrefix(lv, "a ") || strings.HasPrefix(lv, "an ")) && jobNoun(strings.SplitN(lv, " ", 2)[1]) ||
		hasHan(value) && jobLikeZH.MatchString(value)) {
		// "my husband is a nurse" / "我爸是医生": the relation's job slot, the one the
		// clause rules fill, so a new job replaces the old one.
		return "relation." + slugify(o.lex.clauses.rel(a)) + ".job"
	}
	if !named && !nameLike.MatchString(value) {
		return key
	}
	who := strings.TrimSuffix(strings.TrimSuffix(a, "'s name"), " name")
	return "relation." + slugify(o.lex.clauses.rel(who)) + ".name"
}

var nameLike = regexp.MustCompile(`^(?:\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+){0,2}|\p{Han}{2,3})$`)

// leftover reports whether sentence s says more than its rule memories ds hold: two
// English words or three Han characters of content that no memory carries. Such a
// sentence is also told in the turn's story, so a rule that took part of it loses nothing.
func (o *Offline) leftover(s string, ds []draft) bool {
	var held strings.Builder
	for _, d := range ds {
		held.WriteString(lowerText(d.content))
		held.WriteByte(' ')
	}
	h := held.String()
	heldRunes := map[rune]bool{}
	for _, r := range h {
		heldRunes[r] = true
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words[w] = true
	}
	en, han := 0, 0
	for _, w := range strings.FieldsFunc(lowerText(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if hasHan(w) {
			for _, r := range w {
				if !heldRunes[r] && !strings.ContainsRune(zhFunctionChars, r) {
					han++
				}
			}
			continue
		}
		if !words[w] && !words[strings.TrimSuffix(w, "s")] && !enFunctionWord(w) {
			en++
		}
	}
	return en >= 2 || han >= 3
}

const zhFunctionChars = "我你他她它们的了是在和与及都也就还很会吗呢吧啊着过一个把被给让对要想这那有"

func enFunctionWord(w string) bool {
	switch w {
	case "i", "me", "my", "we", "our", "us", "i'm", "im", "m", "ve", "ll", "d", "s", "a", "an", "the", "and", "or", "but",
		"of", "to", "in", "on", "at", "for", "with", "by", "from", "is", "are", "was", "were", "be", "am", "been", "so",
		"just", "also", "really", "very", "now", "actually", "hi", "hello", "hey", "oh", "well", "ok", "okay", "yes", "yeah",
		"this", "that", "it", "its", "as", "here", "there", "name", "called", "named", "lives", "live", "work", "works",
		"t", "don", "doesn", "isn", "can", "won", "please", "do", "not", "never", "always":
		return true
	}
	return false
}

// changeable is the index of the first of ds that fills a slot whose value changes over
// time (where the speaker lives or works, a plan's date, a taste …), or -1. The story must
// not restate such a sentence: an episodic memory is never superseded, so the old value
// would outlive the change. Names, origins, birthdays and diagnoses stay.
func changeable(ds []draft) int {
	for i, d := range ds {
		switch k := d.key; {
		case k == "", k == "user.name", k == "user.origin", k == "user.birthday", strings.HasSuffix(k, ".name"),
			strings.HasPrefix(k, "user.health."):
		default:
			return i
		}
	}
	return -1
}

// toldWhole reports whether one of ds already holds its whole sentence: every rule but
// the identity and clause rules (which keep only the value) words the sentence itself.
func toldWhole(ds []draft) bool {
	for _, d := range ds {
		if r := strings.TrimPrefix(d.rule, "remember+"); r != "identity" && r != "clause" {
			return true
		}
	}
	return false
}

// Patterns of a later wave: what people say when a slot changes without naming the slot
// ("my first week at …", "I report to …", "bought an iPhone"), so that the new value
// lands in the slot of the old one.
var (
	// "my first week at Initech" / "my new job with Acme": where the speaker works now.
	newJobEN = regexp.MustCompile(`(?i:\b(?:(?:my|the)\s+(?:first|second|third|1st|2nd|3rd)\s+(?:day|days|week|weeks|month|months)|(?:my|a)\s+new\s+(?:job|role|position|gig))\s+(?:at|with|for)\s+)` + orgName)
	// "I report to Dana Lee now": the speaker's manager.
	reportToEN = regexp.MustCompile(`(?i:\b(?:i|i'm|i am|i'll|i will|i now)\s+(?:now\s+|officially\s+|currently\s+|directly\s+)*(?:report|reporting|be reporting)\s+(?:directly\s+)?to\s+)` + capName)
	// Phones, tablets and computers by their makers' names, with a model after them.
	deviceBrandEN = `(?:iPhone|iPad|Galaxy|Pixel|OnePlus|Xiaomi|Redmi|Huawei|Oppo|Vivo|Motorola|Moto|Nokia|Xperia|Fairphone|MacBook|ThinkPad|Surface|Chromebook|XPS|Kindle|Kobo|Lenovo|Asus|Acer|Dell|Framework)`
	deviceModelEN = `(?:\s(?:Pro|Max|Ultra|Plus|Air|Mini|mini|Lite|Fold|Flip|Note|SE|[A-Z]?\d[\w-]*))*`
	// "my Galaxy S21 …": a device of the speaker's.
	// The maker may be typed in lower case ("my galaxy S21").
	ownDeviceEN = regexp.MustCompile(`\b[Mm]y\s+(?:old\s+|new\s+|trusty\s+|current\s+|work\s+|personal\s+)?((?i:` + deviceBrandEN + `)` + deviceModelEN + `)\b`)
	// "finally caved and bought an iPhone 15": a device the speaker got.
	gotDeviceEN = regexp.MustCompile(`(?i:\b(?:bought|got|ordered|picked up|upgraded to|switched to|treated myself to|went with|replaced it with|splurged on)\s+(?:myself\s+)?(?:an?\s+|the\s+|a new\s+|a brand[- ]new\s+)?)(` + deviceBrandEN + deviceModelEN + `)\b`)
	// "I'm on the Northshore Gold plan": a plan, policy or subscription the speaker has.
	onPlanEN = regexp.MustCompile(`(?i:\b(?:i'm|i am|we're|we are)\s+(?:now\s+|still\s+|currently\s+)?on\s+(?:the|a|an|my|our)\s+)(\p{Lu}[\p{L}\d&'-]*(?:\s\p{Lu}[\p{L}\d&'-]*){0,3})\s+((?i:plan|policy|insurance|tariff|contract|subscription|membership|package|tier))\b`)
	// A trip told with its occasion ("for our anniversary we're doing a week in Crete",
	// "going to Sardinia instead"): the occasion names the plan, the place its value.
	tripEN        = regexp.MustCompile(`(?i:\b(?:we're|we are|i'm|i am|we'll|we will|i'll|i will|we|i)\s+(?:now\s+|actually\s+|still\s+)?(?:going|heading|flying|driving|off|doing\s+(?:a|two|three|one)\s+(?:week|weekend|long weekend|few days|couple of days|nights?|weeks)|spending\s+(?:a|the|two|three)\s+(?:week|weekend|days|weeks))\s+(?:to|in|on)\s+)` + capName)
	tripOccasion  = regexp.MustCompile(`(?i)\b(anniversary|honeymoon|birthday|vacation|holiday|getaway|spring break|christmas|easter|thanksgiving|new year|summer trip|babymoon)\b`)
	tripOccasionZ = `(国庆|十一|春节|过年|五一|端午|中秋|元旦|暑假|寒假|年假|蜜月|纪念日|生日)`
	// "五一想去厦门住两晚" / "暑假的安排改成去青岛".
	tripZH        = regexp.MustCompile(tripOccasionZ + `[^。！？!?]{0,16}?(?:改成去|改去|换成去|改到|去|到|飞)(\p{Han}{2,4}?)(?:玩|旅游|旅行|度假|看|逛|转|待|住|过|了|[，。,.!！；;]|$)`)
	tripTalkZH    = regexp.MustCompile(`我|行程|打算|安排|计划|准备|想去|要去|改去|改成去|换成去`)
	tripChangedZH = regexp.MustCompile(`(?:改成去|改去|换成去|改成了去|改到)(\p{Han}{2,4}?)(?:玩|旅游|旅行|度假|看|逛|转|待|住|过|了|[，。,.!！；;]|$)`)
	// "我家在洛阳老城区" / "我们家住在…": where the speaker's home is.
	homeZH = regexp.MustCompile(`^(?:\p{Han}{0,4}[，,])?我(?:们)?(?:家|现在|目前)?(?:就)?(?:住在|在)(\p{Han}{2,4}?)(?:市|的|老城区|新区|城区|郊区|区|县|镇|[，。,.!！；;])`)
	// "下个月跳槽到一家券商做研究员": a new employer told by going there.
	joinZH = regexp.MustCompile(`(?:去了|跳槽到|跳到|进了|加入了?|入职了?|开始去|开始在|改去|转去|换到|调到|要去)([^，。,去]{2,10}?)(?:当|做|担任)(?:一名|一位|一个|个|名)?([^，。,.!！；;]{0,8}?(?:` + jobZH + `|` + fieldZH + `))(?:[，。,.!！；;了]|$)`)
	// "鹦鹉阿福又学会了…": a pet named right after its kind.
	petApposZH = regexp.MustCompile(`(` + petZH + `)(\p{Han}{2})(?:今天|昨天|这两天|这几天|又|倒是|最近|特别|很|总是|老是|天天|每天|已经|一直|刚|也|就|都|不|，|,)`)
)

// tripDraft is the trip a sentence plans for an occasion ("五一想去厦门住两晚",
// "暑假的安排变了，改成去青岛"), keyed by the occasion so that a later destination
// replaces the earlier one. It reads the whole sentence: a change of plan is often told
// in clauses without a subject, which the speaker's part leaves out.
func (o *Offline) tripDraft(s string, ref time.Time) (draft, bool) {
	m := tripZH.FindStringSubmatch(s)
	if m == nil || !tripTalkZH.MatchString(s) {
		return draft{}, false
	}
	place := m[2]
	if c := tripChangedZH.FindStringSubmatch(s); c != nil {
		place = c[1]
	}
	switch place {
	case "那边", "那里", "这边", "这里", "哪里", "哪儿", "那儿", "外地", "别的":
		return draft{}, false
	}
	if badPlaceZH(place) {
		return draft{}, false
	}
	d := o.draft("我"+m[1]+"的行程："+"去"+place, ref, memory.Semantic, memory.CatFact, "plan", impPreference, confExplicit)
	d.key = "plan.trip." + m[1]
	d.content = o.finish(trimEnd(o.thirdPersonZH(s, memory.CatFact, "plan")), ref)
	if !strings.Contains(d.content, place) {
		d.content = "用户" + m[1] + "的行程：去" + place
	}
	return d, true
}

// The speaker's pregnancy, a state that bears on food, medicine and plans: "I'm 20
// weeks pregnant", "我现在怀孕六个月了".
var (
	pregnantEN = regexp.MustCompile(`(?i:\b(?:i'm|i am)\s+(?:now\s+|currently\s+)?)((?:\d+|[a-z]+)\s+(?:weeks?|months?)\s+|)pregnant\b`)
	pregnantZH = regexp.MustCompile(`我(?:现在|目前|已经)?(?:已经)?怀孕(?:了)?(?:\p{Han}{1,3}?(?:个月|周)了?)?`)
)

// relDietEN is the diet a relation keeps, among relTasteEN's verbs.
var relDietEN = regexp.MustCompile(`^is (?:vegan|vegetarian|lactose intolerant|pescatarian)$`)

// relTasteEN is a relation's liking, dislike, allergy or diet: "my husband is allergic to
// shellfish", "my son Leo is obsessed with trains".
var relTasteEN = regexp.MustCompile(`(?i:\bmy\s+)(` + relEN + `)(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?i:really\s+|absolutely\s+|totally\s+|just\s+|also\s+|still\s+|kind of\s+|kinda\s+|seriously\s+)?` +
	`((?i:loves|likes|hates|adores|dislikes|detests|can't stand|cannot stand|is obsessed with|is allergic to|is into|is crazy about|is a (?:huge|big) fan of|doesn't eat|does not eat|won't eat|can't eat|doesn't like|does not like|doesn't drink|won't drink|is (?:vegan|vegetarian|lactose intolerant|pescatarian)))\b\s*([^,.;!?]{0,40})`)

// relationSubject is the relation a sentence opens with as its subject ("My mom can't …",
// "我老婆不吃…"), as a slot name, or "".
func (c *clauseRules) relationSubject(s string) string {
	if m := relSubjectEN.FindStringSubmatch(s); m != nil {
		return slugify(c.rel(strings.ToLower(m[1])))
	}
	if m := relSubjectZH.FindStringSubmatch(s); m != nil {
		return relSlot(c, m[1])
	}
	return ""
}

var (
	relSubjectEN = regexp.MustCompile(`(?i)^(?:(?:oh|also|and|btw|fyi|so|well|actually|plus|and also)[,!]?\s+)*my\s+(` + relEN + `)\b(?:\s+\p{Lu}[\p{Ll}'-]+)?\s+(?:is|isn't|has|hasn't|does|doesn't|can't|cannot|won't|will|would|loves|likes|hates|adores|really|absolutely|totally|also|still|just|never|always|only|gets|prefers)\b`)
	relSubjectZH = regexp.MustCompile(`^(?:对了|还有|另外|哦|而且|其实|顺便说一下)?[，,]?我(?:的|家)?(` + relZH + `)`)
)

// promotedEN is the role a speaker was promoted or moved up to.
var promotedEN = regexp.MustCompile(`(?i:\b(?:got|was|been|'ve been|have been|am being|'m being|finally got|just got)\s+(?:officially\s+)?(?:promoted|bumped\s+up|moved\s+up)\s+to\s+(?:an?\s+|the\s+)?)([a-z][a-z-]+(?:\s[a-z][a-z-]+){0,3}?)(?:\s+(?i:at|last|this|on|in|yesterday|today|and|so|after|effective|starting|role|position)\b|[,.;!]|$)`)

// addressEN and addressZH tell where the speaker's deliveries go.
var (
	addressEN = regexp.MustCompile(`(?i)\b(?:my|our)\s+(?:new\s+)?(?:shipping\s+|delivery\s+|mailing\s+|home\s+|billing\s+|postal\s+)?address\s+(?:is|has\s+changed|changed)\b|\b(?:ship|send|deliver|mail|forward)\s+(?:all\s+)?(?:my\s+|our\s+|the\s+)?(?:packages|parcels|deliveries|orders|everything|stuff|mail|post)\s+to\b`)
	addressZH = regexp.MustCompile(`(?:快递|包裹|东西|信件|外卖)[^，。；]{0,6}?(?:寄到|送到|发到|放到)|(?:收货|收件|寄件|快递|家庭|我的|我家)?地址(?:是|为|改成|换成|变成|改为|[:：])`)
)

// clauseAt is the clause of s (between commas or semicolons) that holds byte at.
func clauseAt(s string, at int) string {
	start, end := 0, len(s)
	for _, sep := range clauseSplit.FindAllStringIndex(s, -1) {
		if sep[0] > 0 && sep[1] < len(s) && s[sep[0]] == ',' && isDigit(s[sep[0]-1]) && isDigit(s[sep[1]]) {
			continue // "4,500": a digit group, not a clause break
		}
		switch {
		case sep[1] <= at:
			start = sep[1]
		case sep[0] >= at && sep[0] < end:
			end = sep[0]
		}
	}
	return strings.TrimSpace(s[start:end])
}

// setupEN is the device a speaker's setup, laptop or phone is: "my daily driver is a Pixel 8".
var setupEN = regexp.MustCompile(`(?i:\bmy\s+(?:whole\s+|entire\s+|main\s+|work\s+|daily\s+|current\s+|personal\s+)?)((?i:setup|laptop|machine|computer|rig|phone|daily driver|desktop|tablet))(?i:\s+is\s+(?:an?\s+|the\s+)?(?:new\s+|brand[- ]new\s+|trusty\s+|old\s+)?)(\p{Lu}[\p{L}\d-]*(?:\s+[\p{L}\d-]+){0,3}?)(?:[,.;!?]|$|\s+(?i:and|but|with|which|that|from|now)\b)`)

// Measures and arrangements that change: the speaker's weight, working week and
// favourites by label, and where a relation studies or works.
var (
	weightEN   = regexp.MustCompile(`(?i)(?:\bi\s+(?:now\s+)?weigh\s+(?:about\s+|around\s+|just\s+)?|\b(?:i'm|i\s+am|i've\s+got|i\s+got|i'm\s+now|now)?\s*(?:down|up)\s+to\s+)(\d{2,3}(?:[.,]\d)?)\s*(kg|kgs|kilos|kilograms|lbs|pounds|stone)\b`)
	weightZH   = regexp.MustCompile(`(?:体重(?:是|有|现在|已经)?|瘦到了?|胖到了?|减到了?|涨到了?)(\d{2,3}(?:\.\d)?\s*(?:公斤|斤|kg|千克))`)
	workWeekEN = regexp.MustCompile(`(?i)\b(?:i|we)\s+(?:now\s+)?work\s+(?:from\s+)?(?:monday|mon)\s+(?:to|through|thru|till|-|–)\s+(?:thursday|friday|saturday|thu|fri|sat)\b|\b(?:four|4|three|3|five|5|six|6)[- ]day\s+(?:work\s*)?week\b|\b(?:i'm|i\s+am|i\s+work|i'm\s+now|working)\s+(?:now\s+)?(?:part[- ]time|full[- ]time)\b` +
		// "we only do three days a week", "back to four days after the merger"
		`|\b(?:i|we)\s+(?:now\s+|only\s+)?(?:work|do)\s+(?:four|five|three|two|six|4|5|3|2|6)\s+days?\s+(?:a|per|each|every)\s+week\b|^(?:(?:and|so|now)\s+)?(?:back|down|up)\s+to\s+(?:four|five|three|two|six|4|5|3|2|6)\s+days\b`)
	workWeekZH      = regexp.MustCompile(`做五休二|做六休一|单休|双休|大小周|一周(?:上|工作)[一二三四五六两\d]天班?|每周(?:上|工作)[一二三四五六两\d]天班?|(?:改回|改成|恢复)(?:了)?(?:一周|每周)[一二三四五六两\d]天(?:班|工作制)?`)
	favoriteLabelEN = regexp.MustCompile(`(?i)^(?:(?:my\s+)?new\s+)?favou?rite\s+([a-z]+(?:\s[a-z]+)?)\s*[:：-]\s*(.{2,60})$`)
	favoriteZH      = regexp.MustCompile(`最喜欢的(\p{Han}{1,4}?)(?:现在)?(?:是|变成了?|换成了?|改成了?|成了)([^，。,！!？?]{1,20})`)
	schoolNameEN    = regexp.MustCompile(`(?i:\b(?:my|our)\s+)(` + relEN + `)(?i:\s+(?:now\s+|just\s+)?(?:goes\s+to|attends|is\s+at|started\s+at|starts\s+at|moved\s+to|switched\s+to|transferred\s+to|is\s+starting\s+at|will\s+go\s+to|got\s+into))\s+((?:[A-Z][\p{L}'-]*\s+){0,3}(?:School|Primary|Academy|High|College|University|Elementary|Kindergarten|Nursery|Montessori|Prep|Preschool|Daycare)\b)`)
	relEmployerZH   = regexp.MustCompile(`(` + relZH + `)(?:现在|目前|已经|刚|上个月|上周|去年|今年|前段时间|最近)*(?:在([^，。,]{2,10}?)(上班|工作)|(?:跳槽去了|跳槽到了?|跳到了?|入职了?|调到了?|调去了?|外派到了?)([A-Za-z][\w&]{1,15}|\p{Han}{2,8}?)(?:了|$|[，。,]))`)
	// relLeftWorkZH and relLeftWorkEN are a relation leaving work: "我妈去年退休了",
	// "姐姐离职了", "my mum retired", "my husband quit his job".
	relLeftWorkZH = regexp.MustCompile(`(` + relZH + `)(?:现在|已经|刚|上个月|上周|去年|今年|前段时间|最近|也)*(退休了|辞职了|离职了|不干了|下岗了|失业了|被裁了)`)
	relLeftWorkEN = regexp.MustCompile(`(?i:\bmy\s+|^)(` + relEN + `)(?i:\s+(?:just|finally|recently|officially|has|had)){0,2}\s+((?i:retired|quit\s+(?:his|her|their)\s+job|resigned|got\s+laid\s+off|was\s+laid\s+off|lost\s+(?:his|her|their)\s+job|left\s+(?:his|her|their)\s+job))\b`)
	notBeforeEN   = regexp.MustCompile(`(?i)\b(?:nothing|no\s+(?:calls?|meetings?|appointments?|bookings?|emails?|messages?|texts?|visits?|deliveries|work|pings?)|never)\s+(before|after|earlier\s+than|later\s+than)\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?|noon|midnight)`)
	relRunsEN     = regexp.MustCompile(`(?i:\bmy\s+)(` + relEN + `)(?:\s+\p{Lu}[\p{Ll}'-]+)?(?i:,?\s+(?:now\s+|still\s+)?)((?i:runs|owns|manages|opened|started|co-owns))\s+((?i:a|an|his|her|their|the\s+family)\s+[^,.;!?]{3,50})`)
	dietEndEN     = regexp.MustCompile(`(?i)\b(?:i|we)\s+(?:now\s+)?(?:eat|eating)\s+meat\s+again\b|\b(?:i've|i\s+have|i)\s+(?:started|start|gone\s+back\s+to)\s+eating\s+meat\b|\b(?:i'm|i\s+am)\s+no\s+longer\s+(?:a\s+)?(?:vegetarian|vegan|pescatarian)\b|\b(?:quit|gave\s+up|stopped)\s+being\s+(?:a\s+)?(?:vegetarian|vegan|pescatarian)\b`)
	dietEndZH     = regexp.MustCompile(`我?(?:现在|已经|又|最近)*(?:开始|重新|恢复)?吃(?:肉|荤)了|我?(?:现在|已经)?不(?:再)?吃素了`)
	petRenamedZH  = regexp.MustCompile(`(` + petZH + `)(?:现在|已经)?(?:改名|改名字|换名字)(?:了)?[，,]?(?:叫|为|成)(\p{Han}{2,3}?)(?:了|啦|[，。,！!]|$)`)
	schoolWordEN  = regexp.MustCompile(`\b(?:School|Primary|Academy|High|College|University|Elementary|Kindergarten|Nursery|Montessori|Prep|Preschool|Daycare)\b`)
	someoneElseEN = regexp.MustCompile(`(?i)^(?:my|our|his|her|their)\s+(?:` + relEN + `)\b`)
)

// workVerbZH is how a sentence of relEmployerZH ends its workplace: 上班 or 工作 as told.
func workVerbZH(told string) string {
	if told == "上班" || told == "工作" {
		return told
	}
	return "工作"
}

// notWorkAt is a tie to a place that is no job: "a member at CityGym", "a regular at
// Nico's".
var notWorkAt = regexp.MustCompile(`(?i)^(?:member|customer|subscriber|user|regular|supporter|volunteer|player|shopper|patient|listener|reader|viewer|follower)\s`)

// selfKindZH ends a word for a kind of person, not a name: 左撇子, 夜猫子, 上班族, 打工人.
var selfKindZH = regexp.MustCompile(`(?:子|者|族|人|迷|控|党|奴|货|狗|宝|娃)$`)

// surnameThenNameZH is a speaker telling their surname, then their full name.
var surnameThenNameZH = regexp.MustCompile(`我姓(\p{Han})[，,、\s]*(?:我)?(?:叫|全名(?:叫|是)?|名字(?:叫|是))(\p{Han}{2,3})(?:[，,。！!；;]|$)`)

// joinedOrgEN is the speaker starting at an employer: "joined Ledgerly as an analyst",
// "took a job at a firm called Ostrander"; workCueEN tells the joining is a job, not a
// gym or a club.
var (
	joinedOrgEN = regexp.MustCompile(`(?i:\bi\b[^.!?]{0,40}?\b(?:joined|joining|started at|starting at|got a job (?:at|with)|got hired (?:at|by)|took a job (?:at|with)|accepted an offer from|signed with)\s+(?:an?\s+[\p{L} -]{2,40}?\s+(?:called|named)\s+)?)` + orgName)
	workCueEN   = regexp.MustCompile(`(?i)\bas an?\s+[a-z]|\b(?:startup|company|firm|agency|studio|consultancy|bank|hospital|clinic|school|university|lab|employer|job|offer|hired|role|position)\b`)
)

// selfNameZH is a speaker naming themself with 是, the name alone in its clause.
var selfNameZH = regexp.MustCompile(`(?:^|[，,。！!；;：:\s])我是(\p{Han}{2,3})(?:[，,。！!；;]|$)`)

// zhSurname reports a name that opens with one of the common Chinese surnames, so that
// 我是老师 or 我是新人 is not read as a name.
func zhSurname(name string) bool {
	r := []rune(name)
	if len(r) < 2 || strings.ContainsRune("总工哥姐叔姨家人", r[len(r)-1]) {
		// a title or a word ("王总", "老家人"), not a given name
		return false
	}
	if len(r) >= 3 && strings.Contains(compoundSurnamesZH, string(r[:2])) {
		return true
	}
	return strings.ContainsRune(surnamesZH, r[0])
}

// The commonest Chinese surnames (about nine in ten people carry one of them).
const (
	surnamesZH         = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
	compoundSurnamesZH = "欧阳 司马 上官 诸葛 东方 皇甫 令狐 慕容 端木 尉迟 公孙 长孙 宇文 司徒 夏侯"
)

// thingIsEN tells where, or under whom, a thing of the speaker's is: "the Stripe account is
// registered under Ferncastle Ltd", "our repo is hosted on Codeberg".
var thingIsEN = regexp.MustCompile(`(?i:\b(?:the|our|my)\s+)((?:[A-Za-z][\w-]*\s+)?(?i:account|studio|office|server|site|website|domain|repo|repository|database|nas|router|vpn|warehouse|shop|store|workshop|lab|storage unit|company|business|llc|payroll|billing|mailbox|hosting|backups|bank account|policy|subscription|plan))\s+((?i:is|are)(?:\s+(?i:registered|hosted|based|located|kept|held|incorporated|set up|parked|stored))?)\s+((?i:under|on|in|at|with|through|via|by)\s+[^.;!?]{2,60})`)

// usesZH is the tool a job of the speaker's uses: "公司VPN用的是EasyConnect", "我们记账用金蝶".
var usesZH = regexp.MustCompile(`(?:(?:公司|我们|我|家里|单位|团队|部门)(?:的)?\s*)+([A-Za-z]{2,12}|\p{Han}{2,4}?)\s*(?:用的是|用的|都用|一直用|现在用)\s*([A-Za-z][\w.-]{1,20}|\p{Han}{2,6}?)(?:[，,。；;！!\s]|$)`)

// relSlot is a relation's slot name: its English name, or the Chinese word itself.
func relSlot(c *clauseRules, w string) string {
	if v := slugify(c.rel(w)); v != "" {
		return v
	}
	return w
}

var (
	// relLangEN and relLangZH are the language a relation reads or speaks.
	relLangEN = regexp.MustCompile(`(?i:\bmy\s+)(` + relEN + `)(?i:,?\s+(?:she|he|who)\s+|\s+)(?i:only\s+|mostly\s+|just\s+|barely\s+)?((?i:speaks|reads|understands|writes|talks))\s+(?i:only\s+)?(\p{Lu}\p{Ll}+)`)
	relLangZH = regexp.MustCompile(`我(?:的|家)?(` + relZH + `)[^。！？!?]{0,12}?(?:[，,](?:她|他))?(只(?:会说|会讲|看得懂|认得|会看|懂|听得懂|说)\p{Han}{2,4}?)(?:[，。,；;]|$)`)
	// relHeNameZH is a relation named by 他叫/她叫 in a later clause of the sentence.
	relHeNameZH = regexp.MustCompile(`(?:我|给|跟|替)(?:的|家)?(` + relZH + `)[^。！？!?]{0,20}?[，,](?:他|她)(?:叫|名叫|的名字是)` + zhName)
	// relNickZH is a relation named by a familiar name: "我弟弟阿强", "我同事小林".
	relNickZH = regexp.MustCompile(`我(?:的|家)?(` + relZH + `)((?:阿|小|老)\p{Han})`)
	// yearsAsZH is the line of work the speaker has done for years: "我干了十年的出纳".
	yearsAsZH = regexp.MustCompile(`我(?:已经)?(?:做|干|当)了([一二两三四五六七八九十几多\d]+年)(?:的)?([A-Za-z]{2,10}|\p{Han}{2,6}?)(?:[，,。；;]|$)`)
	// hometownZH is the speaker's family home: "回贵阳老家", "老家在遵义".
	hometownZH = regexp.MustCompile(`回(\p{Han}{2,4}?)老家()|老家(?:是|在)(\p{Han}{2,4}?)(?:[，。,的]|$)`)
	// heightEN is the speaker's height: "I'm 6'4\"", "I'm 1.62 m", "I'm five foot two".
	heightEN = regexp.MustCompile(`(?i:\b(?:i'm|i am)\s+(?:only\s+|about\s+|almost\s+)?)(\d'\s?\d{1,2}(?:"|''|”)?|\d\s?(?:ft|foot|feet)\s?\d{0,2}(?:\s?in(?:ches)?)?|1[.,]\d{2}\s?m\b|1\d{2}\s?cm\b|(?:five|six|seven)\s+(?:foot|feet)(?:\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven))?)`)
	// hometownEN is the speaker's home town told by going home to it.
	hometownEN = regexp.MustCompile(`(?i:\b(?:flights?|trips?|trains?|bus(?:es)?|drives?|rides?|tickets?|fly|flying|going|go|head(?:ing)?|get(?:ting)?|travel(?:ing|ling)?)\s+(?:back\s+)?home\s+to\s+)` + capName)
	// languageEN are language names.
	languageEN = func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields("english spanish portuguese french german italian chinese mandarin cantonese japanese korean arabic hindi russian polish dutch greek turkish vietnamese tagalog swahili hebrew persian farsi urdu bengali punjabi thai indonesian ukrainian czech swedish norwegian danish finnish hungarian romanian") {
			m[w] = true
		}
		return m
	}()
	// nickNotName are words relNickZH would take for a name.
	nickNotName = map[string]bool{"小时": true, "老家": true, "小区": true, "老师": true, "小学": true, "老板": true, "老公": true,
		"老婆": true, "小孩": true, "阿姨": true, "老人": true, "小说": true, "小组": true, "老是": true, "小心": true, "老了": true, "小的": true}
)

var (
	// officeDaysEN and officeDaysZH tell the days the speaker works at the office.
	officeDaysEN = regexp.MustCompile(`(?i)\b(?:i'm|i am|i'm\s+usually|i\s+(?:go|come|head)\s+(?:in(?:to)?|to))\s+(?:in\s+)?(?:the\s+)?office\s+(?:on\s+)?(?:mondays|tuesdays|wednesdays|thursdays|fridays)\b|\b(?:my|our)\s+(?:office|in-office|onsite|on-site)\s+days\s+(?:are|is)\b|\b(?:wfh|work\s+from\s+home|remote)\s+(?:on\s+)?(?:mondays|tuesdays|wednesdays|thursdays|fridays)\b`)
	officeDaysZH = regexp.MustCompile(`(?:去|到)(?:公司|办公室|单位)(?:坐班|上班|办公)|坐班日|到岗日|(?:周[一二三四五六日]|星期[一二三四五六日]).{0,6}(?:坐班|在家办公|远程办公)`)
	// salaryEN and salaryZH are what the speaker earns.
	salaryEN = regexp.MustCompile(`(?i)\b(?:i\s+(?:make|earn|take\s+home|bring\s+in)|my\s+(?:salary|take-home(?:\s+pay)?|pay|income)\s+is(?:\s+now)?)\s+(?:about\s+|around\s+|roughly\s+)?[$€£¥]?\d[\d,.]*\s*(?:k\b)?`)
	salaryZH = regexp.MustCompile(`(?:涨薪|加薪|调薪|降薪)了?[^。]{0,6}?(?:税后|税前|到手|月薪|年薪)[\d一二两三四五六七八九十百千万点.]+(?:万|千|块|元|k|K)?|(?:我)?(?:的)?(?:月薪|年薪|工资|到手|薪水|收入)(?:是|有)?(?:税后|税前|到手)?[^，。,]{0,2}?[\d一二两三四五六七八九十百千万点.]+(?:万|千|块|元|k|K)?`)
	// nowUsesZH is what the speaker uses now, told after a change (dropped subject).
	nowUsesZH = regexp.MustCompile(`(?:现在|目前|如今)(?:改)?(?:用|在用)(?:的是)?([^，。,；;！!]{2,20}?)(?:[，。,；;！!]|$)`)
)

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
