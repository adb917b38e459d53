package extractor

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Offline extractor identity.
const (
	OfflineName    = "offline-rules"
	OfflineVersion = "2.0.0" // 2: clause rules, the speaker's story, tool steps
)

// Importance by kind of memory: what constrains the agent or identifies the user matters
// most, one-off events least.
const (
	impConstraint = 0.8
	impIdentity   = 0.8
	impRemember   = 0.8
	impPreference = 0.7
	impDecision   = 0.7
	impSkill      = 0.6
	impState      = 0.5
	impClaim      = 0.5
	impEvent      = 0.4

	confExplicit = 0.9
	confHedged   = 0.7 // "尽量", "maybe", "I think"
	confState    = 0.8
	confEvent    = 0.8
	confClaim    = 0.5
)

// Offline is the deterministic bilingual (Chinese, English) rule extractor engram uses when
// no LLM is configured. It extracts the gate's explicit signals sentence by sentence from
// user turns, price and policy claims from assistant turns (for trust to judge), and
// failure→success recoveries and finished tasks from tool turns. Content is rewritten in
// the third person ("The user …", "用户…") with relative dates made absolute.
//
// Keys it derives (normalised slots, so that conflicting values meet deterministically):
// meeting.avoid_time, meeting.preferred_time, meeting.room, meeting.preference,
// allergy.<x>, food.diet, food.cuisine.<x>, food.spicy, food.ingredient.<x>, drink.<x>,
// language.preference, ui.theme, editor.theme, editor.preference, code.indentation,
// user.timezone, schedule.working_hours, schedule.sleep, notification.quiet_hours,
// notification.channel, travel.seat, response.style, user.name, user.location,
// user.employer, user.work_location, user.origin, user.role, user.birthday, user.email,
// user.phone, user.address, user.status (temporary, with expire_at),
// relation.<x> (manager, spouse, child …), favorite.<x>, tool.<name>.recovery[.<error>];
// from the clause rules (clauses.go): relation.<who>.name|job|employer|school,
// pet.<kind>.name, user.device.<kind>, user.health.<x>, taste.<thing>, plan.<what>,
// procedure.<what>. Statements about the speaker that no rule takes become one episodic
// memory per turn; a turn's metadata "speaker" or "name" names the speaker in content.
type Offline struct {
	lex     *lexicon
	topics  topicLexicon
	answers *answerFrames
	slots   *topicRules

	hedge, permanent       *regexp.Regexp
	rememberZH, rememberEN *regexp.Regexp
	rememberAnyEN          *regexp.Regexp // the cue anywhere in a sentence, and what follows it
	fillerZH, fillerEN     *regexp.Regexp
	leadEN, imperativeEN   *regexp.Regexp
	letsEN, conclusionZH   *regexp.Regexp
	pronounEN, verbEN      *regexp.Regexp
	reason                 *regexp.Regexp
}

var _ Extractor = (*Offline)(nil)

// NewOffline compiles the extractor's rules.
func NewOffline() *Offline {
	re := regexp.MustCompile
	return &Offline{
		lex:     newLexicon(),
		topics:  newTopicLexicon(),
		answers: newAnswerFrames(),
		slots:   newTopicRules(),
		hedge:   re(`尽量|尽可能|可能|也许|大概|或许|好像|如果可以|\bmaybe\b|\bprobably\b|\bperhaps\b|\bmight\b|\bi think\b|\bi guess\b|\bkind of\b|\bsort of\b|\bif possible\b|\bideally\b|\bwhen possible\b`),
		permanent: re(`以后|今后|往后|之后|从此|从现在|从.{1,8}(?:起|开始)|每|总是|一直|永远|从不|\balways\b|\bevery\b|\bfrom now on\b|\bgoing forward\b|\bin the future\b|\bnever\b|\bstarting\b|\bonwards\b` +
			// Giving something up lasts ("no more X", 不再), and a date a state holds since
			// ("since last month") is not when it ends.
			`|\bno more\b|\bno longer\b|\bany ?more\b|\bfull stop\b|\bfor good\b|\bsince\b|\bas of\b|\bexpir|到期|\bfrom here on\b|\bhenceforth\b|\bsober\b|\bteetotal\b|\ballerg|过敏|开始|\bstarts?\b|\bbegins?\b|\bjoins?\b|不再|再也不|再也没|戒了|戒掉|戒酒|戒烟` +
			// A timetable moved for a term holds for the term, not the day it names.
			`|改时间|改了时间|这学期|本学期|\bthis (?:semester|term|season)\b`),
		rememberZH:    re(`^(?:请)?(?:帮我|给我|替我)?(?:记住|记得|别忘了|不要忘了|不要忘记|记下来|记一下)[：:，,]?\s*`),
		rememberEN:    re(`(?i)^(?:please\s+)?(?:remember|don't forget|do not forget|keep in mind|make a note|note to self|note)(?:\s+that)?[:,]?\s+`),
		rememberAnyEN: re(`(?i)\b(?:remember|don't forget|do not forget|keep in mind)\b(?:\s+that)?[:,]?\s*`),
		fillerZH:      re(`^(?:(?:好的|嗯+|对了|另外|还有|哦|噢|那个|然后|顺便说一下|顺便|话说|大家好|你好|您好|各位好|更正一下|纠正一下|我说错了|(?:之前|刚才|前面|上次)?说错了|不好意思|哎呀|哎哟|唉|诶|欸|(?:跟你|和你)(?:说|讲)(?:个事儿?|一声)?|告诉你|说个事儿?|汇报一下|报告一下|ok|OK)[，,、！!：:\s]*)+`),
		fillerEN:      re(`(?i)^(?:(?:ok(?:ay)?|so|also|and|oh|btw|by the way|well|hey there|hi there|hello there|hi everyone|hello everyone|hi all|hey|hi|hello|please|pls|plz|kindly|actually|one more thing|fyi|quick intro|about me|big news|update|heads up|correction|sorry|oops|i got it wrong|i was wrong|my mistake|scratch that|whatever you do|whatever happens|no matter what|seriously|honestly|confession|full disclosure|fun fact|true story|funny thing|random thought|quick update|little update|side note|for the record|quick context|some context|for context|context|so yeah|yeah so)(?:[,:!]\s*|\s+))+`),
		leadEN:        re(`(?i)^(from now on|going forward|in the future|from today on)[,\s]+`),
		imperativeEN:  re(`(?i)^(don't|do not|never|always|avoid|make sure|stop|use|send|reply|respond|write|schedule|book|call|keep|put|add|include|remind|answer|speak|format|skip|show|give|notify|email|text|ping|check|try|pick|choose|order|set|tell|ask|only|no)\b\s*`),
		letsEN:        re(`(?i)^let's\s+`),
		conclusionZH:  re(`^(?:最终)?结论(?:是|：|:)`),
		pronounEN:     re(`(?i)\b(?:i\s+am|i'm|i\s+was|i've|i\s+have|i'd|i'll|i|me|my|mine|myself|we\s+are|we're|we\s+were|we've|we\s+have|we'd|we'll|we|us|our|ours|ourselves)\b`),
		verbEN:        re(`(?i)^\s+((?:(?:always|never|usually|often|really|also|only|sometimes|generally|mostly|still|typically|just|actually|definitely|strongly|absolutely|rarely|normally|mainly|currently|now|totally|personally|already|even|all|both|finally|recently|truly|so|still|ever|once|each|seriously|honestly|literally|basically|genuinely|occasionally|barely|hardly|simply|obviously|probably|desperately|badly|secretly|constantly|regularly|frequently|completely|slowly|quickly|kinda|sorta|low-key|lowkey)\s+)*)([a-z']+)\b`),
		reason:        re(`(?i)(?:因为|原因是|由于|\bbecause\b|\bthe reason is\b)[\s,，:：]*(.+)$`),
	}
}

// Name implements Extractor.
func (o *Offline) Name() string { return OfflineName }

// Version implements Extractor.
func (o *Offline) Version() string { return OfflineVersion }

// Model implements Extractor: the offline extractor uses none.
func (o *Offline) Model() string { return "" }

// draft is a candidate before the batch's ownership fields are attached.
type draft struct {
	typ        memory.Type
	cat        memory.Category
	key        string
	content    string
	importance float64
	confidence float64
	expire     *time.Time
	rule       string
	source     memory.Source // empty: the turn's role
	sourceIDs  []string      // empty: the turn
	meta       map[string]any
}

// Extract implements Extractor. It is deterministic: the same batch gives the same
// candidates in the same order.
func (o *Offline) Extract(ctx context.Context, b Batch) ([]memory.Candidate, error) {
	timeline := b.timeline()
	base := len(b.Window)
	recs := toolRecoveries(timeline)
	var out []memory.Candidate
	for i, t := range b.New {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("offline extraction: %w", err)
		}
		if t.Deleted {
			continue
		}
		var drafts []draft
		switch t.Role {
		case memory.RoleUser:
			// A "yes" to an assistant claim from an earlier batch: re-propose the claim so
			// that trust can promote it with this confirmation.
			if prev, ok := lastSpoken(timeline[:base+i]); ok && isConfirmation(t.Content) &&
				prev.Role == memory.RoleAssistant && indexOf(timeline[:base], prev.TurnID) >= 0 {
				for _, d := range o.fromAssistant(prev) {
					d.sourceIDs = []string{prev.TurnID}
					drafts = append(drafts, d)
				}
			}
			drafts = append(drafts, o.fromUser(o.inContext(t, timeline[:base+i]))...)
		case memory.RoleAssistant:
			drafts = o.fromAssistant(t)
		case memory.RoleTool:
			drafts = o.fromTool(timeline, base+i, recs)
		}
		name := speakerName(t)
		for _, d := range drafts {
			if t.Role == memory.RoleUser && d.source == "" {
				d.content = personalize(d.content, name)
			}
			out = append(out, o.candidate(b, t, d))
		}
	}
	return out, nil
}

func indexOf(turns []memory.Turn, id string) int {
	for i, t := range turns {
		if t.TurnID == id {
			return i
		}
	}
	return -1
}

func (o *Offline) candidate(b Batch, t memory.Turn, d draft) memory.Candidate {
	ids := d.sourceIDs
	if len(ids) == 0 {
		ids = []string{t.TurnID}
	}
	src := d.source
	if src == "" {
		src = sourceOf(t.Role)
	}
	meta := map[string]any{"rule": d.rule}
	for k, v := range d.meta {
		meta[k] = v
	}
	c := memory.Candidate{
		Tenant:           firstNonEmpty(b.Tenant, t.Tenant),
		UserID:           firstNonEmpty(b.UserID, t.UserID),
		AgentID:          firstNonEmpty(b.AgentID, t.AgentID),
		SessionID:        firstNonEmpty(b.SessionID, t.SessionID),
		Scope:            memory.ScopeUser,
		Type:             d.typ,
		Category:         d.cat,
		Key:              d.key,
		Content:          d.content,
		Importance:       d.importance,
		Confidence:       d.confidence,
		SourceTurnIDs:    append([]string(nil), ids...),
		ValidFrom:        t.OccurredAt,
		ExpireAt:         d.expire,
		Source:           src,
		Trusted:          src != memory.SourceAssistant, // ApplyTrust has the final word
		Extractor:        OfflineName,
		ExtractorVersion: OfflineVersion,
		Metadata:         meta,
	}
	clampTimes(&c) // "in a year" said at the end of 9999 must still encode
	return c
}

