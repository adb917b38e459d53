package extractor

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Confidence set by the evidence a procedural candidate has.
const (
	confOneRecovery   = 0.6 // one failure→success pair
	confManyRecovery  = 0.8 // two or more
	confInstruction   = 0.7 // the user said how to do it
	confNoEvidence    = 0.3
	confUserConfirmed = 0.8
	confToolBacked    = 0.7
)

// ApplyTrust decides, for each candidate, whether its content can be believed, and returns
// updated copies (the input is not modified):
//
//   - user-, tool-, manual- and consolidation-sourced candidates are trusted;
//   - an assistant's claim is untrusted (the resolver holds it pending) unless the user's
//     next turn after it confirms it ("对", "yes", "that's right" …), whose id is then
//     appended to SourceTurnIDs, or a successful tool result of the batch shares a salient
//     token with it (a number, a product or order name), whose id is appended likewise;
//   - a procedural candidate needs a failure→success pattern of its tool in the batch (one
//     pair: confidence 0.6, more: 0.8) or an explicit instruction by the user (0.7);
//     without either it is untrusted at 0.3.
func ApplyTrust(b Batch, cands []memory.Candidate) []memory.Candidate {
	timeline := b.timeline()
	pos := make(map[string]int, len(timeline))
	for i, t := range timeline {
		if _, seen := pos[t.TurnID]; !seen {
			pos[t.TurnID] = i
		}
	}
	annotation := regexp.MustCompile(`\s?[(（]\d{4}-\d{2}(?:-\d{2})?(?:\s*(?:to|至)\s*\d{4}-\d{2}-\d{2})?[)）]`)
	out := make([]memory.Candidate, len(cands))
	for i, c := range cands {
		c.SourceTurnIDs = append([]string(nil), c.SourceTurnIDs...)
		if c.Source == "" {
			c.Source = inferSource(c, timeline, pos)
		}
		switch {
		case c.Type == memory.Procedural:
			trustProcedure(&c, timeline, pos)
		case c.Source == memory.SourceAssistant:
			trustClaim(&c, timeline, pos, annotation)
		case c.Source.Valid():
			c.Trusted = true
		default:
			c.Trusted = false // unknown origin: let the resolver hold it
		}
		out[i] = c
	}
	return out
}

func inferSource(c memory.Candidate, timeline []memory.Turn, pos map[string]int) memory.Source {
	for _, id := range c.SourceTurnIDs {
		if p, ok := pos[id]; ok {
			switch timeline[p].Role {
			case memory.RoleUser:
				return memory.SourceUser
			case memory.RoleAssistant:
				return memory.SourceAssistant
			case memory.RoleTool:
				return memory.SourceTool
			}
		}
	}
	return ""
}

func trustProcedure(c *memory.Candidate, timeline []memory.Turn, pos map[string]int) {
	tool, _ := c.Metadata["tool"].(string)
	instructed := false
	for _, id := range c.SourceTurnIDs {
		p, ok := pos[id]
		if !ok {
			continue
		}
		switch t := timeline[p]; t.Role {
		case memory.RoleTool:
			if tool == "" && t.Tool != nil {
				tool = t.Tool.Name
			}
		case memory.RoleUser:
			instructed = true
		}
	}
	switch pairs := countRecoveries(timeline, tool); {
	case tool != "" && pairs >= 2:
		c.Trusted, c.Confidence = true, confManyRecovery
	case tool != "" && pairs == 1:
		c.Trusted, c.Confidence = true, confOneRecovery
	case instructed:
		c.Trusted, c.Confidence = true, confInstruction
	default:
		c.Trusted, c.Confidence = false, min(c.Confidence, confNoEvidence)
	}
}

// countRecoveries counts the failure→success pairs of the named tool in timeline.
func countRecoveries(timeline []memory.Turn, tool string) int {
	pairs, failing := 0, false
	for _, t := range timeline {
		if t.Role != memory.RoleTool || t.Tool == nil || t.Tool.Name != tool {
			continue
		}
		switch {
		case toolFailed(t.Tool):
			failing = true
		case toolSucceeded(t.Tool) && failing:
			pairs++
			failing = false
		}
	}
	return pairs
}

func trustClaim(c *memory.Candidate, timeline []memory.Turn, pos map[string]int, annotation *regexp.Regexp) {
	c.Trusted = false
	said := -1
	for _, id := range c.SourceTurnIDs {
		if p, ok := pos[id]; ok && timeline[p].Role == memory.RoleAssistant {
			said = max(said, p)
		}
	}
	if said < 0 {
		return
	}
	// Only the user's direct reply counts: a later "yes" may answer something else.
	for _, t := range timeline[said+1:] {
		if t.Role != memory.RoleUser {
			continue
		}
		if !t.Deleted && isConfirmation(t.Content) {
			c.Trusted = true
			c.Confidence = max(c.Confidence, confUserConfirmed)
			c.SourceTurnIDs = appendUnique(c.SourceTurnIDs, t.TurnID)
			return
		}
		break
	}
	tokens := salientTokens(annotation.ReplaceAllString(c.Content, ""))
	if len(tokens) == 0 {
		return
	}
	for _, t := range timeline {
		if t.Role != memory.RoleTool || t.Deleted || (t.Tool != nil && !toolSucceeded(t.Tool)) {
			continue
		}
		if sharesToken(tokens, t.Content) {
			c.Trusted = true
			c.Confidence = max(c.Confidence, confToolBacked)
			c.SourceTurnIDs = appendUnique(c.SourceTurnIDs, t.TurnID)
			return
		}
	}
}

