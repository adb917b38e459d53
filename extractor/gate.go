package extractor

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Signals a turn can carry. The gate reports them; the pipeline counts them.
const (
	SignalRemember       = "remember"
	SignalPreference     = "preference"
	SignalProhibition    = "prohibition"
	SignalConstraint     = "constraint"
	SignalDecision       = "decision"
	SignalReason         = "reason"
	SignalIdentity       = "identity"
	SignalProcedure      = "procedure" // "if X fails, do Y"
	SignalTaskResult     = "task_result"
	SignalTemporaryState = "temporary_state" // "this week I'm in Berlin"
	SignalChange         = "change"          // "周五下午开会也可以了", "switch to the second floor"
	SignalPlan           = "plan"            // a dated plan or appointment, or a new date for one
	SignalClaim          = "claim"           // an assistant's price, offer or policy statement
	SignalConfirmation   = "confirmation"    // a user's "yes" to an assistant claim
	SignalToolFailure    = "tool_failure"
	SignalToolRecovery   = "tool_recovery"
	SignalToolStep       = "tool_step" // a call that succeeded while another tool's failure was pending: maybe the fix
	// SignalFirstPerson is weak: a substantive first-person statement without an explicit cue.
	SignalFirstPerson = "first_person"
)

// GateResult is the gate's verdict on one turn.
type GateResult struct {
	Pass    bool     `json:"pass"`
	Signals []string `json:"signals,omitempty"`
	Reason  string   `json:"reason"`
}

// Gate decides, without any model, whether a turn is worth extracting from: greetings,
// thanks and other chit-chat are skipped; explicit signals always pass.
type Gate struct {
	lex *lexicon
	// rules are the offline extractor's: a turn they take a fact from ("跳槽到一家券商做
	// 研究员", "picked up a Pixel") is worth extracting whatever its cues, so the gate
	// never drops what the rules would keep.
	rules *Offline
}

// NewGate compiles the gate's bilingual lexicon.
func NewGate() *Gate {
	o := NewOffline()
	return &Gate{lex: o.lex, rules: o}
}

// Check judges a turn on its own. A tool success can only be recognised as a recovery with
// the turns before it: use CheckWith or CheckBatch for that.
func (g *Gate) Check(t memory.Turn) GateResult { return g.CheckWith(t, nil) }

// CheckWith judges a turn given the session's earlier turns, older first.
func (g *Gate) CheckWith(t memory.Turn, earlier []memory.Turn) GateResult {
	if t.Deleted {
		return skip("deleted turn")
	}
	switch t.Role {
	case memory.RoleTool:
		return g.checkTool(t, earlier)
	case memory.RoleUser:
		return g.checkUser(t, earlier)
	case memory.RoleAssistant:
		if strings.TrimSpace(t.Content) == "" {
			return skip("empty turn")
		}
		// Assistant turns are only worth a look when they state facts that could be
		// hallucinated (prices, policies) or record a decision; trust judges them later.
		if sigs := g.lex.turnSignals(t.Content, true); len(sigs) > 0 {
			return pass(sigs...)
		}
		// Between a failed call and its retry, the assistant's account of what it changed
		// is the lesson of the recovery: the extractor must see it in the batch.
		if failurePending(earlier) && g.lex.fixCue.MatchString(t.Content) {
			return pass(SignalToolStep)
		}
		return skip("assistant turn without a claim or decision")
	}
	return skip("system turn")
}

// CheckBatch judges every turn of b.New, each in the context of the window and the new
// turns before it. Results are aligned with b.New.
func (g *Gate) CheckBatch(b Batch) []GateResult {
	earlier := make([]memory.Turn, 0, len(b.Window)+len(b.New))
	earlier = append(earlier, b.Window...)
	out := make([]GateResult, len(b.New))
	for i, t := range b.New {
		out[i] = g.CheckWith(t, earlier)
		earlier = append(earlier, t)
	}
	return out
}

