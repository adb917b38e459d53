package extractor

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/memory"
)

// People and places that serve the speaker (a pharmacy, a hairdresser, a dentist, a
// therapist) are replaced, not added to: "switched pharmacies", "found a new stylist",
// 换了个牙医. The slot is the service (user.provider.<service>), whatever the sentence
// calls the one who gives it.

// providerSlots maps the words for a service and its giver to the service.
var providerSlots = map[string]string{
	"pharmacy": "pharmacy", "pharmacie": "pharmacy", "pharmacist": "pharmacy", "chemist": "pharmacy", "drugstore": "pharmacy",
	"prescription": "pharmacy", "prescription filled": "pharmacy", "prescriptions filled": "pharmacy", "药店": "pharmacy", "药房": "pharmacy",
	"hairdresser": "hair", "stylist": "hair", "hair stylist": "hair", "hairstylist": "hair", "barber": "hair", "hair salon": "hair",
	"salon": "hair", "haircut": "hair", "理发师": "hair", "发型师": "hair", "理发店": "hair", "托尼老师": "hair",
	"dentist": "dentist", "dental office": "dentist", "牙医": "dentist", "牙科": "dentist",
	"doctor": "doctor", "gp": "doctor", "physician": "doctor", "family doctor": "doctor", "primary care doctor": "doctor",
	"pcp": "doctor", "家庭医生": "doctor", "主治医生": "doctor",
	"therapist": "therapist", "counselor": "therapist", "counsellor": "therapist", "psychologist": "therapist",
	"psychiatrist": "psychiatrist", "心理医生": "therapist", "咨询师": "therapist", "心理咨询师": "therapist",
	"vet": "vet", "veterinarian": "vet", "兽医": "vet", "宠物医院": "vet",
	"mechanic": "mechanic", "garage": "mechanic", "修车师傅": "mechanic", "修车行": "mechanic",
	"accountant": "accountant", "tax guy": "accountant", "tax person": "accountant", "会计": "accountant",
	"personal trainer": "trainer", "trainer": "trainer", "私教": "trainer", "健身教练": "trainer",
	"tutor": "tutor", "家教": "tutor", "dog walker": "dog_walker", "遛狗师": "dog_walker",
	"babysitter": "babysitter", "nanny": "babysitter", "cleaner": "cleaner", "housekeeper": "cleaner", "保洁": "cleaner",
	"physio": "physio", "physiotherapist": "physio", "physical therapist": "physio", "康复师": "physio",
}

// providerWordsEN are providerSlots' English words, longest first, as a pattern.
const providerWordsEN = `primary care doctor|physical therapist|personal trainer|family doctor|prescriptions filled|prescription filled|` +
	`physiotherapist|psychiatrist|psychologist|veterinarian|hairdresser|hair stylist|hairstylist|housekeeper|dental office|` +
	`pharmacist|counsell?or|babysitter|therapist|accountant|dog walker|hair salon|drugstore|pharmacy|pharmacies|physician|` +
	`mechanic|stylist|chemist|dentist|doctor|barber|physio|trainer|cleaner|tutor|nanny|salon|vet|gp|pcp`

var (
	// "found a new stylist, Amira", "my new dentist is …", "switched pharmacies to …",
	// "started seeing a new therapist"
	newProviderEN = regexp.MustCompile(`(?i)\b(?:new|different|another)\s+(` + providerWordsEN + `)s?\b|\b(?:get|gets|getting|have|had|got)\s+(?:my\s+|our\s+)?(hair)\s+(?:cut|done|coloured|colored|trimmed|styled)\s+(?:at|by|with)\b|\bswitched\s+(` + providerWordsEN + `)(?:s|es)?\b|\b(?:` + providerWordsEN + `)s?\s+(?:changed|switched)\b`)
	// "我的牙医换成了…", "换了个牙医", "新的理发师是…"
	newProviderZH = regexp.MustCompile(`(?:换了?(?:个|一个|家|一家)?|新的|新找的|新换的|现在的|找到(?:了)?(?:个|一个|家|一家)?新的?)(药店|药房|理发师|发型师|理发店|牙医|牙科|家庭医生|心理医生|心理咨询师|咨询师|兽医|宠物医院|修车师傅|修车行|会计|私教|健身教练|家教|保洁)`)
)