func sourceOf(r memory.Role) memory.Source {
	switch r {
	case memory.RoleAssistant:
		return memory.SourceAssistant
	case memory.RoleTool:
		return memory.SourceTool
	}
	return memory.SourceUser
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fromUser extracts per sentence: each statement yields the memories of its rules (one
// per fact), and the speaker's statements about themselves that no rule took become one
// episodic memory of the turn.
func (o *Offline) fromUser(t memory.Turn) []draft {
	var out []draft
	var story, corrected, correctedTos, correctedIDs []string
	var parted string
	var departed, aged []string
	var leaving []string // the sentences that tell someone or something leaving
	rule := -1           // the instruction the previous sentence gave, in out; -1 for none
	// partings are the drafts of sentences that tell the speaker parting with a thing;
	// leaves, of sentences that tell someone leaving (see leftBehind).
	var partings, leaves []int
	var whole []string                     // the story's sentences as told, partings and leavings too
	var withLeaves []string                // the same without the partings a replacement made redundant
	first, parts, leave := 0, false, false // the sentence before: its first draft, what it told
	mark := func() {
		for i := first; i < len(out); i++ {
			if parts {
				partings = append(partings, i)
			}
			if leave {
				leaves = append(leaves, i)
			}
		}
		first = len(out)
	}
	text := formFields(spokenText(t))
	sentences := splitSentences(text)
	// replacedInTurn: a sentence other than a parting tells what took the parted thing's
	// place ("Sold the old bike. Got a gravel bike instead."); only then does the parting
	// stay out of the story.
	replacedInTurn := slices.ContainsFunc(sentences, func(s string) bool {
		return !partedEN.MatchString(s) && !partedZH.MatchString(s) && replacementTold.MatchString(s)
	})
	for si, s := range sentences {
		mark()
		prev := "" // the sentence before this one, as told
		if si > 0 {
			prev = sentences[si-1]
		}
		names := departedNames(s)
		if isQuestion(strings.TrimSpace(s)) {
			names = nil // "what if Rex ran away?" tells no one leaving
		} else {
			for _, n := range agedNames(s, o.lex.clauses.notName) {
				if !slices.Contains(aged, n) {
					aged = append(aged, n)
				}
			}
		}
		for _, n := range names {
			if !slices.Contains(departed, n) {
				departed = append(departed, n)
			}
		}
		if len(names) > 0 {
			leaving = append(leaving, s)
		}
		parts, leave = partedEN.MatchString(s) || partedZH.MatchString(s), len(names) > 0
		if d, ok := o.toldRule(s, t.OccurredAt); ok {
			out = append(out, d)
			rule = len(out) - 1
			continue
		}
		q := s
		s, ok := o.lex.statement(clipSentence(s))
		if !ok {
			rule = -1
			// A question states nothing, but the names it uses are the speaker's ("is it
			// normal that our corgi Pip sheds so much?"): those are kept.
			out = append(out, o.namesAsked(q, t.OccurredAt)...)
			continue
		}
		prevRule := rule
		rule = -1
		wrong, newID := correctedValue(s), correctedID(s)
		if wrong != "" {
			corrected = append(corrected, wrong)
			correctedTos = append(correctedTos, correctedTo(s))
		}
		if newID != "" {
			correctedIDs = append(correctedIDs, newID)
		}
		fixes := wrong != "" || newID != ""
		trip := false
		if d, ok := o.tripDraft(s, t.OccurredAt); ok {
			out = append(out, d)
			trip = true
		}
		if d, ok := o.toldSteps(s, t.OccurredAt); ok {
			out = append(out, d)
			rule = len(out) - 1
			continue
		}
		if fixes {
			// A correction keeps its value clause whoever it is about ("小满生日是4月13号，
			// 不是3月14，我老搞混"): that clause is what replaces the wrong value.
			s = restoreSubject(s)
		} else {
			s = dropNegatedHave(o.lex.speakerPart(restoreSubject(s)))
		}
		if s == "" {
			continue
		}
		if o.lex.aboutListener(o.clean(s)) && !containsString(o.lex.sentenceSignals(s), SignalProcedure) {
			continue // a step of a procedure says "you" of whoever follows it
		}
		if m := partedEN.FindStringSubmatch(s); m != nil && parted == "" {
			parted = singular(strings.ToLower(m[1]))
		}
		s = dropCorrected(s)
		ds := o.classify(s, t.OccurredAt, true)
		ds = o.addClauses(ds, s, t.OccurredAt)
		if len(ds) == 0 {
			ds = o.replyLanguage(s)
		}
		ds = o.topicSlots(ds, s, t.OccurredAt)
		if forSpanDays(lowerText(s)) > 0 {
			// "…for the next three weeks", "这一个月…": whatever the sentence tells holds
			// for that long, whichever rule told it.
			for i := range ds {
				// A name or a relation told beside it ("我家的狗团子这几天没胃口") outlasts it.
				stable := strings.HasSuffix(ds[i].key, ".name") || ds[i].cat == memory.CatRelationship || ds[i].cat == memory.CatProfile
				if ds[i].expire == nil && ds[i].typ == memory.Semantic && !stable {
					ds[i].expire = o.expiry(s, t.OccurredAt)
				}
			}
		}
		if trip {
			// The trip's plan tells the sentence in its slot; a story of it beside the
			// slot would keep the old destination alive once the plan changes.
			ds = slices.DeleteFunc(ds, func(d draft) bool { return d.typ == memory.Episodic && d.key == "" })
		}
		if len(ds) == 0 && fixes {
			// A correction is a fact whatever its wording ("typo before: it's X, not Y"):
			// the memory that holds the wrong value must meet it.
			ds = []draft{o.draft(s, t.OccurredAt, memory.Semantic, memory.CatFact, "correction", impIdentity, confExplicit)}
		}
		if step := trimEnd(strings.TrimSpace(s)); prevRule >= 0 && nextStep(step) && (len(ds) == 0 || out[prevRule].typ == memory.Procedural) {
			// "…先验真；然后在系统里填单；最后抄送主管": the steps after the first go on
			// with the procedure they belong to.
			out[prevRule].content = joinSentences(out[prevRule].content, o.finish(o.pronounsOf(step), t.OccurredAt))
			rule = prevRule
			continue
		}
		if len(ds) == 0 && prevRule >= 0 && o.lex.elaboration(o.clean(s)) {
			// "Never use my own address. Invoices, labels, all of it go to the PO box.": a
			// sentence with no subject of its own goes on with the instruction before it.
			out[prevRule].content = joinSentences(out[prevRule].content, o.finish(o.clean(s), t.OccurredAt))
			rule = prevRule
			continue
		}
		if prev != "" {
			for i := range ds {
				if (ds[i].cat == memory.CatConstraint || ds[i].cat == memory.CatPreference) && proFormObject.MatchString(ds[i].content) {
					// "They put cilantro in everything again. I can't stand the stuff": the
					// thing is named in the sentence before.
					ds[i].content = joinSentences(upperFirst(o.finish(o.pronounsOf(trimEnd(o.clean(prev))), t.OccurredAt)), ds[i].content)
					if ds[i].key == "" {
						ds[i].key = o.topics.key(lowerText(ds[i].content))
					}
				}
			}
		}
		if len(ds) > 0 {
			out = append(out, ds...)
			if last := ds[len(ds)-1]; last.cat == memory.CatConstraint || last.cat == memory.CatPreference || last.typ == memory.Procedural {
				rule = len(out) - 1
			}
			// What the sentence denies ("not in Lyon anymore", "不在厦门了") is the old
			// value its rules replace: retelling it would keep the old value alive.
			rest := o.lex.dropDenied(o.clean(s))
			if toldWhole(ds) || rest == "" || !o.leftover(o.rememberZH.ReplaceAllString(o.rememberEN.ReplaceAllString(rest, ""), ""), ds) {
				continue
			}
			// The sentence says more than its rules took. Told in the slot of a value
			// that may change, the whole sentence is superseded with that value; only
			// what is stable goes into the story.
			if i := changeable(ds); i >= 0 {
				if slices.ContainsFunc(ds[i+1:], func(d draft) bool { return d.key != ds[i].key && changeable([]draft{d}) == 0 }) {
					// Two slots that change ("a nurse at St Mary's, based in Leeds"): the
					// whole sentence in one of them would keep the other's old value alive
					// when that one changes. Each slot keeps its own value; the sentence is
					// a memory of its own, told together with them, which the resolver
					// retires when it retells a value that changed.
					d := o.draft(rest, t.OccurredAt, memory.Semantic, memory.CatFact, "detail", ds[i].importance, confExplicit)
					d.expire = ds[i].expire
					out = append(out, d)
					continue
				}
				// One memory per slot: the detail takes the place of the rule's memory,
				// so that a later value of the slot supersedes all of it at once.
				d := o.draft(rest, t.OccurredAt, memory.Semantic, ds[i].cat, "detail", ds[i].importance, confExplicit)
				j := len(out) - len(ds) + i
				out[j].content, out[j].rule = d.content, "clause+detail"
				continue
			}
		}
		if rel, _ := o.relationStanding(o.clean(s)); !trip && (!o.lex.aboutOthers(o.clean(s)) || rel != "") {
			// A neighbour or a colleague who does something for the speaker as a rule
			// ("our neighbour waters the plants when we travel") is worth keeping.
			switch {
			case parts && replacedInTurn:
			case leave:
				if rest := withoutLeaving(s); rest != "" {
					story = append(story, rest)
				}
				withLeaves = append(withLeaves, s)
			default:
				story = append(story, s)
				withLeaves = append(withLeaves, s)
			}
			whole = append(whole, s)
		}
	}
	mark()
	if ownWriting.MatchString(text) {
		if m := signoffEN.FindStringSubmatch(text); m != nil && !o.lex.clauses.notName[m[1]] {
			// "Could you check my note? '… Best, Anouk'": the speaker signs their own
			// text with their name.
			d := o.draft("My name is "+m[1], t.OccurredAt, memory.Semantic, memory.CatProfile, "signature", impIdentity, confExplicit)
			d.key, d.content = "user.name", "The user's name is "+m[1]
			out = append(out, d)
		}
	}
	if len(story) > 1 {
		// A relation's standing fact told beside the speaker's news ("we get in on the
		// 9th. My dad needs a ground-floor room") is a memory of its own: it outlives the news.
		rest := story[:0:0]
		for _, s := range story {
			if rel, _ := o.relationStanding(o.clean(s)); rel != "" {
				if d, ok := o.narrative([]string{s}, t.OccurredAt); ok {
					out = append(out, d)
					continue
				}
			}
			rest = append(rest, s)
		}
		story = rest
	}
	d, ok := o.narrative(o.lex.selfStory(story), t.OccurredAt)
	if !ok && (len(out) == 0 || !slices.Equal(withLeaves, story)) {
		// Without the parting or the leaving the turn tells nothing of the speaker: the
		// news is the memory.
		told := whole
		if len(out) > 0 {
			told = withLeaves // what replaced a parting is told already
		}
		if d, ok = o.narrative(o.lex.selfStory(told), t.OccurredAt); ok {
			if rest := withoutLeaving(d.content); rest != "" {
				d.content = rest
			}
		}
	}
	if ok {
		out = append(out, d)
	}
	out = o.leftBehind(out, partings, leaves, departed)
	out = withoutDeniedTwins(out)
	out = withoutNameTwins(out)
	if parted != "" {
		// What the speaker sold or gave away: the resolver retires what they said of it
		// while they had it ("hates this van" once "sold my old van").
		setMeta(out, "parted_with", parted)
	}
	if len(out) == 0 && len(leaving) > 0 {
		// "Dr Liu retired": nothing else told, the news is the memory (and carries who
		// left, for the resolver).
		told := strings.Join(leaving, " ")
		if rest := withoutLeaving(told); len(strings.Fields(rest)) >= 4 || hasHan(rest) && utf8.RuneCountInString(rest) >= 8 {
			told = rest // what else it told; the leaving itself is in "departed"
		}
		out = append(out, o.draft(told, t.OccurredAt, memory.Episodic, memory.CatEvent, "event", impEvent, confEvent))
	}
	// A plan called off is its slot's news, not a thing gone from the speaker's life: a
	// liking of the activity stays ("loves fishing" once "钓鱼泡汤了").
	departed = slices.DeleteFunc(departed, namesAPlan)
	if len(departed) > 0 {
		// Who or what left the speaker's life, by name: the resolver retires what was
		// said of them before ("Gary does my taxes" once "Gary retired").
		setMeta(out, "departed", strings.Join(departed, "|"))
	}
	if len(aged) > 0 {
		// Whose new age the turn tells, by name: the resolver retires the age told of
		// them before ("Mira is 7" once "Mira turned 8").
		setMeta(out, "aged", strings.Join(aged, "|"))
	}
	if len(correctedIDs) > 0 {
		// The right identifier: the resolver rewrites the copies of one of its shape.
		setMeta(out, "corrects_like", correctedIDs[0])
	}
	if told := spokenText(t); t.Role == memory.RoleUser && (correctionCueZH.MatchString(told) || correctionCueEN.MatchString(told)) {
		// "说错了，…", "scratch that, …": what the turn tells of a slot corrects the slot's
		// value even where the two read alike ("郑晓东" → "郑晓冬").
		for i := range out {
			if out[i].key != "" {
				setMeta(out[i:i+1], "correction", true)
			}
		}
	}
	if len(corrected) > 0 {
		// The value a correction replaces: the resolver retires the memory that holds it.
		setMeta(out, "corrects", corrected[0])
		if correctedTos[0] != "" {
			setMeta(out, "corrected_to", correctedTos[0])
		}
	}
	return out
}

// leftBehind keeps what a turn tells of the present, not of what left it: a memory
// that retells the old value keeps it alive beside the new one ("Gave up on the old
// laptop. Got a new one with …", "Dana retired, so Priya took over my account"). The
// resolver retires what was said of the departed from the drafts' metadata, so their
// words go when the turn says something else: an unkeyed draft of a sentence of parting
// goes whole, and the clauses that tell someone leaving are taken out of the drafts (a
// slot's value told only with the one it replaces, "moved from X to Y", stays whole).
// partings and leaves index out, ascending.
func (o *Offline) leftBehind(out []draft, partings, leaves []int, departed []string) []draft {
	if len(partings) == 0 && len(leaves) == 0 {
		return out
	}
	gone := map[int]bool{}
	isParting := map[int]bool{}
	for _, i := range partings {
		isParting[i] = true
	}
	replaced := false // another draft tells what took the parted thing's place
	for i, d := range out {
		if !isParting[i] && replacementTold.MatchString(d.content) {
			replaced = true
		}
	}
	for _, i := range partings {
		if replaced && out[i].key == "" && out[i].typ != memory.Procedural {
			gone[i] = true
		}
	}
	var names []*regexp.Regexp // the departed, compiled once for the turn's drafts
	for _, n := range departed {
		if hasHan(n) {
			names = append(names, regexp.MustCompile(regexp.QuoteMeta(n)))
		} else {
			names = append(names, regexp.MustCompile(`\b`+regexp.QuoteMeta(n)+`\b`))
		}
	}
	for _, i := range leaves {
		if strings.HasPrefix(out[i].key, "relation.") && slices.ContainsFunc(names, func(re *regexp.Regexp) bool {
			return re.MatchString(out[i].content)
		}) {
			gone[i] = true // "my manager Tom retired": Tom is no longer the manager
			continue
		}
		if rest := withoutLeaving(out[i].content); rest != out[i].content {
			if rest == "" && out[i].key != "" || strings.HasPrefix(out[i].key, "plan.") && !planInstead.MatchString(rest) {
				// A plan called off for a reason ("钓鱼泡汤了，下大雨") is the news of its
				// slot; one replaced by another ("…不去了，改去青岛") tells the new one.
				continue // a slot's value told with the one it replaces ("moved from X to Y")
			}
			if rest == "" {
				gone[i] = true
			} else if !gone[i] {
				out[i].content = rest
			}
		}
	}
	if len(gone) == len(out) {
		return out // nothing else is said: the news is the memory
	}
	kept := out[:0]
	for i, d := range out {
		if !gone[i] {
			kept = append(kept, d)
		}
	}
	return kept
}

// planInstead is a plan told in place of one called off.
var planInstead = regexp.MustCompile(`(?i)改|换|\binstead\b|\bnow\b|\bswitch|\bmoved\b|\brather\b|\bgoing\s+to\b|\bheading\s+to\b`)

// proFormObject is a liking or an aversion whose object is a pro-form ("can't stand the
// stuff", "love it").
var proFormObject = regexp.MustCompile(`(?i)\b(?:stand|stomach|like|likes|love|loves|hate|hates|eat|drink|touch|avoid|avoids)\s+(?:it|that|them|those|this|the\s+stuff|that\s+stuff|this\s+stuff|the\s+thing)\s*[.!]*$`)

// replacementTold is a draft telling what the speaker got instead of a thing they
// parted with ("got myself a …", "picked up a used …", "换了台…").
var replacementTold = regexp.MustCompile(`(?i)\b(?:got|bought|picked\s+up|switched\s+to|replaced\s+it|upgraded\s+to|traded\s+(?:it\s+)?(?:in\s+)?for|ordered|instead)\b|换了|买了|入了|提了|换成`)

// withoutDeniedTwins drops a draft that denies a former value of a slot when the same
// turn gives the slot its new value ("I left Acme. I'm a nurse at St Jude's now"): both
// in one slot, the order of their resolution would decide which stays believed, and the
// new value says all of it.
func withoutDeniedTwins(out []draft) []draft {
	valued := map[string]bool{}
	for _, d := range out {
		if d.key != "" && !deniedClause.MatchString(d.content) {
			valued[d.key] = true
		}
	}
	return slices.DeleteFunc(out, func(d draft) bool {
		return d.key != "" && valued[d.key] && deniedClause.MatchString(d.content)
	})
}

// petNoun is a word for a pet, whole.
var petNoun = regexp.MustCompile(`(?i)^(?:` + petEN + `|` + petZH + `)$`)

var calledLead = regexp.MustCompile(`(?i)^(?:called|named)\s+`)

// calledOrNamed tells a name, not a description ("is called", "is named", "叫").
var calledOrNamed = regexp.MustCompile(`(?i)\b(?:called|named)\b|叫`)

// withoutNameTwins drops a relation's memory that only names them ("my manager is called
// Ines", relation.manager) when the sentence fills the relation's name slot too
// (relation.manager.name): one memory per fact, and one slot for a corrected name to meet.
func withoutNameTwins(out []draft) []draft {
	named := map[string]bool{}
	for _, d := range out {
		if rel, ok := strings.CutSuffix(d.key, ".name"); ok && strings.HasPrefix(rel, "relation.") {
			named[rel] = true
		}
	}
	if len(named) == 0 {
		return out
	}
	return slices.DeleteFunc(out, func(d draft) bool {
		return named[d.key] && calledEN.MatchString(d.content)
	})
}

// calledEN is a memory that says no more than what someone is called.
var calledEN = regexp.MustCompile(`(?i)^the user's [a-z -]+ is (?:called|named) \p{Lu}[\p{L}'-]*(?:\s\p{Lu}[\p{L}'-]*)?$`)

// withoutLeaving is content without its clauses that tell someone leaving ("Dana
// retired", "刘老师调走了"), "" when that is all it says.
func withoutLeaving(content string) string {
	var b strings.Builder
	dropped, kept := false, 0
	gapSep, subject := "", "" // the separator and the subject of the clauses just dropped
	for _, p := range leavingClauses(content) {
		cl := strings.TrimSpace(p.text)
		if cl == "" {
			continue
		}
		if len(departedNames(cl)) > 0 && !fromTo.MatchString(cl) {
			if !dropped || gapSep == "" {
				gapSep = p.sep
			}
			if m := subjectLead.FindString(cl); m != "" && subject == "" {
				subject = m
			} else if strings.HasPrefix(cl, "用户") && subject == "" {
				subject = "用户"
			}
			dropped = true
			continue
		}
		if dropped && hasHan(cl) && danglingZH.MatchString(cl) && !strings.ContainsAny(cl, "我用") {
			// "豆豆走了，十四岁，…": a clause without a subject goes on about the one
			// that left; it cannot stand without it.
			return content
		}
		sep := p.sep
		if gapSep != "" || subject != "" {
			cl = leadingLink.ReplaceAllString(cl, "")
			switch {
			case subject == "用户" && !strings.Contains(cl, "用户") && !otherSubjectZH.MatchString(cl):
				cl = subject + cl // "用户不在A了，现在在B上班": the subject goes on
			case subject != "" && verbLead.MatchString(cl) && !pronounThing.MatchString(cl):
				// "the user cancelled X and moved to Y": the subject goes on.
				cl = subject + " " + cl
			case subject != "" && strings.HasPrefix(cl, "their "):
				cl = "the user's " + strings.TrimPrefix(cl, "their ")
			}
			if gapSep != "" {
				sep = gapSep
			}
			gapSep, subject = "", ""
		}
		if kept == 0 {
			cl = upperFirst(cl)
		} else {
			b.WriteString(sep)
		}
		b.WriteString(cl)
		kept++
	}
	if !dropped {
		return content
	}
	rest := b.String()
	if first, _, _ := strings.Cut(rest, ". "); pointsBack.MatchString(first) {
		// "…, I'll miss her": the rest of the sentence needs the clause it points back to.
		return content
	}
	return rest
}

// fromTo is a clause that tells the new value with the old one ("moved from Denver to
// Austin", "switched from X to Y"): it is the news, not a leaving to take out.
var fromTo = regexp.MustCompile(`(?i)\bfrom\s+(?:[\p{L}'’-]+\s+){1,3}?to\s+\S|\btook\s+over\s+from\b|\breplac(?:ed|ing)\s+\S+(?:\s+\S+)?\s+with\b|从\p{Han}{1,8}?(?:搬|换|调|转|改)(?:到|成|去)`)

// clause is one clause of a text and the separator before it ("" for the first).
type clause struct{ sep, text string }

// leavingClauses cuts content into its clauses, at punctuation or a conjunction; "and"
// before the speaker joins a subject ("Sam and I split up"), not two clauses.
func leavingClauses(content string) []clause {
	var out []clause
	start, sep := 0, ""
	for _, m := range clauseBreak.FindAllStringIndex(content, -1) {
		if strings.TrimSpace(content[m[0]:m[1]]) == "and" && jointSubject.MatchString(content[m[1]:]) {
			continue
		}
		out = append(out, clause{sep, content[start:m[0]]})
		start, sep = m[1], content[m[0]:m[1]]
	}
	return append(out, clause{sep, content[start:]})
}

// clauseBreak separates the clauses of a text: punctuation, the end of a sentence, a
// conjunction.
var clauseBreak = regexp.MustCompile(`\s*[,;，；。]\s*|[.!?]\s+|\s+(?:and|so|but)\s+`)

// subjectLead is the speaker as a clause's subject, with its auxiliary.
var subjectLead = regexp.MustCompile(`(?i)^the user(?:\s+(?:is|was|has|had|will|just|finally))?\b`)

// verbLead opens a clause with a verb of its own and no subject.
var verbLead = regexp.MustCompile(`^(?:[a-z]+(?:ed|ing)|went|got|bought|took|made|found|put|gave|began|started|moved|signed|joined)\b`)

// pronounThing is an indefinite pronoun that verbLead would take for a verb.
var pronounThing = regexp.MustCompile(`^(?:every|some|no|any)thing\b`)

// jointSubject is the speaker after "and", as the second half of a subject.
var jointSubject = regexp.MustCompile(`^(?:I|the user|me)\b`)

// danglingZH opens a Chinese clause that goes on about the subject before it: an age or
// a number, an adverb.
var danglingZH = regexp.MustCompile(`^(?:[0-9一二三四五六七八九十两几]|算是|也|都|还|就|才|已经|特别|很|挺|真|太|一直|终于|享年|走得)`)

// pointsBack is a pronoun that may stand for someone just named.
var pointsBack = regexp.MustCompile(`(?i)\b(?:she|he|her|him|his|hers)\b|[他她]`)

// leadingLink is the word that tied a clause to the one before it.
var leadingLink = regexp.MustCompile(`(?i)^(?:(?:and|so|but|then)\s+(?:now\s+|then\s+)?|所以|于是|然后|现在就?由)`)

func (o *Offline) classify(s string, ref time.Time, allowRemember bool) []draft {
	s = o.clean(s)
	if s == "" || o.lex.smallTalkTo(s) || o.lex.idleAdverb.MatchString(lowerText(s)) {
		return nil
	}
	sigs := o.lex.sentenceSignals(s)
	has := func(name string) bool { return containsString(sigs, name) }
	zh := hasHan(s)
	lower := lowerText(s)
	switch {
	case has(SignalProcedure):
		d := o.draft(s, ref, memory.Procedural, memory.CatSkill, "procedure", impPreference, confInstruction)
		d.meta = map[string]any{"instruction": true}
		return []draft{d}
	case allowRemember && has(SignalRemember) && !zh && o.lex.recall.MatchString(lower) && !o.rememberEN.MatchString(s):
		// "We still remember that trip": the speaker remembering asks nothing.
		return o.classify(s, ref, false)
	case allowRemember && has(SignalRemember) && !zh && o.adviceToListener(s):
		return nil
	case allowRemember && has(SignalRemember):
		rest := s
		if zh {
			rest = o.rememberZH.ReplaceAllString(s, "")
		} else {
			rest = o.rememberEN.ReplaceAllString(s, "")
		}
		if rest != s && rest != "" {
			if ds := o.classify(rest, ref, false); len(ds) > 0 {
				for i := range ds {
					ds[i].importance = max(ds[i].importance, impRemember)
					ds[i].rule = "remember+" + ds[i].rule
				}
				return ds
			}
		}
		return []draft{o.draft(rest, ref, memory.Semantic, memory.CatFact, "remember", impRemember, confExplicit)}
	case has(SignalDecision):
		d := o.draft(s, ref, memory.Semantic, memory.CatDecision, "decision", impDecision, o.confidence(lower))
		if m := o.reason.FindStringSubmatch(s); m != nil {
			d.meta = map[string]any{"reason": trimEnd(m[1])}
		}
		return []draft{d}
	}
	if ids := o.identity(s, ref); len(ids) > 0 {
		return ids
	}
	if has(SignalChange) && !has(SignalPlan) {
		key := o.topics.key(lower)
		if loc := usedToEN.FindStringSubmatchIndex(s); loc != nil {
			// "Used to be really into jazz fusion, can't listen to it now": the thing
			// liked before names the slot, not what the rest of the sentence mentions.
			before := s[loc[0]:]
			if i := strings.IndexAny(before, ",;.!?"); i >= 0 {
				before = before[:i]
			}
			if i := strings.Index(strings.ToLower(before), " but "); i >= 0 {
				before = before[:i]
			}
			if k := o.topics.key(strings.ToLower(before)); k != "" {
				key = k
			} else if k := o.objectKey("I love " + quantityLead.ReplaceAllString(s[loc[2]:loc[3]], "")); k != "" {
				key = k
			}
		}
		if key != "" {
			cat := memory.CatPreference
			if o.topics.meeting.MatchString(lower) && o.topics.timeWord.MatchString(lower) && !o.topics.meetingRoom.MatchString(lower) &&
				o.lex.relax.MatchString(lower) {
				// Relaxing a meeting time ("周五下午开会也可以了") revises the avoid-time
				// slot the earlier constraint lives in, so the old value is superseded. A
				// move to a new time ("改成下午") keeps the topic's key, the preferred-time
				// slot, where the earlier preferred time lives.
				key, cat = "meeting.avoid_time", memory.CatConstraint
			}
			d := o.draft(s, ref, memory.Semantic, cat, "change", impConstraint, o.confidence(lower))
			d.key, d.expire = key, o.expiry(s, ref)
			return []draft{d}
		}
	}
	switch {
	case has(SignalProhibition) || has(SignalConstraint):
		d := o.draft(s, ref, memory.Semantic, memory.CatConstraint, "constraint", impConstraint, o.confidence(lower))
		d.key, d.expire = o.topics.key(lower), o.expiry(s, ref)
		return []draft{d}
	case has(SignalPreference):
		d := o.draft(s, ref, memory.Semantic, memory.CatPreference, "preference", impPreference, o.confidence(lower))
		d.key, d.expire = o.topics.key(lower), o.clauseExpiry(s, ref, SignalPreference)
		return []draft{d}
	case has(SignalTemporaryState):
		if exp := o.expiry(s, ref); exp != nil {
			d := o.draft(s, ref, memory.Semantic, memory.CatFact, "temporary_state", impState, confState)
			d.key, d.expire = "user.status", exp
			return []draft{d}
		}
	}
	if has(SignalChange) && !has(SignalPlan) {
		// A revision without a known topic ("X改成Y", "switched X to Y", "no longer …"): a
		// semantic statement, so that the resolver can let it replace what it revises.
		d := o.draft(s, ref, memory.Semantic, memory.CatPreference, "revision", impPreference, o.confidence(lower))
		d.expire = o.expiry(s, ref)
		return []draft{d}
	}
	if has(SignalTaskResult) {
		return []draft{o.draft(s, ref, memory.Episodic, memory.CatEvent, "task_result", impEvent, confEvent)}
	}
	return nil
}

// adviceToListener reports a "remember" that passes on advice about the listener's own
// life ("Remember, one bad review doesn't make you a bad cook"): nothing about the
// speaker and no instruction to the listener (as "you must …" is), so nothing to keep.
// "Remember to …" stays an instruction whoever it names.
func (o *Offline) adviceToListener(s string) bool {
	loc := o.rememberAnyEN.FindStringIndex(s)
	if loc == nil {
		return false
	}
	after := strings.TrimSpace(s[loc[1]:])
	return after != "" && !strings.HasPrefix(strings.ToLower(after), "to ") && o.lex.aboutListener(after)
}

func (o *Offline) draft(s string, ref time.Time, typ memory.Type, cat memory.Category, rule string, imp, conf float64) draft {
	return draft{typ: typ, cat: cat, content: o.finish(o.thirdPerson(s, cat, rule), ref), importance: imp, confidence: conf, rule: rule,
		meta: map[string]any{}}
}

func (o *Offline) confidence(lower string) float64 {
	if o.hedge.MatchString(lower) {
		return confHedged
	}
	return confExplicit
}

// expiry is when a time-bounded statement ("this week", "今天", "until Friday") stops being
// true: the end of the first period it names that has not ended yet. Statements marked as
// lasting ("from now on", "每周", "always") do not expire.
func (o *Offline) expiry(s string, ref time.Time) *time.Time {
	if ref.IsZero() || o.permanent.MatchString(lowerText(s)) {
		return nil
	}
	ms := o.lex.temporal.Find(s, ref)
	for i := 1; i < len(ms); i++ {
		if spanJoin.MatchString(s[ms[i-1].End:ms[i].Start]) {
			// "from the 10th to the 20th", "10号到20号": the span ends with its last day.
			ms = append([]TimeMatch{ms[i]}, ms...)
			break
		}
	}
	for _, m := range ms {
		u := m.Until
		// An event that lasts ("report for jury duty on Monday … it could run the whole
		// week") holds until its span ends, not at the end of its first day.
		if n := spanDays(lowerText(s[m.End:])); n > 0 && m.At.AddDate(0, 0, n).After(u) {
			u = dayOf(m.At, n)
		}
		if u.After(ref) {
			return &u
		}
	}
	if n := stayDays(lowerText(s)); n > 0 {
		u := ref.AddDate(0, 0, n)
		return &u
	}
	return nil
}

// setMeta sets metadata key to v on every draft of ds.
func setMeta(ds []draft, key string, v any) {
	for i := range ds {
		if ds[i].meta == nil {
			ds[i].meta = map[string]any{}
		}
		ds[i].meta[key] = v
	}
}

// pronounsOf is s in the third person, in its script.
func (o *Offline) pronounsOf(s string) string {
	if hasHan(s) {
		return strings.ReplaceAll(strings.ReplaceAll(s, "我们", "用户"), "我", "用户")
	}
	return o.pronounsEN(s, true)
}

// nextStep reports a sentence that opens with a step marker: the next step of steps
// told before it.
func nextStep(s string) bool {
	return stepLead.MatchString(s) && !isQuestion(s)
}

var stepLead = regexp.MustCompile(`^(?:然后|接着|再|之后|最后|随后|其次|第[二三四五六]步|(?i:then|next|after that|afterwards|finally|lastly|last of all)\b)`)

// joinSentences appends sentence b to a, in a's script.
func joinSentences(a, b string) string {
	if hasHan(a) {
		return strings.TrimRight(a, "。") + "。" + b
	}
	return strings.TrimRight(a, ". ") + ". " + upperFirst(b)
}

// finish makes relative dates absolute against the turn's time.
func (o *Offline) finish(content string, ref time.Time) string {
	if ref.IsZero() {
		return content
	}
	return o.lex.temporal.Rewrite(content, ref)
}

// clean drops leading fillers ("好的，", "btw") and the trailing punctuation.
func (o *Offline) clean(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "’", "'"))
	if hasHan(s) {
		s = o.fillerZH.ReplaceAllString(s, "")
	} else {
		s = o.fillerEN.ReplaceAllString(s, "")
	}
	return trimEnd(s)
}

