package extractor

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// TimeUnit is the span a relative date expression names.
type TimeUnit int

// Units of a resolved expression. A week runs Monday to Sunday (ISO, and how 下周 is meant).
const (
	UnitDay TimeUnit = iota + 1
	UnitWeek
	UnitWeekend
	UnitMonth
	UnitYear
)

// TimeMatch is one relative date expression found in a text.
type TimeMatch struct {
	Start, End int    // byte offsets of the expression in the text
	Text       string // the expression as written
	At         time.Time
	// Until is the exclusive end of the period the expression names: the next day for a
	// day, the Monday after for a week. It is what a temporary state expires at.
	Until time.Time
	Unit  TimeUnit
}

// Label renders the absolute date (or range) the match stands for, as RewriteRelative inserts it.
func (m TimeMatch) Label(zh bool) string {
	const day = "2006-01-02"
	switch m.Unit {
	case UnitWeek, UnitWeekend:
		sep := " to "
		if zh {
			sep = "至"
		}
		return m.At.Format(day) + sep + m.Until.AddDate(0, 0, -1).Format(day)
	case UnitMonth:
		return m.At.Format("2006-01")
	case UnitYear:
		return m.At.Format("2006")
	default:
		return m.At.Format(day)
	}
}

type period struct {
	at    time.Time
	unit  TimeUnit
	clock bool // keep ref's time of day ("today")
}

type timeRule struct {
	re *regexp.Regexp
	// group is the submatch that is the expression itself ("until Friday" → "Friday"), so
	// that a rewrite annotates the date and not the preposition.
	group   int
	resolve func(m []string, ref time.Time) (period, bool)
	// tensed resolves an expression that names a day without saying which one ("on
	// Saturday", "on the 14th", "14号"): the sentence's tense picks the last one or the
	// next one. Used instead of resolve when set.
	tensed func(m []string, ref time.Time, t tense) (period, bool)
	// anyMood resolves a tensed expression in a habit or a rule too: "not in March" is
	// still March, where "no calls on Fridays" is no one Friday.
	anyMood bool
	// notAfter rejects a match preceded by one of these (每周五前 is every Friday, not one).
	notAfter []string
}

// Temporal finds relative date expressions (English and Chinese) and resolves them against
// a reference time. It holds only compiled patterns and is safe for concurrent use.
type Temporal struct {
	rules []timeRule
}