func (g *Gate) checkUser(t memory.Turn, earlier []memory.Turn) GateResult {
	t = g.rules.inContext(t, earlier)
	text := spokenText(t)
	if text == "" {
		return skip("empty turn")
	}
	// "对" alone is chit-chat, except as the answer to an assistant claim: trust needs it.
	if prev, ok := lastSpoken(earlier); ok && prev.Role == memory.RoleAssistant && isConfirmation(text) &&
		containsString(g.lex.turnSignals(prev.Content, true), SignalClaim) {
		return pass(SignalConfirmation)
	}
	if g.lex.isSmallTalk(text) {
		return skip("small talk")
	}
	text = restoreSubjects(text)
	if sigs := g.lex.turnSignals(text, false); len(sigs) > 0 {
		return pass(sigs...)
	}
	if g.lex.weakFirstPerson(text) {
		return GateResult{Pass: true, Signals: []string{SignalFirstPerson}, Reason: "weak: substantive first-person statement"}
	}
	if len(g.rules.fromUser(t)) > 0 {
		return GateResult{Pass: true, Signals: []string{SignalFirstPerson}, Reason: "weak: a clause rule takes a fact from it"}
	}
	return skip("no signal")
}

func (g *Gate) checkTool(t memory.Turn, earlier []memory.Turn) GateResult {
	task := t.TaskID != "" || g.lex.taskDone(t.Content)
	if t.Tool == nil {
		if task {
			return pass(SignalTaskResult)
		}
		return skip("tool turn without a call record or signal")
	}
	switch {
	case toolFailed(t.Tool):
		return pass(SignalToolFailure)
	case toolSucceeded(t.Tool):
		var sigs []string
		if pendingFailure(earlier, t.Tool.Name) {
			sigs = append(sigs, SignalToolRecovery)
		} else if otherPendingFailure(earlier, t.Tool.Name) {
			sigs = append(sigs, SignalToolStep)
		}
		if task {
			sigs = append(sigs, SignalTaskResult)
		}
		if len(sigs) > 0 {
			return pass(sigs...)
		}
	}
	return skip("tool success without a preceding failure or a task")
}

func pass(sigs ...string) GateResult {
	return GateResult{Pass: true, Signals: sigs, Reason: "signals: " + strings.Join(sigs, ", ")}
}

func skip(reason string) GateResult { return GateResult{Reason: reason} }

func toolFailed(c *memory.ToolCall) bool {
	switch strings.ToLower(c.Status) {
	case "failure", "failed", "error":
		return true
	}
	return false
}

func toolSucceeded(c *memory.ToolCall) bool {
	switch strings.ToLower(c.Status) {
	case "success", "succeeded", "ok":
		return true
	}
	return false
}

// pendingFailure reports whether the latest call of the named tool in earlier failed.
func pendingFailure(earlier []memory.Turn, name string) bool {
	for i := len(earlier) - 1; i >= 0; i-- {
		t := earlier[i]
		if t.Role != memory.RoleTool || t.Tool == nil || t.Tool.Name != name {
			continue
		}
		return toolFailed(t.Tool)
	}
	return false
}

// otherPendingFailure reports whether, among the latest turns of earlier, a tool other
// than name failed and has not succeeded since: a success of name may be what fixes it.
func otherPendingFailure(earlier []memory.Turn, name string) bool {
	last := map[string]bool{} // tool → its latest call failed (latest first, so first seen wins)
	for i, n := len(earlier)-1, 0; i >= 0 && n < maxStepLookback; i-- {
		t := earlier[i]
		if t.Role != memory.RoleTool || t.Tool == nil {
			continue
		}
		n++
		if _, seen := last[t.Tool.Name]; seen {
			continue
		}
		last[t.Tool.Name] = toolFailed(t.Tool)
		if t.Tool.Name != name && last[t.Tool.Name] {
			return true
		}
	}
	return false
}

// failurePending reports whether, among the latest turns of earlier, some tool's latest
// call failed.
func failurePending(earlier []memory.Turn) bool {
	last := map[string]bool{}
	for i, n := len(earlier)-1, 0; i >= 0 && n < maxStepLookback; i-- {
		t := earlier[i]
		if t.Role != memory.RoleTool || t.Tool == nil {
			continue
		}
		n++
		if _, seen := last[t.Tool.Name]; seen {
			continue
		}
		last[t.Tool.Name] = toolFailed(t.Tool)
		if last[t.Tool.Name] {
			return true
		}
	}
	return false
}

// maxStepLookback bounds how many earlier tool turns a step looks back over.
const maxStepLookback = 20