// fromAssistant proposes the assistant's price, offer and policy statements as facts with
// Source assistant, so that trust can hold them until the user confirms them. The claim
// sentences of one turn form one candidate.
func (o *Offline) fromAssistant(t memory.Turn) []draft {
	var claims []string
	for _, s := range splitSentences(t.Content) {
		// "Your plan renews on the 5th, right?" states the claim it asks the user to confirm.
		s, ok := o.lex.statement(assistantStatement(s))
		if !ok || !o.lex.claim.match(lowerText(s)) {
			continue
		}
		claims = append(claims, trimEnd(strings.TrimSpace(s)))
	}
	if len(claims) == 0 {
		return nil
	}
	joined := strings.Join(claims, "; ")
	content := "The assistant stated: " + joined
	if hasHan(joined) {
		content = "助手称：" + strings.Join(claims, "；")
	}
	return []draft{{typ: memory.Semantic, cat: memory.CatFact, content: o.finish(content, t.OccurredAt),
		importance: impClaim, confidence: confClaim, rule: "claim", source: memory.SourceAssistant}}
}

// recovery is one failure→success pattern of a tool: the failures of a streak and the
// success that ended it.
type recovery struct {
	tool, err, slug string
	fails           []int
	success         int
}

func toolRecoveries(timeline []memory.Turn) []recovery {
	var out []recovery
	streak := map[string][]int{} // tool → failing turns since its last success
	for i, t := range timeline {
		if t.Role != memory.RoleTool || t.Tool == nil || t.Deleted {
			continue
		}
		name := t.Tool.Name
		switch {
		case toolFailed(t.Tool):
			streak[name] = append(streak[name], i)
		case toolSucceeded(t.Tool):
			if fails := streak[name]; len(fails) > 0 {
				last := timeline[fails[len(fails)-1]]
				err := strings.TrimSpace(last.Tool.Error)
				if err == "" {
					err = truncate(strings.TrimSpace(last.Content), 120)
				}
				out = append(out, recovery{tool: name, err: err, slug: errorSlug(err), fails: fails, success: i})
			}
			delete(streak, name)
		}
	}
	return out
}