// NewTemporal compiles the expression rules.
func NewTemporal() *Temporal {
	const (
		enDays   = `monday|tuesday|wednesday|thursday|friday|saturday|sunday`
		enNum    = `\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve`
		zhNum    = `\d{1,3}|[一二两三四五六七八九十]{1,3}`
		enMonths = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`
	)
	shift := func(days int) func([]string, time.Time) (period, bool) {
		return func(_ []string, ref time.Time) (period, bool) {
			return period{at: dayOf(ref, days), unit: UnitDay}, true
		}
	}
	today := func(_ []string, ref time.Time) (period, bool) {
		return period{at: ref, unit: UnitDay, clock: true}, true
	}
	re := regexp.MustCompile
	return &Temporal{rules: []timeRule{
		{re: re(`(?i)\bthe day after tomorrow\b`), resolve: shift(2)},
		{re: re(`(?i)\bthe day before yesterday\b`), resolve: shift(-2)},
		{re: re(`(?i)\b(?:today|tonight|this (?:morning|afternoon|evening))\b`), resolve: today},
		{re: re(`(?i)\b(?:yesterday|last night)\b`), resolve: shift(-1)},
		{re: re(`(?i)\btomorrow\b`), resolve: shift(1)},
		{re: re(`(?i)\b(next|this|last|coming)\s+(` + enDays + `)\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekdayIn(ref, strings.ToLower(m[1]), enWeekday(m[2])), unit: UnitDay}, true
		}},
		{re: re(`(?i)\b(next|this|last)\s+week\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekStart(ref).AddDate(0, 0, 7*weekOffset(m[1])), unit: UnitWeek}, true
		}},
		{re: re(`(?i)\b(next|this|last)\s+weekend\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekStart(ref).AddDate(0, 0, 7*weekOffset(m[1])+5), unit: UnitWeekend}, true
		}},
		{re: re(`(?i)\b(next|this|last)\s+month\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: monthStart(ref, weekOffset(m[1])), unit: UnitMonth}, true
		}},
		{re: re(`(?i)\b(next|this|last)\s+year\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: yearStart(ref, weekOffset(m[1])), unit: UnitYear}, true
		}},
		// A month by name needs a word before it ("in May", "last March"): alone, "may"
		// and "march" are verbs as often as months (namedMonth picks the year).
		{re: re(`(?i)\b(next|last|this|in|by|until|since|early|late|mid-?)\s*(` + enMonths + `)\b(,?\s+\d{4}\b)?`), group: 2, anyMood: true, tensed: func(m []string, ref time.Time, t tense) (period, bool) {
			if m[3] != "" {
				return period{}, false // "in June 2027" names its year: a date already
			}
			mode := strings.ToLower(strings.TrimSuffix(m[1], "-"))
			switch {
			case mode == "since" || mode != "next" && mode != "last" && mode != "this" && t == tensePast:
				mode = "past" // "joined in March", said in December: the March just gone
			case mode == "by" || mode == "until" || mode != "next" && mode != "last" && mode != "this" && t == tenseAhead && futureWords.MatchString(strings.ToLower(m[0])):
				mode = "ahead"
			}
			return period{at: namedMonth(ref, mode, enMonth(m[2])), unit: UnitMonth}, true
		}},
		{re: re(`(?i)\b(` + enNum + `)\s+(months?|years?)\s+ago\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return nMonths(ref, m[1], m[2], -1)
		}},
		{re: re(`(?i)\bin\s+(` + enNum + `)\s+(months?|years?)\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return nMonths(ref, m[1], m[2], 1)
		}},
		{re: re(`前年|去年|今年|明年|后年`), resolve: func(m []string, ref time.Time) (period, bool) {
			off := map[string]int{"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}[m[0]]
			return period{at: yearStart(ref, off), unit: UnitYear}, true
		}},
		{re: re(`(?i)\bin\s+(` + enNum + `)\s+(days?|weeks?)\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return nDays(ref, m[1], m[2], 1)
		}},
		{re: re(`(?i)\b(` + enNum + `)\s+(days?|weeks?)\s+ago\b`), resolve: func(m []string, ref time.Time) (period, bool) {
			return nDays(ref, m[1], m[2], -1)
		}},
		{re: re(`(?i)\b(?:until|till|through|by|before)\s+(` + enDays + `)\b`), group: 1, resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekdayIn(ref, "until", enWeekday(m[1])), unit: UnitDay}, true
		}},
		{re: re(`大后天|大前天|前天|后天|昨天|昨晚|昨日|明天|明早|明晚|明日|今天|今晚|今早|今日`), resolve: func(m []string, ref time.Time) (period, bool) {
			switch m[0] {
			case "大后天":
				return shift(3)(m, ref)
			case "大前天":
				return shift(-3)(m, ref)
			case "前天":
				return shift(-2)(m, ref)
			case "后天":
				return shift(2)(m, ref)
			case "昨天", "昨晚", "昨日":
				return shift(-1)(m, ref)
			case "明天", "明早", "明晚", "明日":
				return shift(1)(m, ref)
			}
			return today(m, ref)
		}},
		{re: re(`(下|上|这|本)个?(?:周|星期|礼拜)([一二三四五六日天末])`), resolve: func(m []string, ref time.Time) (period, bool) {
			if m[2] == "末" {
				return period{at: weekStart(ref).AddDate(0, 0, 7*weekOffset(m[1])+5), unit: UnitWeekend}, true
			}
			return period{at: weekdayIn(ref, m[1], zhWeekday(m[2])), unit: UnitDay}, true
		}},
		{re: re(`(下|上|这|本)个?(?:周|星期|礼拜)`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekStart(ref).AddDate(0, 0, 7*weekOffset(m[1])), unit: UnitWeek}, true
		}},
		{re: re(`(下|上|这|本)个?月`), resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: monthStart(ref, weekOffset(m[1])), unit: UnitMonth}, true
		}},
		{re: re(`(` + zhNum + `)个?(天|周|星期|礼拜)(以后|之后|后|以前|之前|前)`), resolve: func(m []string, ref time.Time) (period, bool) {
			sign := 1
			if strings.HasSuffix(m[3], "前") {
				sign = -1
			}
			unit := "days"
			if m[2] != "天" {
				unit = "weeks"
			}
			return nDays(ref, m[1], unit, sign)
		}},
		{re: re(`(?:直到|截止到|截止|到)((?:周|星期|礼拜)([一二三四五六日天]))`), group: 1,
			// "挪到周日" moves a day, it does not end at one.
			notAfter: []string{"挪到", "改到", "换到", "调到", "推到", "延到", "提前到", "放到", "移到"}, resolve: func(m []string, ref time.Time) (period, bool) {
				return period{at: weekdayIn(ref, "until", zhWeekday(m[2])), unit: UnitDay}, true
			}},
		{re: re(`((?:周|星期|礼拜)([一二三四五六日天]))(?:之前|以前|前|为止)`), group: 1, notAfter: []string{"每", "每个"}, resolve: func(m []string, ref time.Time) (period, bool) {
			return period{at: weekdayIn(ref, "until", zhWeekday(m[2])), unit: UnitDay}, true
		}},
		// A weekday alone ("on Saturday"; "on Saturdays" is a habit, not a day).
		{re: re(`(?i)\bon\s+(` + enDays + `)\b(,?\s+(?:the\s+)?\d)?`), group: 1, tensed: func(m []string, ref time.Time, t tense) (period, bool) {
			if m[2] != "" {
				return period{}, false // "on Friday the 12th": the day of the month says which
			}
			return period{at: nearestWeekday(ref, enWeekday(m[1]), t), unit: UnitDay}, true
		}},
		{re: re(`(?i)\b(?:` + enDays + `),?\s+(the\s+(\d{1,2})(?:st|nd|rd|th))\b(\s+(?:of\s+)?(?:` + enMonths + `)\b)?`), group: 1, tensed: func(m []string, ref time.Time, t tense) (period, bool) {
			return dayOfMonth(ref, m[2], m[3] != "", t)
		}},
		// A day of the month alone ("on the 14th"); with its month it is a date already.
		{re: re(`(?i)\b(?:on|by|until|till|to|before|after|from|since|for)\s+(the\s+(\d{1,2})(?:st|nd|rd|th))\b(\s+(?:of\s+)?(?:` + enMonths + `)\b)?`), group: 1, tensed: func(m []string, ref time.Time, t tense) (period, bool) {
			return dayOfMonth(ref, m[2], m[3] != "", t)
		}},
		// 14号 / 14日 without a month (3月14日 is a date already; 5号线, 3号楼 are not days).
		{re: re(`(?:^|[^\d月./-])((\d{1,2})[号日])([线楼房床门位机车球店馆院厅桌座])?`), group: 1, tensed: func(m []string, ref time.Time, t tense) (period, bool) {
			return dayOfMonth(ref, m[2], m[3] != "", t)
		}},
	}}
}

// Find returns the relative date expressions of text, in order and not overlapping (at one
// position the longest wins, so 下周五 is one expression, not 下周 and a stray 五).
func (tp *Temporal) Find(text string, ref time.Time) []TimeMatch {
	var all []TimeMatch
	for _, r := range tp.rules {
		for _, idx := range r.re.FindAllStringSubmatchIndex(text, -1) {
			m := make([]string, len(idx)/2)
			for i := range m {
				if idx[2*i] >= 0 {
					m[i] = text[idx[2*i]:idx[2*i+1]]
				}
			}
			start, end := idx[2*r.group], idx[2*r.group+1]
			if precededBy(text[:start], r.notAfter) {
				continue
			}
			var p period
			var ok bool
			if r.tensed != nil {
				t := tenseAround(text, start)
				if t == tenseHabit && !r.anyMood {
					continue // "no meetings on Fridays", "never on the 1st": a rule, not a day
				}
				p, ok = r.tensed(m, ref, t)
			} else {
				p, ok = r.resolve(m, ref)
			}
			if !ok {
				continue
			}
			at := p.at
			if !p.clock {
				at = dayOf(p.at, 0)
			}
			all = append(all, TimeMatch{Start: start, End: end, Text: text[start:end], At: at, Until: p.until(), Unit: p.unit})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Start != all[j].Start {
			return all[i].Start < all[j].Start
		}
		return all[i].End-all[i].Start > all[j].End-all[j].Start
	})
	out := all[:0]
	end := -1
	for _, m := range all {
		if m.Start >= end {
			out = append(out, m)
			end = m.End
		}
	}
	for i := 1; i < len(out); i++ {
		// "from the 23rd until the 2nd", "周五到下周一": a span ends after it starts.
		prev, m := out[i-1], &out[i]
		if m.Unit != UnitDay || !m.At.Before(prev.At) || !spanJoin.MatchString(text[prev.End:m.Start]) {
			continue
		}
		if dayOfMonthText.MatchString(m.Text) {
			m.At = m.At.AddDate(0, 1, 0)
		} else {
			m.At = m.At.AddDate(0, 0, 7)
		}
		m.Until = dayOf(m.At, 1)
	}
	return out
}

// spanJoin is what joins the first and the last day of a span; dayOfMonthText is a day
// told by its number alone.
var (
	spanJoin       = regexp.MustCompile(`^\s*(?:\(\S+\)\s*)?(?:to|until|till|through|thru|-|–|到|至)\s*(?:the\s+)?$`)
	dayOfMonthText = regexp.MustCompile(`(?i)^the\s+\d|\d[号日]$`)
)

// Resolve returns the absolute time of the first relative expression of text.
func (tp *Temporal) Resolve(text string, ref time.Time) (time.Time, bool) {
	ms := tp.Find(text, ref)
	if len(ms) == 0 {
		return time.Time{}, false
	}
	return ms[0].At, true
}

// Rewrite appends the absolute date after every relative expression, so that a memory
// written from the text still means the same thing next month. Already annotated
// expressions are left alone, which makes Rewrite idempotent.
func (tp *Temporal) Rewrite(text string, ref time.Time) string {
	ms := tp.Find(text, ref)
	if len(ms) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(text[last:m.End])
		last = m.End
		if annotated(text[m.End:]) {
			continue
		}
		if hasHan(m.Text) {
			b.WriteString("(" + m.Label(true) + ")")
		} else {
			b.WriteString(" (" + m.Label(false) + ")")
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

// ResolveTime returns the absolute time of the first relative date expression in text:
// the start of that day in ref's location, or ref itself for "today"/今天. It compiles its
// rules on every call; hot paths should keep a Temporal.
func ResolveTime(text string, ref time.Time) (time.Time, bool) {
	return NewTemporal().Resolve(text, ref)
}

// RewriteRelative appends the absolute date after each relative date expression:
// "明天下午开会" → "明天(2026-01-06)下午开会", "yesterday the payment failed" →
// "yesterday (2026-01-04) the payment failed". See ResolveTime about cost.
func RewriteRelative(text string, ref time.Time) string {
	return NewTemporal().Rewrite(text, ref)
}

func (p period) until() time.Time {
	d := dayOf(p.at, 0)
	switch p.unit {
	case UnitWeek:
		return d.AddDate(0, 0, 7)
	case UnitWeekend:
		return d.AddDate(0, 0, 2)
	case UnitMonth:
		return d.AddDate(0, 1, 0)
	case UnitYear:
		return d.AddDate(1, 0, 0)
	default:
		return d.AddDate(0, 0, 1)
	}
}

// dayOf is the start of the day offset days from ref, in ref's location.
func dayOf(ref time.Time, offset int) time.Time {
	y, m, d := ref.Date()
	return time.Date(y, m, d+offset, 0, 0, 0, 0, ref.Location())
}

// mondayIndex is 0 for Monday … 6 for Sunday.
func mondayIndex(t time.Time) int { return (int(t.Weekday()) + 6) % 7 }

func weekStart(ref time.Time) time.Time { return dayOf(ref, -mondayIndex(ref)) }

func monthStart(ref time.Time, offset int) time.Time {
	y, m, _ := ref.Date()
	return time.Date(y, m+time.Month(offset), 1, 0, 0, 0, 0, ref.Location())
}

func yearStart(ref time.Time, offset int) time.Time {
	return time.Date(ref.Year()+offset, 1, 1, 0, 0, 0, 0, ref.Location())
}

// enMonth reads an English month name or its abbreviation (0 when it is none).
func enMonth(s string) time.Month {
	ls := strings.ToLower(s)
	if len(ls) < 3 {
		return 0
	}
	for m := time.January; m <= time.December; m++ {
		if strings.HasPrefix(strings.ToLower(m.String()), ls) {
			return m
		}
	}
	return 0
}

// namedMonth resolves a month named with mode: "next" is its first occurrence after ref's
// month, "last" its last one before, "this" the one of ref's year, anything else ("in
// May") the occurrence nearest ref's month, the later one at six months either way: said
// in March, "in November" is most often the one just past and "in April" the one ahead.
func namedMonth(ref time.Time, mode string, month time.Month) time.Time {
	y := ref.Year()
	switch mode {
	case "next":
		if month <= ref.Month() {
			y++
		}
	case "last":
		if month >= ref.Month() {
			y--
		}
	case "this":
	case "past":
		if month > ref.Month() {
			y--
		}
	case "ahead":
		if month < ref.Month() {
			y++
		}
	default:
		switch d := int(month) - int(ref.Month()); {
		case d > 6:
			y--
		case d <= -6:
			y++
		}
	}
	return time.Date(y, month, 1, 0, 0, 0, 0, ref.Location())
}

// nMonths resolves "in N months" / "N years ago" to the month it lands in.
func nMonths(ref time.Time, num, unit string, sign int) (period, bool) {
	n, ok := parseCount(num)
	if !ok {
		return period{}, false
	}
	if strings.HasPrefix(strings.ToLower(unit), "year") {
		return period{at: yearStart(ref, sign*n), unit: UnitYear}, true
	}
	return period{at: monthStart(ref, sign*n), unit: UnitMonth}, true
}

// nearestWeekday is the weekday idx (0 = Monday) nearest ref on the side the tense
// says: the last one on or before ref for the past, else the next one on or after it.
func nearestWeekday(ref time.Time, idx int, t tense) time.Time {
	if t == tensePast || t == tenseRecent {
		return dayOf(ref, -((mondayIndex(ref) - idx + 7) % 7))
	}
	return dayOf(ref, (idx-mondayIndex(ref)+7)%7)
}

// dayOfMonth resolves a day of the month told without its month: this month's if the
// tense allows it, else the month before (past) or after (future). named rejects a day
// whose month or use follows it ("the 14th of May", 5号线).
func dayOfMonth(ref time.Time, day string, named bool, t tense) (period, bool) {
	d, err := strconv.Atoi(day)
	if err != nil || named || d < 1 || d > 31 {
		return period{}, false
	}
	at := time.Date(ref.Year(), ref.Month(), d, 0, 0, 0, 0, ref.Location())
	today := dayOf(ref, 0)
	past := t == tensePast
	if t == tenseRecent {
		// Done if the day was in the week before, else ahead.
		last := at
		if last.After(today) {
			last = time.Date(ref.Year(), ref.Month()-1, d, 0, 0, 0, 0, ref.Location())
		}
		past = !last.Before(today.AddDate(0, 0, -7))
	}
	switch {
	case past && at.After(today):
		at = time.Date(ref.Year(), ref.Month()-1, d, 0, 0, 0, 0, ref.Location())
	case !past && at.Before(today):
		at = time.Date(ref.Year(), ref.Month()+1, d, 0, 0, 0, 0, ref.Location())
	}
	if at.Day() != d {
		return period{}, false // no 31st in that month
	}
	return period{at: at, unit: UnitDay}, true
}

// tense is what the clause of a day named alone tells of it.
type tense int

const (
	tenseAhead  tense = iota
	tensePast         // a verb of the past
	tenseRecent       // 了 alone: done if lately, else about to be
	tenseHabit        // a rule or a habit: any such day, none to resolve
)

// tenseAround reads the sentence around byte at of text: whether it tells the past, and
// whether it tells a habit or a rule ("every", "never", "don't", "usually", 每), in which
// a day named alone is any such day.
func tenseAround(text string, at int) tense {
	// The clause the day is told in: "the trip got shortened, she flies home on the
	// 15th" is a day ahead.
	start := strings.LastIndexAny(text[:at], ".!?;,。！？；，") + 1
	end := len(text)
	if i := strings.IndexAny(text[at:], ".!?;,。！？；，"); i >= 0 {
		end = at + i
	}
	s := strings.ToLower(text[start:end])
	if habitWords.MatchString(s) {
		return tenseHabit
	}
	if futureWords.MatchString(s) {
		return tenseAhead
	}
	for _, w := range pastWords.FindAllString(s, -1) {
		if !arrangingWords[w] {
			return tensePast
		}
	}
	if recentZH.MatchString(s) {
		return tenseRecent
	}
	return tenseAhead
}

// arrangingWords are past verbs of arranging or reporting ("booked", "moved it to",
// "the user asked to …"): what they date is as often ahead as behind.
var arrangingWords = map[string]bool{"asked": true, "reported": true, "noted": true, "mentioned": true, "stated": true,
	"changed": true, "moved": true, "rescheduled": true, "pushed": true, "postponed": true, "booked": true,
	"scheduled": true, "planned": true, "confirmed": true, "arranged": true, "delayed": true, "shortened": true,
	"extended": true, "updated": true, "corrected": true, "decided": true, "agreed": true, "invited": true}

var (
	habitWords = regexp.MustCompile(`\b(?:every|each|never|don't|do not|doesn't|does not|no|not|always|usually|normally|generally|typically|often|sometimes|mornings|afternoons|evenings|nights)\b|每|从不|别|不要|不能|总是|一般|通常|平时` +
		// Pay days come back every month ("I get paid on the 25th", "rent is due on the 1st").
		`|\b(?:get|gets|getting)\s+paid\b|\bpayday\b|\b(?:is|are)\s+due\b|发工资|交房租|还款日|账单日`)
	futureWords = regexp.MustCompile(`\b(?:will|'ll|shall|going to|gonna|plan(?:ning)? to|about to|due|scheduled|booked for|is on|are on|'s on|is coming|next|upcoming|tomorrow)\b|要|会|打算|准备|计划|将|下周|下个|明天|后天`)
	pastWords   = regexp.MustCompile(`\b(?:was|were|went|did|had|got|came|ran|saw|met|made|took|left|bought|paid|sent|spent|told|said|gave|found|ate|flew|drove|last|ago|yesterday|[a-z]{3,}ed)\b|过|上周|上个月|昨天|前天|已经|刚`)
	// recentZH is 了 alone: done, or about to be ("15号就回去了"); a day within the week
	// before is done, one further back is ahead.
	recentZH = regexp.MustCompile(`了`)
)

// weekOffset maps next/下 to +1, last/上 to -1 and this/这/本 to 0.
func weekOffset(mode string) int {
	switch strings.ToLower(mode) {
	case "next", "下":
		return 1
	case "last", "上":
		return -1
	}
	return 0
}

// weekdayIn resolves a weekday (0 = Monday) by mode: this/next/last name a calendar week;
// "coming" is the next such day strictly after ref; "until" is the next on or after ref.
func weekdayIn(ref time.Time, mode string, idx int) time.Time {
	switch mode {
	case "coming", "until":
		delta := (idx - mondayIndex(ref) + 7) % 7
		if delta == 0 && mode == "coming" {
			delta = 7
		}
		return dayOf(ref, delta)
	}
	return weekStart(ref).AddDate(0, 0, 7*weekOffset(mode)+idx)
}

func enWeekday(s string) int {
	switch strings.ToLower(s) {
	case "monday":
		return 0
	case "tuesday":
		return 1
	case "wednesday":
		return 2
	case "thursday":
		return 3
	case "friday":
		return 4
	case "saturday":
		return 5
	}
	return 6
}

func zhWeekday(s string) int {
	if i := strings.Index("一二三四五六", s); i >= 0 {
		return i / len("一")
	}
	return 6 // 日, 天
}

func nDays(ref time.Time, num, unit string, sign int) (period, bool) {
	n, ok := parseCount(num)
	if !ok {
		return period{}, false
	}
	if strings.HasPrefix(strings.ToLower(unit), "week") {
		n *= 7
	}
	return period{at: dayOf(ref, sign*n), unit: UnitDay}, true
}

// parseCount reads digits, English number words and Chinese numerals up to 99.
func parseCount(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	ls := strings.ToLower(s)
	if ls == "a" || ls == "an" {
		return 1, true
	}
	for i, w := range words {
		if ls == w {
			return i, true
		}
	}
	digit := func(r rune) (int, bool) {
		if r == '两' {
			return 2, true
		}
		i := strings.IndexRune("零一二三四五六七八九", r)
		if i < 0 {
			return 0, false
		}
		return i / len("零"), true
	}
	rs := []rune(s)
	switch ten := strings.IndexRune(s, '十'); {
	case len(rs) == 1 && rs[0] == '十':
		return 10, true
	case ten < 0 && len(rs) == 1:
		return digit(rs[0])
	case ten >= 0:
		tens, ones := 1, 0
		before, after := []rune(s[:ten]), []rune(s[ten+len("十"):])
		if len(before) > 1 || len(after) > 1 {
			return 0, false
		}
		if len(before) == 1 {
			d, ok := digit(before[0])
			if !ok {
				return 0, false
			}
			tens = d
		}
		if len(after) == 1 {
			d, ok := digit(after[0])
			if !ok {
				return 0, false
			}
			ones = d
		}
		return tens*10 + ones, true
	}
	return 0, false
}

func precededBy(before string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasSuffix(before, p) {
			return true
		}
	}
	return false
}

// annotated reports whether rest already starts with a "(2026-…" annotation.
func annotated(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	for _, open := range []string{"(", "（"} {
		if after, ok := strings.CutPrefix(rest, open); ok && after != "" && after[0] >= '0' && after[0] <= '9' {
			return true
		}
	}
	return false
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