func appendUnique(ids []string, id string) []string {
	if containsString(ids, id) {
		return ids
	}
	return append(ids, id)
}

// isConfirmation reports a reply that agrees without correcting: "对", "是的，没错",
// "yes", "that's right". "对了，…" (by the way), questions and "yes, but …" do not count.
func isConfirmation(text string) bool {
	s := lowerText(strings.TrimSpace(text))
	if s == "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") || strings.HasSuffix(strings.TrimRight(s, "。.!！ "), "吗") {
		return false
	}
	for _, p := range []string{"对了", "对于", "对方", "对不起", "no", "not", "nope", "nah"} {
		if hasPrefixWord(s, p) {
			return false
		}
	}
	for _, m := range []string{"不对", "不是", "不过", "但是", "但", "其实", "错了", "搞错", "说错", "有误", "并非", "不太对", " but", "but ", "actually", "however", "wrong", "incorrect", "not quite", "isn't", "wasn't", "not "} {
		if strings.Contains(s, m) {
			return false
		}
	}
	if strings.Trim(s, "。.!！ ") == "是" {
		return true
	}
	for _, w := range []string{"对", "是的", "是啊", "是呀", "没错", "确实", "正确", "就是这样", "嗯对", "嗯，对", "嗯嗯对",
		"yes", "yeah", "yep", "yup", "right", "exactly", "correct", "that's right", "that's correct", "thats right", "true", "indeed", "absolutely"} {
		if hasPrefixWord(s, w) {
			return true
		}
	}
	return false
}

// hasPrefixWord is HasPrefix that, for a Latin prefix, also wants a word boundary after it
// ("yes" but not "yesterday").
func hasPrefixWord(s, p string) bool {
	if !strings.HasPrefix(s, p) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(p)
	if last > unicode.MaxASCII {
		return true
	}
	next, n := utf8.DecodeRuneInString(s[len(p):])
	return n == 0 || !(unicode.IsLetter(next) || unicode.IsDigit(next))
}

// salientTokens are the parts of a claim a tool result can back: numbers of two or more
// digits (or with decimals), Latin words with an inner capital or a digit (SKUs, order ids,
// "GitHub"), capitalised words that are not common sentence words (names), and quoted text.
func salientTokens(s string) []string {
	var out []string
	add := func(t string) {
		if t != "" && !containsString(out, t) {
			out = append(out, t)
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || ((rs[j] == '.' || rs[j] == ',') && j+1 < len(rs) && unicode.IsDigit(rs[j+1]))) {
				j++
			}
			if num := strings.ReplaceAll(string(rs[i:j]), ",", ""); len(num) >= 2 {
				add(num)
			}
			i = j
		case r < unicode.MaxASCII && unicode.IsLetter(r):
			j := i
			for j < len(rs) && rs[j] < unicode.MaxASCII && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '-' || rs[j] == '_') {
				j++
			}
			w := string(rs[i:j])
			inner := strings.ContainsFunc(w[1:], func(r rune) bool { return unicode.IsUpper(r) || unicode.IsDigit(r) })
			name := unicode.IsUpper(r) && !commonWord(strings.ToLower(w))
			if len(w) >= 3 && (inner || name) {
				add(strings.ToLower(w))
			}
			i = j
		case strings.ContainsRune("“「《\"", r):
			j := i + 1
			for j < len(rs) && !strings.ContainsRune("”」》\"", rs[j]) {
				j++
			}
			if q := strings.TrimSpace(string(rs[i+1 : j])); utf8.RuneCountInString(q) >= 2 {
				add(strings.ToLower(q))
			}
			i = j + 1
		default:
			i++
		}
	}
	return out
}

// commonWord lists capitalised words that start sentences rather than name things.
func commonWord(w string) bool {
	switch w {
	case "the", "we", "our", "you", "your", "it", "its", "this", "that", "these", "those", "they", "there",
		"here", "and", "but", "for", "with", "yes", "sure", "okay", "assistant", "stated", "user", "hello",
		"thanks", "please", "also", "however", "note", "what", "when", "where", "which", "who", "how", "why",
		"all", "any", "each", "every", "some", "his", "her", "she", "him", "one", "free", "per":
		return true
	}
	return false
}

// sharesToken reports whether text contains one of the tokens; Latin and numeric tokens
// must stand as whole words ("199" is not in "1990").
func sharesToken(tokens []string, text string) bool {
	lower := lowerText(text)
	for _, tok := range tokens {
		if !isASCIIWord(tok) {
			if strings.Contains(lower, tok) {
				return true
			}
			continue
		}
		for from := 0; ; {
			i := strings.Index(lower[from:], tok)
			if i < 0 {
				break
			}
			i += from
			before, _ := utf8.DecodeLastRuneInString(lower[:i])
			after, _ := utf8.DecodeRuneInString(lower[i+len(tok):])
			if !isWordRune(before) && !isWordRune(after) {
				return true
			}
			from = i + len(tok)
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func isASCIIWord(s string) bool {
	for _, r := range s {
		if r >= unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