// fromTool turns the recoveries that end at this turn into skills (one per tool and kind of
// error, at its last success in the batch) and a task's successful result into an event.
func (o *Offline) fromTool(timeline []memory.Turn, p int, recs []recovery) []draft {
	t := timeline[p]
	if t.Tool == nil || !toolSucceeded(t.Tool) {
		return nil
	}
	var out []draft
	recovered := false
	for _, r := range recs {
		if r.success != p {
			continue
		}
		recovered = true
		var group []recovery
		later := false
		for _, g := range recs {
			if g.tool == r.tool && g.slug == r.slug {
				group = append(group, g)
				later = later || g.success > p
			}
		}
		if later {
			continue // the last success of the group speaks for all of them
		}
		var ids []string
		for _, g := range group {
			for _, f := range g.fails {
				ids = append(ids, timeline[f].TurnID)
			}
			for _, st := range toolSteps(timeline, g) {
				ids = append(ids, timeline[st].TurnID)
			}
			ids = append(ids, timeline[g.success].TurnID)
		}
		conf := confOneRecovery
		if len(group) > 1 {
			conf = confManyRecovery
		}
		errText := r.err
		if errText == "" {
			errText = "an error"
		}
		content := fmt.Sprintf("When tool %s fails with %s, %s", quote(r.tool), quote(errText), o.whatWorked(timeline, group))
		key := "tool." + slugify(r.tool) + ".recovery"
		if r.slug != "" {
			key += "." + r.slug
		}
		out = append(out, draft{typ: memory.Procedural, cat: memory.CatSkill, key: key, content: content,
			importance: impSkill, confidence: conf, rule: "tool_recovery", source: memory.SourceTool, sourceIDs: ids,
			meta: map[string]any{"tool": r.tool, "error": r.err, "pairs": len(group)}})
	}
	if t.TaskID != "" && !recovered {
		content := fmt.Sprintf("Task %s: tool %s succeeded", t.TaskID, quote(t.Tool.Name))
		if c := strings.TrimSpace(t.Content); c != "" {
			content += ": " + truncate(c, 160)
		}
		out = append(out, draft{typ: memory.Episodic, cat: memory.CatEvent, content: o.finish(content, t.OccurredAt),
			importance: impEvent, confidence: confExplicit, rule: "task_result",
			meta: map[string]any{"tool": t.Tool.Name, "task_id": t.TaskID}})
	}
	return out
}