// providerKey is the slot of the service a sentence's topic or wording names, "" for
// none: topic is the topic slot's noun phrase ("" when the sentence has none).
func providerKey(s, topic string) string {
	if svc, ok := providerSlots[strings.ReplaceAll(topic, "_", " ")]; ok {
		return "user.provider." + svc
	}
	if svc, ok := providerSlots[strings.TrimSuffix(strings.ReplaceAll(topic, "_", " "), "s")]; ok {
		return "user.provider." + svc
	}
	if m := newProviderEN.FindStringSubmatch(s); m != nil {
		w := strings.ToLower(m[1] + m[2] + m[3])
		if w == "hair" {
			w = "haircut"
		}
		if w == "" {
			w = strings.ToLower(strings.Fields(m[0])[0])
		}
		w = strings.TrimSuffix(w, "ies")
		if strings.HasSuffix(w, "pharmac") {
			w = "pharmacy"
		}
		if svc, ok := providerSlots[w]; ok {
			return "user.provider." + svc
		}
	}
	if m := newProviderZH.FindStringSubmatch(s); m != nil {
		return "user.provider." + providerSlots[m[1]]
	}
	return ""
}

var (
	// "我们周三开周会", "我们每周三下午上瑜伽课": a thing that meets on a day, told
	// after the day.
	scheduleVerbZH = regexp.MustCompile(`^(?:我们?|咱们?|我家)(?:每周|每个|每)?(周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天])(?:上午|下午|晚上|早上|中午)?(?:\d{1,2}点(?:半)?)?(?:开|上|有|去|做|练)(\p{Han}{2,4})(?:[，。！!,.]|$)`)
	// "我在奥森跑步", "我平时在社区医院拿药": where the speaker does a thing as a rule.
	doAtZH = regexp.MustCompile(`^我(?:平时|一般|现在|目前|每周|周末|经常|一直)?(?:都)?(?:是)?在(\p{Han}{2,8}?|[A-Za-z][\w'-]*(?:\s[A-Za-z][\w'-]*)?)(健身|锻炼|练瑜伽|上瑜伽课|游泳|撸铁|剪头发?|理发|做头发|看牙|拿药|取药|买药|买菜)(?:[，。！!,.]|$)`)
	// "我外甥在育英小学读书", "女儿转学到育才小学了": a child's school.
	relSchoolZH = regexp.MustCompile(`(?:^|我|我家|[，,给把])(?:的)?(` + relZH + `)(?:现在|目前|今年|已经|下学期|明年)?(?:在|转学到了?|转到了?|转学去|转去|考上了?|考进了?|进了|上了)(\p{Han}{2,10}?(?:小学|中学|初中|高中|幼儿园|大学|学校|学院|附小|附中|[一二三四五六七八九十]中|[一二三四五六七八九十]小|实小|外国语))(?:上学|读书|念书|上|读|了|[，。！!,.]|$)`)
	// "闺女明年上小学，就是育英那所": a child's school, named after its kind.
	schoolAfterZH = regexp.MustCompile(`(?:^|我|我家|[，,])(?:的)?(` + relZH + `)[^，。,！!]{0,6}?(?:上|读|进|去)(幼儿园|小学|初中|高中|中学)[，,]\s*(?:是|在)?(\p{Han}{2,8}?)(?:那家|那所|那个)`)
	// "I work 9 to 5", "doing 7 to 3 now", "my shift is 10-6": working hours.
	workHoursEN = regexp.MustCompile(`(?i)\b(?:work|working|works|doing|do|on|hours\s+are|shift\s+is)\s+(?:from\s+)?(\d{1,2}(?::\d{2})?\s*(?:am|pm)?|nine|eight|seven|ten)\s*(?:to|-|–|till|until)\s*(\d{1,2}(?::\d{2})?\s*(?:am|pm)?|five|six|four|three|seven)\b`)
	workCtxEN   = regexp.MustCompile(`(?i)\b(?:work|working|works|hours|shift|office|job)\b`)
	workHoursZH = regexp.MustCompile(`朝九晚五|朝九晚六|早九晚[五六七]|(?:早上|上午|早|晚上|下午|晚)?(?:\d{1,2}|[一二三四五六七八九十]{1,2})点(?:半)?(?:到|至|-)(?:早上|上午|早|晚上|下午|晚)?(?:\d{1,2}|[一二三四五六七八九十]{1,2})点(?:半)?(?:上班|下班|工作|的班)`)
	// "我升架构师了", "晋升为部门经理": the speaker's new title.
	promotedZH = regexp.MustCompile(`(?:^|我|，)(?:刚|已经|终于|今年|上个?月|上周)?(?:刚)?(?:升|升职为|升职成|升为|升到|晋升为|晋升到|晋升|提拔为|被提拔为|转正为|当上了?|升任)(\p{Han}{2,8}?)(?:了|啦|[！!，,。.]|$)`)
	// titleZH ends a title one is promoted to.
	titleZH = regexp.MustCompile(`(?:主任|总监|经理|主管|组长|工程师|专家|副总|总裁|店长|科长|处长|校长|教授|讲师|合伙人|架构师|设计师|研究员|负责人|队长|班长|主编|编辑|律师|医师|护士长)$`)
	// "我又开始吃海鲜了", "不吃素了": a diet given up.
	dietResumeZH = regexp.MustCompile(`(?:开始|又|重新|恢复)(?:开始)?吃(肉|荤|鱼|海鲜|鸡蛋|鸡肉|牛肉|猪肉|荤菜)|不(?:再)?吃(?:全)?素了|不素食了|不再吃(?:全)?素`)
	// "我吃蛋奶素", "我是素食者": the speaker's diet.
	dietZH       = regexp.MustCompile(`^我(?:现在|一直|已经|目前|平时)?(?:只)?(?:吃全素|吃素|吃纯素|是素食者|是素食主义者|是纯素食者|吃斋|吃蛋奶素)`)
	dietResumeEN = regexp.MustCompile(`(?i)\b(?:started|began|am|i'm|back\s+to)\s+(?:eating|having)\s+(meat|fish|chicken|seafood|dairy|eggs|pork|beef)\s+again\b|\bno\s+longer\s+(?:a\s+)?(?:vegetarian|vegan)\b|\bnot\s+(?:a\s+)?(?:vegetarian|vegan)\s+any\s?more\b`)
	// "Pickle eats a salmon kibble", "我家猫吃冻干猫粮": what a pet eats.
	petFoodEN       = regexp.MustCompile(`(?:\b(?i:my|our)\s+(dog|cat|puppy|kitten|pup)|\b(\p{Lu}[\p{Ll}]+))\s+(?i:eats|is\s+on|gets|is\s+fed|only\s+eats)\s+(?i:a\s+|the\s+)?([^.,;!?]{2,40}?\b(?i:kibble|food|diet|chow|formula|wet\s+food|dry\s+food))\b`)
	petFoodSwitchEN = regexp.MustCompile(`(?i:\b(?:switched|moved|changed|put|transitioned)\s+)(?:(?i:my|our|the)\s+(dog|cat|puppy|kitten|pup)|(\p{Lu}[\p{Ll}]+))(?i:\s+(?:over\s+)?(?:to|onto|on)\s+(?:a\s+|the\s+)?)([^.;!?]{2,50}?(?i:kibble|food|diet|chow|formula))`)
	petFoodZH       = regexp.MustCompile(`(?:我家|我的|家里)?(?:的)?(狗狗|猫咪|狗|猫)(?:一直|平时|现在|目前)?(?:只)?吃(?:的是)?(\p{Han}{0,6}(?:狗粮|猫粮|粮|罐头))`)
	petFoodSwitchZH = regexp.MustCompile(`(?:换成|改吃|改成|换了)(?:了)?(\p{Han}{0,6}(?:狗粮|猫粮|处方粮|粮|罐头))`)
)