// lastSpoken is the latest user or assistant turn of turns.
func lastSpoken(turns []memory.Turn) (memory.Turn, bool) {
	for i := len(turns) - 1; i >= 0; i-- {
		if r := turns[i].Role; r == memory.RoleUser || r == memory.RoleAssistant {
			return turns[i], true
		}
	}
	return memory.Turn{}, false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// splitSentences cuts text at sentence ends (。！？!?；; newlines, and a full stop followed
// by a space, so 19.9 stays whole) and folds a sentence that only gives a reason ("因为…",
// "Because …") into the one before it.
// titleAbbrevs end with a full stop that does not end the sentence ("Mr. Okafor").
var titleAbbrevs = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"mt": true, "jr": true, "sr": true, "vs": true, "e.g": true, "i.e": true, "approx": true}

// abbreviationEnd reports text ending in a title or a Latin abbreviation.
func abbreviationEnd(rs []rune) bool {
	j := len(rs)
	for j > 0 && (unicode.IsLetter(rs[j-1]) || rs[j-1] == '.') {
		j--
	}
	return titleAbbrevs[strings.ToLower(string(rs[j:]))]
}

// listNumber reports a step number before the full stop at rs's end ("… 2. bump the
// version") in a numbered list: 1 when "2." follows it, n when "n-1." came before. The
// stop numbers a list item, it does not end a sentence ("my son is 5. He …" still ends).
func listNumber(rs []rune, rest []rune) bool {
	j := len(rs)
	for j > 0 && unicode.IsDigit(rs[j-1]) {
		j--
	}
	if n := len(rs) - j; n == 0 || n > 2 {
		return false
	}
	if j > 0 && !unicode.IsSpace(rs[j-1]) && !strings.ContainsRune(":：", rs[j-1]) {
		return false
	}
	n, _ := strconv.Atoi(string(rs[j:]))
	if n == 1 {
		return strings.Contains(string(rest), " 2. ")
	}
	return strings.Contains(string(rs[:j]), strconv.Itoa(n-1)+". ")
}

func splitSentences(text string) []string {
	var parts []string
	var b strings.Builder
	rs := []rune(text)
	for i, r := range rs {
		b.WriteRune(r)
		end := false
		switch r {
		case '。', '！', '？', '!', '?', '；', ';', '\n', '…':
			end = true
		case '.':
			end = (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) && !abbreviationEnd(rs[:i]) && !listNumber(rs[:i], rs[i:])
		}
		if end && i+1 < len(rs) && strings.ContainsRune("。！？!?；;…", rs[i+1]) {
			end = false // keep "?!" and "。。。" together
		}
		if end {
			if s := strings.TrimSpace(b.String()); s != "" {
				parts = append(parts, s)
			}
			b.Reset()
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		parts = append(parts, s)
	}
	var out []string
	for _, p := range parts {
		if len(out) > 0 && reasonLead(p) {
			prev := trimEnd(out[len(out)-1])
			if hasHan(p) {
				out[len(out)-1] = prev + "，" + p
			} else {
				out[len(out)-1] = prev + ", " + lowerFirst(p)
			}
			continue
		}
		out = append(out, p)
	}
	return withPlainIdioms(withAntecedents(withAsides(withBackgroundItems(out))))
}

func reasonLead(s string) bool {
	l := lowerText(s)
	for _, p := range []string{"因为", "原因是", "由于", "because", "the reason is", "'cause"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// isQuestion reports a sentence that asks rather than states.
func isQuestion(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") {
		return true
	}
	s = strings.TrimRight(s, "。.!！~～ ")
	for _, p := range []string{"吗", "么", "嘛"} {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

// trimQuestion drops a question's ending: "… 吗？" → "…".
func trimQuestion(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), "?？。.!！ ")
	for _, p := range []string{"吗", "么", "嘛"} {
		s = strings.TrimSuffix(s, p)
	}
	return strings.TrimSpace(s)
}

// trimEnd drops trailing sentence punctuation and spaces.
func trimEnd(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("。．.！!？?；;，,、~～…", r)
	})
}

// lowerText lower-cases and straightens apostrophes, which is what cues are written against.
func lowerText(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "’", "'"))
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsUpper(r) {
		return s
	}
	// Keep acronyms and names that are all capitals ("API", "I").
	if r2, _ := utf8.DecodeRuneInString(s[n:]); unicode.IsUpper(r2) || (r == 'I' && (len(s) == 1 || !unicode.IsLetter(r2))) {
		return s
	}
	// A title before a name ("Dr. Okafor") stays as written: the name follows.
	if i := strings.IndexByte(s, '.'); i > 0 && i <= 4 && titleAbbrevs[strings.ToLower(s[:i])] {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
