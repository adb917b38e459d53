package extractor

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// A profile pasted as a form ("Name: Joanna Reyes", "Role: QA lead", "城市：青岛") states
// each field as a sentence would. formFields rewrites the labelled fields of a turn as
// those sentences, so the rules that read "My name is …" read the form too.

// fieldLabelEN and fieldLabelZH find a label where a field starts: at the start of a
// sentence, or after a separator within it ("Name: Jo | City: Leeds").
var (
	fieldLabelEN = regexp.MustCompile(`(?i)(?:^|[,;|/•]\s*|\s[-–]\s)[-*•]?\s*(full name|name|nickname|job title|job|title|role|occupation|profession|position|location|city|based in|lives in|home|hometown|from|company|employer|works at|time ?zone|tz|birthday|date of birth|dob|email|phone|diet|dietary restrictions|allergies|allergy|languages?|pronouns|partner|spouse|wife|husband|kids|children|dog|cat)\s*[:：=]\s*`)
	fieldLabelZH = regexp.MustCompile(`(?:^|[，,；;|/、]\s*)[-*•]?\s*(姓名|名字|称呼|职业|职位|岗位|工作|城市|所在地|坐标|现居|常住|住址|公司|单位|老家|籍贯|生日|时区|邮箱|过敏|忌口)\s*[:：]\s*`)
)

// maxFormBytes bounds a turn read as a pasted form.
const maxFormBytes = 2000

// formFields returns text with its labelled fields written as statements; text without a
// field at the start of a sentence is returned as it is.
func formFields(text string) string {
	// A form is short and has its labels' colons; a long text is read sentence by sentence.
	if len(text) > maxFormBytes || !strings.ContainsAny(text, ":：=") || !fieldLabelEN.MatchString(text) && !fieldLabelZH.MatchString(text) {
		return text
	}
	sents := splitSentences(text)
	changed := false
	for i, s := range sents {
		zh := hasHan(s)
		label := fieldLabelEN
		if zh {
			label = fieldLabelZH
		}
		locs := label.FindAllStringSubmatchIndex(s, -1)
		if len(locs) == 0 || !formLead(s[:locs[0][0]], zh) {
			continue
		}
		var out []string
		for j, loc := range locs {
			end := len(s)
			if j+1 < len(locs) {
				end = locs[j+1][0]
			}
			v := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s[loc[1]:end]), ".。;；,，"))
			if v == "" {
				continue
			}
			if st := fieldStatement(strings.ToLower(s[loc[2]:loc[3]]), v, zh); st != "" {
				out = append(out, st)
			}
		}
		if len(out) == 0 {
			continue
		}
		sep, end := ". ", "."
		if zh {
			sep, end = "。", "。"
		}
		sents[i] = strings.Join(out, sep) + end
		changed = true
	}
	if !changed {
		return text
	}
	sep := " "
	if hasHan(text) {
		sep = ""
	}
	return strings.Join(sents, sep)
}

// formLead reports text before a form's first field that only announces it ("About me",
// "自我介绍一下"): short, and no sentence of its own.
func formLead(lead string, zh bool) bool {
	lead = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(lead), "-–:：,，"))
	if lead == "" {
		return true
	}
	if zh {
		return utf8.RuneCountInString(lead) <= 8 && !strings.ContainsAny(lead, "。！？")
	}
	return len(strings.Fields(lead)) <= 3 && formLeadEN.MatchString(lead)
}

var formLeadEN = regexp.MustCompile(`(?i)^(?:(?:a\s+)?(?:quick|short|little|brief)\s+)?(?:about me|intro|introduction|profile|my profile|my details|details|me|bio|who i am|background|context)$`)

// fieldStatement is what a field says, in the words the rules read; "" for a field whose
// value does not fit it (a name that is not a name).
func fieldStatement(label, v string, zh bool) string {
	if zh {
		switch label {
		case "姓名", "名字", "称呼":
			return "我叫" + v
		case "职业", "职位", "岗位", "工作":
			return jobAnswerZH(nil, v)
		case "城市", "所在地", "坐标", "现居", "常住", "住址":
			return "我住在" + v
		case "公司", "单位":
			return "我在" + v + "上班"
		case "老家", "籍贯":
			return "我老家是" + v
		case "生日":
			return "我的生日是" + v
		case "时区":
			return "我的时区是" + v
		case "邮箱":
			return "我的邮箱是" + v
		case "过敏":
			return "我对" + v + "过敏"
		case "忌口":
			return "我不吃" + v
		}
		return ""
	}
	named := func(who string) string {
		if !startsUpper(v) {
			return ""
		}
		return "My " + who + "'s name is " + v
	}
	switch label {
	case "name", "full name":
		if !startsUpper(v) {
			return ""
		}
		return "My name is " + v
	case "nickname":
		return "Call me " + v
	case "job", "job title", "title", "role", "occupation", "profession", "position":
		return jobAnswer(nil, v)
	case "location", "city", "based in", "lives in", "home":
		return "I live in " + v
	case "hometown", "from":
		return "I'm from " + v
	case "company", "employer", "works at":
		return "I work at " + v
	case "timezone", "time zone", "tz":
		return "My time zone is " + v
	case "birthday", "date of birth", "dob":
		return "My birthday is " + v
	case "email":
		return "My email is " + v
	case "phone":
		return "My phone number is " + v
	case "diet", "dietary restrictions":
		return dietAnswer(nil, v)
	case "allergies", "allergy":
		return allergyAnswer(nil, v)
	case "language", "languages":
		return "I speak " + v
	case "pronouns":
		return "My pronouns are " + v
	case "partner", "spouse", "wife", "husband", "dog", "cat":
		return named(label)
	case "kids", "children":
		return "My kids are " + v
	}
	return ""
}