// whatWorked describes the fix: the calls of other tools that succeeded between the last
// failure and the success ("call report.queue first, then retry report.export"), else the
// latest user or assistant turn in between that reads like one, else the retry and its
// result.
func (o *Offline) whatWorked(timeline []memory.Turn, group []recovery) string {
	if steps := toolSteps(timeline, group[len(group)-1]); len(steps) > 0 {
		var names []string
		for _, i := range steps {
			names = append(names, quote(timeline[i].Tool.Name))
		}
		tool := group[len(group)-1].tool
		return "call " + strings.Join(names, ", then ") + " first, then retry " + quote(tool)
	}
	for g := len(group) - 1; g >= 0; g-- {
		r := group[g]
		for i := r.success - 1; i > r.fails[len(r.fails)-1]; i-- {
			t := timeline[i]
			if (t.Role == memory.RoleUser || t.Role == memory.RoleAssistant) && o.lex.fixCue.MatchString(t.Content) {
				return "what worked: " + truncate(trimEnd(strings.TrimSpace(t.Content)), 200)
			}
		}
	}
	out := "retrying it succeeded"
	if c := strings.TrimSpace(timeline[group[len(group)-1].success].Content); c != "" {
		out += " (result: " + truncate(c, 120) + ")"
	}
	return out
}

func quote(s string) string { return `"` + s + `"` }