// serviceFacts are the facts of sentence s about the speaker's routines and their pets'
// food that have a slot of their own.
func (o *Offline) serviceFacts(s string) []fact {
	c := o.lex.clauses
	var out []fact
	if hasHan(s) {
		if m := schoolAfterZH.FindStringSubmatch(s); m != nil {
			// "闺女明年上小学，就是育英那所": the school named after its kind.
			out = append(out, fact{key: "relation." + relSlot(c, m[1]) + ".school", content: "用户的" + m[1] + "在" + m[3] + "那家" + m[2] + "上学", cat: memory.CatRelationship})
		} else if m := relSchoolZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "relation." + c.rel(m[1]) + ".school", content: "用户的" + m[1] + "在" + m[2] + "上学", cat: memory.CatRelationship})
		}
		if m := doAtZH.FindStringSubmatch(s); m != nil && !badPlaceZH(m[1]) {
			key := "habit." + m[2]
			if svc, ok := serviceOfZH[m[2]]; ok {
				key = "user.provider." + svc // "在…剪头发": who cuts the speaker's hair
			}
			out = append(out, fact{key: key, content: "用户" + strings.TrimPrefix(trimEnd(s), "我"), cat: memory.CatFact, imp: impPreference})
		}
		if workHoursZH.MatchString(s) && strings.Contains(s, "我") {
			out = append(out, fact{key: "user.attr.work_hours", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		}
		if m := promotedZH.FindStringSubmatch(s); m != nil && (jobLikeZH.MatchString(m[1]) || titleZH.MatchString(m[1])) && !toldOfOtherZH(s) {
			out = append(out, fact{key: "user.role", content: "用户现在是" + m[1], cat: memory.CatProfile})
		}
		if dietZH.MatchString(s) && !dietResumeZH.MatchString(s) {
			out = append(out, fact{key: "food.diet", content: o.toldWhole(s), cat: memory.CatPreference, imp: impPreference})
		}
		if dietResumeZH.MatchString(s) && !toldOfOtherZH(s) {
			out = append(out, fact{key: "food.diet", content: o.toldWhole(s) + "（不再吃素）", cat: memory.CatPreference, imp: impPreference})
		}
		if m := petFoodZH.FindStringSubmatch(s); m != nil {
			out = append(out, fact{key: "pet." + c.pet(m[1]) + ".food", content: "用户的" + m[1] + "吃" + m[2], cat: memory.CatFact, imp: impPreference})
		} else if m := petFoodSwitchZH.FindStringSubmatch(s); m != nil && (strings.Contains(m[1], "粮") || strings.Contains(s, "兽医")) {
			out = append(out, fact{key: "pet.food", content: "用户的宠物现在吃" + m[1] + "（" + o.toldWhole(s) + "）", cat: memory.CatFact, imp: impPreference})
		}
		return out
	}
	if m := workHoursEN.FindStringSubmatch(s); m != nil && workCtxEN.MatchString(s) && !otherSubject.MatchString(s[:strings.Index(s, m[0])]) {
		out = append(out, fact{key: "user.attr.work_hours", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
	}
	if dietResumeEN.MatchString(s) && !otherSubject.MatchString(s) {
		out = append(out, fact{key: "food.diet", content: o.toldWhole(s), cat: memory.CatPreference, imp: impPreference})
	}
	// The pet by its kind ("our cat") or its name ("Biscuit"), as told or as switched.
	for _, re := range []*regexp.Regexp{petFoodEN, petFoodSwitchEN} {
		m := re.FindStringSubmatch(s)
		if m == nil || m[1] == "" && (c.notName[m[2]] || nameStop[strings.ToLower(m[2])]) {
			continue
		}
		who := strings.ToLower(m[2])
		if m[1] != "" {
			who = c.pet(strings.ToLower(m[1]))
		}
		out = append(out, fact{key: "pet." + slugify(who) + ".food", content: o.toldWhole(s), cat: memory.CatFact, imp: impPreference})
		break
	}
	return out
}

// toldOfOtherZH reports a sentence told of someone else (他, 她, a relation first).
func toldOfOtherZH(s string) bool {
	return otherPronounZH.MatchString(s) || startsWithRelationZH(strings.TrimPrefix(s, "我")) != ""
}

// otherPronounZH is 他 or 她 opening a clause (not inside a word: 阿托伐他汀).
var otherPronounZH = regexp.MustCompile(`(?:^|[，,。；;！!？?\s和跟])(?:他|她)`)

// serviceOfZH maps what is done for the speaker at a place to the service whose giver
// the place is: "在楼下那家剪头发" names the hairdresser.
var serviceOfZH = map[string]string{"剪头发": "hair", "剪头": "hair", "理发": "hair", "做头发": "hair", "看牙": "dentist",
	"拿药": "pharmacy", "取药": "pharmacy", "买药": "pharmacy"}
