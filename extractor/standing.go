package extractor

import (
	"regexp"
	"strings"
	"time"
)

// A relation's standing fact, told in the present ("My mom works at a bakery downtown",
// "我妹妹在深圳做设计"): no rule of a named slot took it, and it is not an event of a day.
var (
	relStandingEN = regexp.MustCompile(`^(?i:(?:and|but|so|also|oh|well)[,]?\s+)*(?i:my|our)\s+(?i:(?:older|younger|big|little|eldest|oldest|youngest|twin)\s+)?((?i:` + relEN + `|eldest|oldest|youngest|middle one|middle child|twins|boys|girls))(?i:s)?(?:\s+\p{Lu}[\p{L}'-]+)?,?\s+(?i:(?:still|now|also|usually|mostly|really|actually|currently|basically)\s+)?(?i:(works|pulls|plays|teaches|lives|runs|owns|studies|coaches|drives|speaks|volunteers|snores|goes\s+to|attends|manages|writes|sings|paints|knits|cooks|bakes|collects|trains|races|rides|sells|builds|fixes|designs|does))\b`)
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