// toolSteps are the turns, between a recovery's last failure and its success, of other
// tools' calls that succeeded: the steps that made the retry work. Bounded by
// maxStepLookback.
func toolSteps(timeline []memory.Turn, r recovery) []int {
	var out []int
	for i := r.fails[len(r.fails)-1] + 1; i < r.success && len(out) < maxStepLookback; i++ {
		t := timeline[i]
		if t.Role == memory.RoleTool && t.Tool != nil && !t.Deleted && t.Tool.Name != r.tool && toolSucceeded(t.Tool) {
			out = append(out, i)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// slugify lower-cases and keeps [a-z0-9_], so a tool name can sit in a key.
func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	return strings.Trim(b.String(), "_")
}

// errorSlug names a kind of error by its first three meaningful words, leaving out numbers
// and ids that vary between occurrences ("timeout after 30s" → "timeout").
func errorSlug(err string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(err), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if strings.ContainsAny(w, "0123456789") && !(len(w) == 3 && strings.Trim(w, "0123456789") == "") {
			continue // 30s, request ids vary; HTTP status codes do not
		}
		switch w {
		case "a", "an", "the", "of", "to", "for", "in", "on", "at", "after", "with", "by", "from", "is", "was", "s":
			continue
		}
		words = append(words, w)
		if len(words) == 3 {
			break
		}
	}
	return strings.Join(words, "_")
}

// thirdPerson rewrites a user's sentence so it stands on its own: "The user prefers …",
// "用户希望…".
func (o *Offline) thirdPerson(s string, cat memory.Category, rule string) string {
	if hasHan(s) {
		return o.thirdPersonZH(s, cat, rule)
	}
	return o.thirdPersonEN(s, cat, rule)
}

func startsWithAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (o *Offline) thirdPersonZH(s string, cat memory.Category, rule string) string {
	s = strings.TrimPrefix(s, "请")
	out := s
	switch {
	case strings.HasPrefix(s, "我"):
	case rule == "remember":
		out = "用户要求记住：" + s
	case rule == "change":
		out = "用户更新了偏好：" + s
	case strings.HasPrefix(s, "希望"):
		out = "用户" + s
	case startsWithAny(s, "以后", "今后", "往后", "下次", "之后", "尽量", "尽可能", "从现在开始", "从今天起"):
		out = "用户希望" + s
	case startsWithAny(s, "不要", "别", "不能", "禁止", "不许", "不准", "千万", "避免", "避开", "绝不", "绝对不要", "永远不要", "必须", "务必", "一定要", "记得", "只能"):
		out = "用户要求" + s
	case startsWithAny(s, "最终决定", "最后决定", "决定", "最终选择", "最终确定", "确定"):
		out = "用户" + s
	case o.conclusionZH.MatchString(s):
		out = "用户的结论是" + o.conclusionZH.ReplaceAllString(s, "")
	case strings.Contains(s, "我"):
	default:
		switch cat {
		case memory.CatPreference:
			out = "用户偏好" + s
		case memory.CatConstraint:
			out = "用户要求" + s
		case memory.CatDecision:
			out = "用户决定：" + s
		case memory.CatSkill:
			out = "用户指示：" + s
		default:
			out = "用户表示" + s
		}
	}
	out = strings.ReplaceAll(out, "我们", "用户")
	return strings.ReplaceAll(out, "我", "用户")
}

func (o *Offline) thirdPersonEN(s string, cat memory.Category, rule string) string {
	suffix := ""
	if m := o.leadEN.FindStringSubmatch(s); m != nil {
		s = s[len(m[0]):]
		suffix = " " + strings.ToLower(m[1])
	}
	var out string
	switch {
	case rule == "remember":
		out = "The user asked to remember that " + o.pronounsEN(lowerFirst(s), true)
	case rule == "procedure":
		out = "User instruction: " + o.pronounsEN(lowerFirst(s), true)
	case rule == "change":
		out = "The user changed a preference: " + o.pronounsEN(lowerFirst(s), true)
	case o.letsEN.MatchString(s):
		out = "The user decided to " + o.pronounsEN(o.letsEN.ReplaceAllString(s, ""), true)
	case o.imperativeEN.MatchString(s) && !nounSubject(s):
		m := o.imperativeEN.FindStringSubmatch(s)
		rest := o.pronounsEN(s[len(m[0]):], true)
		switch strings.ToLower(m[1]) {
		case "don't", "do not":
			out = "The user asked not to " + rest
		case "never":
			out = "The user asked never to " + rest
		case "no":
			out = "The user asked for no " + rest
		default:
			out = "The user asked to " + o.pronounsEN(lowerFirst(s), true)
		}
	case o.pronounsEN(s, false) != s: // speaks in the first person
		out = upperFirst(o.pronounsEN(s, false))
	default:
		prefix := map[memory.Category]string{
			memory.CatPreference: "User preference: ",
			memory.CatConstraint: "User constraint: ",
			memory.CatDecision:   "The user decided: ",
			memory.CatEvent:      "The user reported: ",
			memory.CatSkill:      "User instruction: ",
		}[cat]
		if prefix == "" {
			prefix = "The user stated: "
		}
		out = prefix + lowerFirst(s)
	}
	return out + suffix
}

// nounSubject reports an imperative-looking first word used as a noun: "Email is best".
func nounSubject(s string) bool {
	f := strings.Fields(strings.ToLower(s))
	if len(f) < 2 {
		return false
	}
	switch f[1] {
	case "is", "are", "was", "were", "'s", "has", "works", "seems":
		return true
	}
	return false
}

// pronounsEN replaces the first person: the first mention becomes "the user" (with the verb
// agreeing: "I prefer" → "the user prefers"), later ones "they"/"them"/"their". introduced
// says the sentence already names the user.
func (o *Offline) pronounsEN(s string, introduced bool) string {
	var b strings.Builder
	last := 0
	for _, loc := range o.pronounEN.FindAllStringIndex(s, -1) {
		word := s[loc[0]:loc[1]]
		if len(word) > 1 && word == strings.ToUpper(word) && !strings.ContainsAny(word, " '") {
			continue // US, ME: abbreviations, not pronouns
		}
		b.WriteString(s[last:loc[0]])
		last = loc[1]
		rep, conj := pronounFor(strings.ToLower(strings.Join(strings.Fields(word), " ")), introduced)
		b.WriteString(rep)
		introduced = true
		if !conj {
			continue
		}
		if m := o.verbEN.FindStringSubmatchIndex(s[last:]); m != nil {
			b.WriteString(s[last : last+m[4]])
			b.WriteString(thirdSingular(s[last+m[4] : last+m[5]]))
			last += m[5]
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// pronounFor maps a first-person form; conj says the next verb must agree with "the user".
func pronounFor(w string, introduced bool) (string, bool) {
	type forms struct{ first, later string }
	var f forms
	conj := false
	switch w {
	case "i", "we":
		f, conj = forms{"the user", "they"}, true
	case "i am", "we are":
		f = forms{"the user is", "they are"}
	case "i'm", "we're":
		f = forms{"the user is", "they're"}
	case "i was", "we were":
		f = forms{"the user was", "they were"}
	case "i've", "we've":
		f = forms{"the user has", "they've"}
	case "i have", "we have":
		f = forms{"the user has", "they have"}
	case "i'd", "we'd":
		f = forms{"the user would", "they'd"}
	case "i'll", "we'll":
		f = forms{"the user will", "they'll"}
	case "me", "us":
		f = forms{"the user", "them"}
	case "my", "our":
		f = forms{"the user's", "their"}
	case "mine", "ours":
		f = forms{"the user's", "theirs"}
	default: // myself, ourselves
		f = forms{"the user", "themselves"}
	}
	if introduced {
		return f.later, false
	}
	return f.first, conj
}

// thirdSingular conjugates a verb for "the user": prefer → prefers, go → goes, try → tries;
// modals, past forms and contractions stay.
func thirdSingular(w string) string {
	lw := strings.ToLower(w)
	switch lw {
	case "don't":
		return "doesn't"
	case "do":
		return "does"
	case "have":
		return "has"
	case "am", "are":
		return "is"
	case "no", "not", "never", "no-longer", "and", "or", "to":
		return w
	}
	if unconjugated(lw) || strings.HasSuffix(lw, "ed") && !presentEed(lw) || strings.Contains(lw, "'") || strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ss") {
		return w
	}
	switch {
	case strings.HasSuffix(lw, "ss"), strings.HasSuffix(lw, "sh"), strings.HasSuffix(lw, "ch"),
		strings.HasSuffix(lw, "x"), strings.HasSuffix(lw, "z"), strings.HasSuffix(lw, "o"):
		return w + "es"
	case len(lw) > 1 && strings.HasSuffix(lw, "y") && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

// identity extracts profile facts (name, home, employer, role …), one per fact found.
func (o *Offline) identity(s string, ref time.Time) []draft {
	var out []draft
	seen := map[string]bool{}
	zh := hasHan(s)
	var gone []string // the names s says left, read once a name rule matches
	goneRead := false
	for _, r := range o.lex.idents {
		for _, m := range r.re.FindAllStringSubmatch(s, -1) {
			d, ok := o.identityDraft(r.kind, m, zh)
			if !ok || seen[d.key+"|"+d.content] {
				continue
			}
			if r.kind == "name" && !goneRead {
				gone, goneRead = departedNames(s), true
			}
			if r.kind == "name" && slices.Contains(gone, strings.TrimSpace(m[r.value])) {
				continue // "don't call me Jimmy anymore": the name given up
			}
			seen[d.key+"|"+d.content] = true
			d.content = o.finish(d.content, ref)
			d.rule = "identity"
			d.meta = map[string]any{}
			out = append(out, d)
		}
	}
	return out
}

func (o *Offline) identityDraft(kind string, m []string, zh bool) (draft, bool) {
	profile := func(key, content string) (draft, bool) {
		return draft{typ: memory.Semantic, cat: memory.CatProfile, key: key, content: content,
			importance: impIdentity, confidence: confExplicit}, true
	}
	switch kind {
	case "name":
		v := cutAt(m[1], "是在住今来从的，,了")
		if v == "" || strings.ContainsAny(v, "了过着他她你人车外") {
			return draft{}, false
		}
		if zh {
			return profile("user.name", "用户的名字是"+v)
		}
		return profile("user.name", "The user's name is "+v)
	case "location":
		v := o.cutValue(m[1])
		if v == "" || workplaceEN.MatchString(v) {
			return draft{}, false // "based in the Lisbon office": where they work, not live
		}
		if zh {
			return profile("user.location", "用户住在"+v)
		}
		return profile("user.location", "The user lives in "+v)
	case "employer":
		v := o.cutValue(m[1])
		if v == "" {
			return draft{}, false
		}
		if zh {
			key := "user.employer"
			if isPlace(v) || officeZH.MatchString("在"+v) {
				key = "user.work_location" // "在杭州分行": where, not who
			}
			return profile(key, "用户在"+v+"工作")
		}
		return profile("user.employer", "The user works at "+v)
	case "origin", "origin_zh":
		v := o.cutValue(m[1])
		if v == "" || startsWithAny(v, "个", "一", "好", "坏", "什么", "这样", "哪") {
			return draft{}, false
		}
		if zh {
			return profile("user.origin", "用户来自"+v)
		}
		return profile("user.origin", "The user is from "+v)
	case "diet":
		return profile("food.diet", "The user is "+strings.ToLower(m[1]))
	case "role":
		v := o.cutValue(m[1])
		if zh {
			if strings.HasPrefix(v, "素食") {
				return profile("food.diet", "用户是"+v)
			}
			return profile("user.role", "用户是"+v)
		}
		first := strings.ToLower(strings.Fields(v + " x")[0])
		switch first {
		case "bit", "little", "lot", "fan", "big", "huge", "few", "couple", "total", "vegetarian", "vegan", "pescatarian":
			return draft{}, false
		}
		if !jobNoun(v) || !validJob(v) {
			return draft{}, false
		}
		article := "a "
		if strings.ContainsRune("aeiou", rune(first[0])) {
			article = "an "
		}
		return profile("user.role", "The user is "+article+v)
	case "attr":
		attr, v := strings.TrimSpace(m[1]), o.cutValue(m[2])
		if v == "" {
			return draft{}, false
		}
		key, cat, ok := attrKey(attr)
		if !ok {
			return draft{}, false
		}
		if strings.HasPrefix(lowerText(m[0]), "our ") && startsWithAny(lowerText(v), "on ", "at ", "in ", "next ", "this ") {
			return draft{}, false // "our offsite is on June 3": a plan, told by the plan rules
		}
		if who, what, rel := strings.Cut(attr, "的"); rel && zh && startsWithRelationZH(who) == who && planNoun.MatchString(what) {
			return draft{}, false // "儿子的钢琴课是周六上午": a routine, told by the routine rules
		}
		key = o.relationNameKey(key, attr, m[0], v)
		if petNoun.MatchString(attr) && nameLike.MatchString(calledLead.ReplaceAllString(v, "")) && calledOrNamed.MatchString(m[0]) {
			// "My cat is called Pesto": the pet's name slot, the one the clause rules fill.
			key, cat = "pet."+slugify(o.lex.clauses.pet(strings.ToLower(attr)))+".name", memory.CatRelationship
		}
		if who, what, ok := strings.Cut(strings.ToLower(attr), "'s "); ok && key == "" {
			// "My wife's birthday is …": an attribute of a relation of the speaker's.
			if relWordEN.MatchString(who) && attrSlot(what) != "" {
				key, cat = "relation."+slugify(o.lex.clauses.rel(who))+"."+strings.TrimPrefix(attrSlot(what), "user.attr."), memory.CatRelationship
			}
		}
		if who, what, ok := strings.Cut(attr, "的"); ok && zh && startsWithRelationZH(who) == who && attrSlot(what) != "" {
			// "我儿子的班主任是…": the same, in Chinese.
			rel := slugify(o.lex.clauses.rel(who))
			if rel == "" {
				rel = who // a relation without an English slot name keeps its own
			}
			key, cat = "relation."+rel+"."+strings.TrimPrefix(attrSlot(what), "user.attr."), memory.CatRelationship
		}
		if key == "" && cat == memory.CatFact && !strings.Contains(lowerText(m[0]), " are ") {
			// "My locker number is …", "我的工号是…": one value per attribute, so a later
			// value (or a correction) replaces the earlier one.
			key = attrSlot(attr)
			if k := o.topics.key(lowerText(attr)); strings.HasPrefix(k, "drink.") || strings.HasPrefix(k, "food.") {
				key = k // "my usual coffee order is …": the drink's slot, which "these days I get …" fills too
			}
		}
		d := draft{typ: memory.Semantic, cat: cat, key: key, importance: impIdentity, confidence: confExplicit}
		switch cat {
		case memory.CatPreference:
			d.importance = impPreference
		case memory.CatFact, memory.CatGoal, memory.CatRelationship:
			d.importance = impPreference
		}
		verb := "是"
		if strings.Contains(m[0], attr+"叫") {
			verb = "叫"
		}
		if zh {
			d.content = "用户的" + attr + verb + v
		} else {
			be := " is "
			if strings.Contains(strings.ToLower(m[0]), " are ") {
				be = " are "
			}
			d.content = "The user's " + attr + be + v
		}
		return d, true
	}
	return draft{}, false
}

// cutValue ends an identity value at the first clause boundary ("Berlin with my family" →
// "Berlin") and drops trailing particles.
func (o *Offline) cutValue(v string) string {
	v = strings.TrimSpace(v)
	lower := " " + lowerText(v) + " "
	cut := len(v)
	for _, stop := range []string{" and ", " but ", " with ", " since ", " for ", " because ", " now ", " right now ",
		" these days ", " at the moment ", " who ", " so ", " at ", " in ", " from "} {
		if i := strings.Index(lower, stop); i >= 0 && i < cut {
			cut = i
		}
	}
	v = strings.TrimSpace(v[:min(cut, len(v))])
	v = strings.TrimRight(trimEnd(v), "了呢啊呀吧")
	return trimEnd(v)
}

// cutAt ends v before the first rune (after the first) that is one of stops.
func cutAt(v, stops string) string {
	for i, r := range v {
		if i > 0 && strings.ContainsRune(stops, r) {
			return v[:i]
		}
	}
	return v
}

func isPlace(v string) bool {
	if strings.HasSuffix(v, "市") || strings.HasSuffix(v, "省") || strings.HasSuffix(v, "区") {
		return true
	}
	switch v {
	case "北京", "上海", "深圳", "广州", "杭州", "成都", "南京", "武汉", "西安", "苏州", "天津", "重庆", "香港", "台北", "新加坡", "东京", "伦敦", "纽约", "硅谷", "国外", "家":
		return true
	}
	return cityZH[v]
}

// cityZH are the provincial capitals and other large cities of China, and cities abroad
// as Chinese names them: a gazetteer, so that 在<city>工作 is a place, not an employer.
var cityZH = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`哈尔滨 长春 沈阳 大连 石家庄 太原 呼和浩特 包头 济南 青岛 烟台 威海 潍坊 淄博 郑州 洛阳 合肥 芜湖
		南昌 长沙 株洲 福州 厦门 泉州 南宁 桂林 柳州 海口 三亚 贵阳 遵义 昆明 大理 丽江 拉萨 兰州 西宁 银川 乌鲁木齐 喀什
		宁波 温州 绍兴 嘉兴 金华 台州 湖州 无锡 常州 南通 扬州 徐州 镇江 盐城 佛山 东莞 珠海 中山 惠州 汕头 江门 湛江
		保定 唐山 秦皇岛 廊坊 邯郸 大同 鞍山 吉林 宜昌 襄阳 九江 赣州 绵阳 宜宾 泸州 乐山 南充 德阳 咸阳 宝鸡 延安
		澳门 台中 台南 高雄 新竹 首尔 釜山 大阪 京都 横滨 名古屋 曼谷 清迈 吉隆坡 雅加达 河内 胡志明市 马尼拉 迪拜
		巴黎 柏林 慕尼黑 法兰克福 阿姆斯特丹 布鲁塞尔 苏黎世 日内瓦 维也纳 米兰 罗马 马德里 巴塞罗那 里斯本 都柏林 爱丁堡 曼彻斯特
		莫斯科 斯德哥尔摩 哥本哈根 赫尔辛基 奥斯陆 悉尼 墨尔本 布里斯班 珀斯 奥克兰 温哥华 多伦多 蒙特利尔 西雅图 旧金山
		洛杉矶 圣地亚哥 波士顿 芝加哥 华盛顿 休斯敦 达拉斯 奥斯汀 迈阿密 亚特兰大 费城 丹佛 凤凰城 拉斯维加斯 檀香山`) {
		m[c] = true
	}
	return m
}()

// withoutWhichLead is a relation's noun without the word that says which one: "直属领导",
// "direct manager", "现在的老板" are the manager, the boss.
func withoutWhichLead(a string) string {
	for _, lead := range []string{"直属", "顶头", "现在的", "新的", "新", "direct ", "current ", "new ", "line "} {
		if rest, ok := strings.CutPrefix(a, lead); ok && rest != "" {
			return rest
		}
	}
	return a
}

// attrKey maps "my X is …" / "我的X是…" to a key and category; ok is false for phrases that
// are not facts about the user ("my point is").
func attrKey(attr string) (key string, cat memory.Category, ok bool) {
	a := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(attr), "'s name"), " name")
	if rest := withoutWhichLead(a); rest != a {
		if k, c, ok := attrKey(rest); ok && strings.HasPrefix(k, "relation.") {
			return k, c, ok
		}
	}
	if rest, fav := strings.CutPrefix(a, "favorite "); fav {
		return "favorite." + slugify(rest), memory.CatPreference, true
	}
	if rest, fav := strings.CutPrefix(a, "favourite "); fav {
		return "favorite." + slugify(rest), memory.CatPreference, true
	}
	switch a {
	case "意思", "问题", "想法", "看法", "理解", "建议", "天", "重点", "目的", "回答", "意见", "bad", "pleasure", "point",
		"question", "guess", "concern", "answer", "fault", "turn", "understanding", "idea", "opinion":
		return "", "", false
	case "名字", "name":
		return "user.name", memory.CatProfile, true
	case "生日", "birthday", "date of birth":
		return "user.birthday", memory.CatProfile, true
	case "邮箱", "电子邮箱", "邮件地址", "email", "e-mail", "email address":
		return "user.email", memory.CatProfile, true
	case "手机", "手机号", "电话", "手机号码", "电话号码", "phone", "phone number", "number", "mobile":
		return "user.phone", memory.CatProfile, true
	case "时区", "timezone", "time zone":
		return "user.timezone", memory.CatProfile, true
	case "地址", "住址", "address", "home address":
		return "user.address", memory.CatProfile, true
	case "老家", "家乡", "hometown":
		return "user.origin", memory.CatProfile, true
	case "职位", "工作", "岗位", "职业", "job", "role", "title", "job title", "position":
		return "user.role", memory.CatProfile, true
	case "公司", "company", "employer":
		return "user.employer", memory.CatProfile, true
	case "城市", "city":
		return "user.location", memory.CatProfile, true
	case "目标", "goal", "goals", "plan":
		return "", memory.CatGoal, true
	case "老板", "经理", "领导", "上司", "主管", "组长", "上级", "boss", "manager", "supervisor":
		return "relation.manager", memory.CatRelationship, true
	case "妻子", "老婆", "太太", "爱人", "丈夫", "老公", "wife", "husband", "spouse", "partner":
		return "relation.spouse", memory.CatRelationship, true
	case "女朋友", "男朋友", "girlfriend", "boyfriend":
		return "relation.partner", memory.CatRelationship, true
	case "儿子", "son":
		return "relation.son", memory.CatRelationship, true
	case "女儿", "daughter":
		return "relation.daughter", memory.CatRelationship, true
	case "孩子", "child", "kid":
		return "relation.child", memory.CatRelationship, true
	case "妈妈", "母亲", "mom", "mother":
		return "relation.mother", memory.CatRelationship, true
	case "爸爸", "父亲", "dad", "father":
		return "relation.father", memory.CatRelationship, true
	case "助理", "assistant":
		return "relation.assistant", memory.CatRelationship, true
	case "同事", "colleague", "coworker":
		return "", memory.CatRelationship, true
	}
	return "", memory.CatFact, true
}

// relWordEN is a whole relation word ("wife", "best friend").
var relWordEN = regexp.MustCompile(`^(?:` + relEN + `)$`)

// newsNounEN are things whose "new" one is news, not a slot's value: "my new job is great".
var newsNounEN = map[string]bool{"job": true, "role": true, "position": true, "place": true, "house": true, "home": true,
	"flat": true, "apartment": true, "school": true, "office": true, "car": true, "phone": true, "laptop": true, "bike": true}

// attrSlot is the slot of an attribute of the speaker's, or "" for a phrase too long to
// name one.
func attrSlot(attr string) string {
	if planNoun.MatchString(strings.ToLower(attr)) {
		return "" // a dated plan has slots of its own (plan.<kind>.<what>)
	}
	if hasHan(attr) {
		if n := utf8.RuneCountInString(attr); n >= 2 && n <= 6 {
			return "user.attr." + attr
		}
		return ""
	}
	f := strings.Fields(strings.ToLower(attr))
	if len(f) == 0 || len(f) > 3 || relWordEN.MatchString(f[len(f)-1]) {
		return "" // a relation ("my little sister is …") has the relation rules' slots
	}
	switch f[0] {
	case "new", "current":
		if len(f) > 1 && !newsNounEN[f[len(f)-1]] && (len(f) == 2 || !relWordEN.MatchString(f[len(f)-1])) {
			return attrSlot(strings.Join(f[1:], " ")) // "our new landlord is …": the landlord, now
		}
		return ""
	case "own", "whole", "only", "last", "first", "next", "old", "biggest", "main", "other":
		return "" // "my last trip was …": an event, not a standing attribute
	}
	if s := slugify(attr); s != "" {
		return "user.attr." + s
	}
	return ""
}

// planNoun names a planned event: its slots are the plan rules'.
var planNoun = regexp.MustCompile(`\b(?:appointments?|meetings?|flights?|trips?|interviews?|deadlines?|reservations?|bookings?|calls?|class(?:es)?|exams?|surgery|visit|party|wedding|concert|game|match)\b|预约|会议|航班|面试|考试|手术|课|聚会|婚礼|约会|行程`)

// topicLexicon derives a key from what a preference or constraint is about. Only single
// valued slots get keys; "likes spicy food" and "likes sushi" must not supersede each other,
// so food keys name the food.
type topicLexicon struct {
	meetingRoom, meeting, timeWord, avoid *regexp.Regexp
	allergy, diet                         *regexp.Regexp
	cuisines, drinks, ingredients         []slugRule
	language, theme, editor, indentation  *regexp.Regexp
	timezone, workHours, sleep, notify    *regexp.Regexp
	seat, style                           *regexp.Regexp
}

type slugRule struct {
	re   *regexp.Regexp
	slug string
}

func slugRules(pairs [][2]string) []slugRule {
	out := make([]slugRule, len(pairs))
	for i, p := range pairs {
		out[i] = slugRule{re: regexp.MustCompile(p[0]), slug: p[1]}
	}
	return out
}

func firstSlug(rules []slugRule, lower string) string {
	for _, r := range rules {
		if r.re.MatchString(lower) {
			return r.slug
		}
	}
	return ""
}

func newTopicLexicon() topicLexicon {
	re := regexp.MustCompile
	return topicLexicon{
		meetingRoom: re(`会议室|\b(?:meeting|conference) rooms?\b`),
		meeting:     re(`会议|开会|例会|周会|站会|\bmeetings?\b|\bstand-?ups?\b|\bsyncs?\b|\b1:1s?\b|\bone-on-ones?\b`),
		timeWord:    re(`周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|上午|下午|早上|晚上|中午|傍晚|凌晨|早晨|午饭|午休|周末|\d{1,2}\s*点|[一二三四五六七八九十]{1,3}点|\b(?:mornings?|afternoons?|evenings?|nights?|lunch(?:time)?|noon|weekends?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?)\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b(?:before|after)\s+\d`),
		avoid:       re(`避开|避免|不要|别|不能|不想|不安排|不开|\bavoid\b|\bdon't\b|\bdo not\b|\bnever\b|\bno meetings?\b|\bnot (?:on|before|after|in|during)\b|\bkeep [a-z ]*free\b|\bblock\b`),
		allergy:     re(`过敏|\ballerg(?:ic|y|ies)\b`),
		diet:        re(`素食|吃素|纯素|清真|不吃肉|\bvegetarian\b|\bvegan\b|\bhalal\b|\bkosher\b|\bpescatarian\b`),
		cuisines: slugRules([][2]string{
			{`川菜|四川菜|\bsichuan\b|\bszechuan\b`, "sichuan"},
			{`粤菜|广东菜|早茶|\bcantonese\b|\bdim sum\b`, "cantonese"},
			{`湘菜|\bhunan\b`, "hunan"},
			{`日料|日本料理|日本菜|寿司|拉面|\bjapanese (?:food|cuisine)\b|\bsushi\b|\bramen\b`, "japanese"},
			{`韩餐|韩国料理|韩国菜|\bkorean (?:food|cuisine|bbq)\b`, "korean"},
			{`意大利菜|意餐|意面|披萨|\bitalian (?:food|cuisine)\b|\bpasta\b|\bpizza\b`, "italian"},
			{`泰国菜|泰餐|\bthai (?:food|cuisine)\b`, "thai"},
			{`墨西哥菜|\bmexican (?:food|cuisine)\b|\btacos?\b`, "mexican"},
			{`印度菜|\bindian (?:food|cuisine)\b|\bcurry\b`, "indian"},
			{`法餐|法国菜|\bfrench (?:food|cuisine)\b`, "french"},
			{`火锅|\bhot ?pot\b`, "hotpot"},
			{`西餐|\bwestern food\b`, "western"},
			{`中餐|中国菜|\bchinese (?:food|cuisine)\b`, "chinese"},
			{`烧烤|\bbbq\b|\bbarbecue\b`, "bbq"},
			{`快餐|\bfast food\b`, "fast_food"},
		}),
		drinks: slugRules([][2]string{
			{`奶茶|\bbubble tea\b|\bboba\b`, "milk_tea"},
			{`咖啡|拿铁|美式|\bcoffee\b|\blattes?\b|\bespressos?\b|\bcappuccinos?\b|\bflat whites?\b|\bamericanos?\b|\bmacchiatos?\b|\bcortados?\b`, "coffee"},
			// Before tea: "戒酒以后只喝茶" is about drinking alcohol.
			{`啤酒|红酒|白酒|喝酒|葡萄酒|精酿|戒酒|喝两杯|小酌|\bbeers?\b|\bwines?\b|\balcohol\b|\bcocktails?\b|\bpints?\b|\bales?\b|\blagers?\b|\bwhisk(?:e)?y\b|\bbooze\b|\bsober\b|\bsobriety\b|\bteetotal\b|\bdrinks at the pub\b|\bpub\b`, "alcohol"},
			{`茶|\btea\b`, "tea"},
			{`可乐|汽水|碳酸饮料|\bcolas?\b|\bsodas?\b|\bpop\b|\bsoft drinks?\b|\bfizzy drinks?\b|\bcoke\b|\bpepsi\b`, "soda"},
		}),
		ingredients: slugRules([][2]string{
			{`香菜|\bcilantro\b|\bcoriander\b`, "cilantro"},
			{`花生|\bpeanuts?\b`, "peanut"},
			{`坚果|\bnuts?\b|\btree nuts\b`, "nuts"},
			{`海鲜|\bseafood\b|\bshellfish\b`, "seafood"},
			{`虾|\bshrimps?\b|\bprawns?\b`, "shrimp"},
			{`辣|\bspicy\b|\bspice\b|\bchili\b`, "spicy"},
			{`大蒜|蒜|\bgarlic\b`, "garlic"},
			{`洋葱|\bonions?\b`, "onion"},
			{`蘑菇|\bmushrooms?\b`, "mushroom"},
			{`乳制品|乳糖|牛奶|\bdairy\b|\blactose\b|\bmilk\b`, "dairy"},
			{`麸质|\bgluten\b`, "gluten"},
			{`猪肉|\bpork\b`, "pork"},
			{`牛肉|\bbeef\b`, "beef"},
			{`鸡蛋|\beggs?\b`, "egg"},
			{`芒果|\bmangoe?s?\b`, "mango"},
			{`青霉素|\bpenicillin\b`, "penicillin"},
			{`猫毛|\bcats?\b`, "cat"},
			{`花粉|\bpollen\b`, "pollen"},
		}),
		language:    re(`中文|汉语|英文|英语|日语|日文|法语|德语|韩语|西班牙语|粤语|\bin (?:english|chinese|mandarin|japanese|french|german|spanish|korean)\b|\b(?:reply|replies|respond|responses|answer|answers|write|speak|talk|communicate)\b.*\b(?:english|chinese|mandarin|japanese|french|german|spanish|korean)\b|\b(?:back\s+to|switch(?:ed)?\s+to|use|using)\s+(?:english|chinese|mandarin|japanese|french|german|spanish|korean)\b|\blanguage\b`),
		theme:       re(`深色模式|暗色模式|暗黑模式|深色主题|浅色模式|浅色主题|夜间模式|主题|\bdark (?:mode|theme)\b|\blight (?:mode|theme)\b|\bthemes?\b`),
		editor:      re(`编辑器|\bide\b|\bvim\b|\bneovim\b|\bemacs\b|\bvs ?code\b|\bvisual studio code\b|\bjetbrains\b|\bgoland\b|\bintellij\b|\bsublime\b|\beditor\b`),
		indentation: re(`缩进|\btabs?\b|\bspaces\b|\bindent(?:ation)?\b`),
		timezone:    re(`时区|北京时间|\btime ?zone\b|\butc\b|\bgmt\b|\bpst\b|\bpdt\b|\bcet\b`),
		workHours:   re(`工作时间|上班时间|上班|下班|\bworking hours\b|\bwork hours\b|\boffice hours\b|\bwork(?:ing)? days?\b`),
		sleep:       re(`睡觉|起床|作息|\bsleep\b|\bwake up\b|\bgo to bed\b|\bbedtime\b`),
		notify:      re(`通知|提醒|推送|打电话|短信|微信|邮件|发消息|消息|\bnotif(?:y|ications?)\b|\bremind(?:ers?)?\b|\balerts?\b|\bemails?\b|\btext me\b|\bcall me\b|\bcall\b|\bmessage me\b|\bping me\b|\bslack\b`),
		seat:        re(`靠窗|靠过道|座位|[一二]等座|商务座|经济舱|商务舱|头等舱|卧铺|硬座|软卧|\b(?:economy|business|first|premium economy)[ -]class\b|\bwindow seats?\b|\baisle(?: seats?)?\b|\bseats?\b`),
		style:       re(`简洁|简短|详细|啰嗦|长篇|要点|列表|表格|表情|\bconcise\b|\bbrief\b|\bshort (?:answers|replies|responses)\b|\bverbose\b|\bdetailed\b|\bbullets?(?: points?)?\b|\bmarkdown\b|\bemojis?\b|\btables?\b|\bparagraphs?\b|\bone[- ]liners?\b|\bwalls? of text\b|段落|分点`),
	}
}

// key derives the slot of a preference or constraint from its (lower-cased) sentence, or ""
// when the topic is unknown or multi-valued.
func (tl topicLexicon) key(lower string) string {
	switch {
	case tl.meetingRoom.MatchString(lower):
		return "meeting.room"
	case tl.meeting.MatchString(lower):
		switch {
		case !tl.timeWord.MatchString(lower):
			return "meeting.preference"
		case tl.avoid.MatchString(lower):
			return "meeting.avoid_time"
		}
		return "meeting.preferred_time"
	case tl.allergy.MatchString(lower):
		if ing := firstSlug(tl.ingredients, lower); ing != "" && ing != "spicy" {
			return "allergy." + ing
		}
		return ""
	case tl.diet.MatchString(lower):
		return "food.diet"
	case tl.style.MatchString(lower):
		// How answers are written, whatever else the sentence names ("long paragraphs
		// are fine, I read them over coffee").
		return "response.style"
	}
	if c := firstSlug(tl.cuisines, lower); c != "" {
		return "food.cuisine." + c
	}
	if d := firstSlug(tl.drinks, lower); d != "" && !strings.Contains(lower, "酒店") {
		return "drink." + d
	}
	if ing := firstSlug(tl.ingredients, lower); ing == "spicy" {
		return "food.spicy"
	} else if ing != "" {
		return "food.ingredient." + ing
	}
	switch {
	case tl.language.MatchString(lower):
		return "language.preference"
	case tl.theme.MatchString(lower):
		if tl.editor.MatchString(lower) {
			return "editor.theme"
		}
		return "ui.theme"
	case tl.editor.MatchString(lower):
		return "editor.preference"
	case tl.indentation.MatchString(lower):
		return "code.indentation"
	case tl.seat.MatchString(lower):
		// Before sleep and hours: "aisle seat please, I sleep badly on planes".
		return "travel.seat"
	case tl.timezone.MatchString(lower):
		return "user.timezone"
	case tl.workHours.MatchString(lower):
		return "schedule.working_hours"
	case tl.sleep.MatchString(lower):
		return "schedule.sleep"
	case tl.notify.MatchString(lower):
		if tl.timeWord.MatchString(lower) {
			return "notification.quiet_hours"
		}
		return "notification.channel"
	}
	return ""
}

// pastOrModal are the modals and irregular past forms: they take no -s after "the user".
var pastOrModal = map[string]bool{
	"can": true, "can't": true, "cannot": true, "could": true, "couldn't": true, "will": true,
	"won't": true, "would": true, "wouldn't": true, "should": true, "shouldn't": true, "must": true,
	"mustn't": true, "may": true, "might": true, "shall": true, "did": true, "didn't": true,
	"was": true, "wasn't": true, "were": true, "had": true, "hadn't": true, "is": true, "went": true,
	"got": true, "made": true, "took": true, "said": true, "found": true, "left": true,
	"bought": true, "ate": true, "came": true, "saw": true, "knew": true, "thought": true,
	"told": true, "broke": true, "chose": true, "sent": true, "spent": true, "felt": true,
	"lost": true, "met": true, "paid": true, "ran": true, "wrote": true, "built": true, "began": true,
	"became": true, "forgot": true, "gave": true, "kept": true, "heard": true, "put": true,
	"set": true, "read": true, "let": true, "cut": true, "hit": true, "quit": true, "sold": true,
	"won": true, "flew": true, "drove": true, "rode": true, "swam": true, "sang": true, "threw": true,
	"caught": true, "brought": true, "taught": true, "fought": true, "held": true, "stood": true,
	"understood": true, "wore": true, "tore": true, "woke": true, "spoke": true, "stole": true,
	"froze": true, "grew": true, "drew": true, "slept": true, "meant": true, "dealt": true,
	"lent": true, "sat": true, "shot": true, "led": true, "fed": true, "fell": true, "hung": true,
	"dug": true, "stuck": true, "struck": true, "bit": true,
}

// presentEed reports a present verb that ends in -eed (need, feed, proceed): not a past.
func presentEed(lw string) bool {
	switch lw {
	case "agreed", "disagreed", "freed", "guaranteed", "decreed", "refereed", "emceed":
		return false
	}
	return strings.HasSuffix(lw, "eed")
}

// unconjugated reports a modal or a past form, also behind a prefix ("overpaid", "rebuilt",
// "misread"): one that takes no -s.
func unconjugated(lw string) bool {
	if pastOrModal[lw] {
		return true
	}
	for _, p := range []string{"over", "under", "mis", "out", "re", "up", "with", "for"} {
		if rest, ok := strings.CutPrefix(lw, p); ok && len(rest) > 2 && pastOrModal[rest] {
			return true
		}
	}
	return false
}

// clauseExpiry is expiry for a statement of kind signal told beside another clause with
// its own date: "my niece turns five next week, she loves horses" — the liking does not
// end next week. A clause that is only the date ("This week, no calls") still bounds it.
func (o *Offline) clauseExpiry(s string, ref time.Time, signal string) *time.Time {
	parts := clauseSplit.Split(s, -1)
	if len(parts) < 2 {
		return o.expiry(s, ref)
	}
	var own []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		long := len(strings.Fields(p)) >= 3 || utf8.RuneCountInString(p) >= 6 && hasHan(p)
		if long && !slices.Contains(o.lex.sentenceSignals(p), signal) && len(o.lex.temporal.Find(p, ref)) > 0 {
			continue // another statement's date
		}
		own = append(own, p)
	}
	return o.expiry(strings.Join(own, ", "), ref)
}

// clauseSplit cuts a sentence into clauses.
var clauseSplit = regexp.MustCompile(`\s*[,;，；]\s*`)

// namesAsked are the name facts of a question: a relation's or a pet's name, the speaker's
// home town. Nothing else of a question is a statement.
func (o *Offline) namesAsked(s string, ref time.Time) []draft {
	s = strings.TrimSpace(clipSentence(s))
	if !isQuestion(s) || o.lex.hypothetical(s) || whatIfEN.MatchString(s) {
		return nil
	}
	var out []draft
	for _, f := range o.clauseFacts(o.clean(s), ref) {
		if questionWordZH.MatchString(f.content) {
			continue // "你记得它叫啥？" asks the name
		}
		if strings.HasSuffix(f.key, ".name") && f.key != "user.name" || f.key == "user.origin" {
			out = append(out, o.factDraft(f, ref, "clause"))
		}
	}
	return out
}

// questionWordZH is a Chinese question word where a name would be.
var questionWordZH = regexp.MustCompile(`什么|谁|哪|啥|吗|呢|多少`)

// whatIfEN asks about a world that is not the speaker's: "what if my dog ran away?".
var whatIfEN = regexp.MustCompile(`(?i)^(?:so\s+|but\s+)?(?:what\s+if|suppose|imagine|hypothetically)\b`)
