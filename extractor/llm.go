package extractor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// LLM extractor defaults.
const (
	DefaultLLMName        = "llm"
	DefaultLLMVersion     = "1.0.0"
	DefaultLLMMaxMemories = 16
)

// Output limits the extractor enforces on the model's reply.
const (
	maxContentRunes = 1000
	maxKeyLength    = 100
	maxReplyEcho    = 8000 // runes of an invalid reply sent back with the correction
	maxReportedErrs = 8    // validation problems listed in one correction
)

// LLMConfig configures an LLMExtractor. Zero values take the documented defaults.
type LLMConfig struct {
	// Name and Version identify the extractor on every candidate and enter candidate ids:
	// bump Version when the prompt or schema changes meaningfully. Defaults "llm", "1.0.0".
	Name    string
	Version string
	// MaxMemories caps the memories taken from one reply (the most important are kept).
	// Default 16.
	MaxMemories int
	// Redactor, when set, scrubs turn content before it is sent to the model provider.
	// Turns are normally redacted at ingest already; this is defence in depth.
	Redactor *redact.Redactor
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// LLMExtractor extracts memories with a chat model: one call per batch, with a JSON
// schema, at temperature 0. A reply that fails validation is retried once with the
// problems appended as a corrective message; a second invalid reply is a permanent
// failure (the batch is dead-lettered). Transient HTTP failures (429, 5xx, timeouts) are
// retried inside the chat client, honouring Retry-After.
type LLMExtractor struct {
	chat     *llm.ChatClient
	cfg      LLMConfig
	schema   *llm.JSONSchema
	temporal *Temporal
	keyRE    *regexp.Regexp
	log      *slog.Logger

	calls, corrections, invalid atomic.Int64
}

var (
	_ Extractor      = (*LLMExtractor)(nil)
	_ LLMCallCounter = (*LLMExtractor)(nil)
)

// NewLLMExtractor returns an extractor that uses chat.
func NewLLMExtractor(chat *llm.ChatClient, cfg LLMConfig) (*LLMExtractor, error) {
	if chat == nil {
		return nil, errors.New("llm extractor: nil chat client")
	}
	cfg.Name = cmp.Or(cfg.Name, DefaultLLMName)
	cfg.Version = cmp.Or(cfg.Version, DefaultLLMVersion)
	if cfg.MaxMemories <= 0 {
		cfg.MaxMemories = DefaultLLMMaxMemories
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &LLMExtractor{
		chat: chat,
		cfg:  cfg,
		schema: &llm.JSONSchema{
			Name:        "memory_extraction",
			Description: "Durable memories extracted from the new turns of a conversation",
			Schema:      extractionSchema(),
		},
		temporal: NewTemporal(),
		keyRE:    regexp.MustCompile(`^[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)*$`),
		log:      cfg.Logger.With("component", "extractor.llm", "model", chat.Model()),
	}, nil
}

// Name implements Extractor.
func (e *LLMExtractor) Name() string { return e.cfg.Name }

// Version implements Extractor.
func (e *LLMExtractor) Version() string { return e.cfg.Version }

// Model implements Extractor: the configured chat model.
func (e *LLMExtractor) Model() string { return e.chat.Model() }

// LLMCalls is the number of chat completions requested, corrective retries included.
func (e *LLMExtractor) LLMCalls() int64 { return e.calls.Load() }

// Corrections is the number of corrective retries after an invalid reply.
func (e *LLMExtractor) Corrections() int64 { return e.corrections.Load() }

// InvalidReplies is the number of batches given up on after a second invalid reply.
func (e *LLMExtractor) InvalidReplies() int64 { return e.invalid.Load() }

// Extract implements Extractor.
func (e *LLMExtractor) Extract(ctx context.Context, b Batch) ([]memory.Candidate, error) {
	if len(b.New) == 0 {
		return nil, nil
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: buildUserPrompt(b, e.cfg.Redactor)}}
	reply, err := e.complete(ctx, msgs)
	if err != nil {
		return nil, err
	}
	cands, verr := e.parse(b, reply)
	if verr == nil {
		return cands, nil
	}
	e.corrections.Add(1)
	e.log.WarnContext(ctx, "invalid extraction reply; asking for a correction", "session", b.SessionID, "err", verr)
	msgs = append(msgs,
		llm.Message{Role: llm.RoleAssistant, Content: truncateRunes(reply, maxReplyEcho)},
		llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(correctionPrompt, verr)})
	if reply, err = e.complete(ctx, msgs); err != nil {
		return nil, err
	}
	cands, err = e.parse(b, reply)
	if err != nil {
		e.invalid.Add(1)
		// Not permanent: the worker holds the batch's turns and dead-letters them only if
		// the replies stay invalid for them while other batches succeed.
		return nil, fmt.Errorf("llm extraction: reply still invalid after a corrective retry: %w: %w", llm.ErrInvalidReply, err)
	}
	return cands, nil
}

// complete makes one chat call. Errors retrying cannot fix (bad request, auth, unknown
// model) are permanent; the rest are left for the worker's backoff.
func (e *LLMExtractor) complete(ctx context.Context, msgs []llm.Message) (string, error) {
	e.calls.Add(1)
	resp, err := e.chat.Complete(ctx, llm.ChatRequest{
		System:   extractionSystemPrompt,
		Messages: msgs,
		Schema:   e.schema,
		// The worker runtime reports progress on the message while the handler runs, so a
		// wait only needs to be visible.
		OnWait: func(d time.Duration) { e.log.InfoContext(ctx, "llm call failed; waiting before retrying", "wait", d) },
	})
	if err != nil {
		err = fmt.Errorf("llm extraction: %w", err)
		if !llm.IsRetryable(err) {
			return "", streams.Permanent(err)
		}
		return "", err
	}
	return resp.Content, nil
}

// llmReply is the reply's shape. Pointers tell a missing field from a zero one.
type llmReply struct {
	Memories *[]llmMemory `json:"memories"`
}

type llmMemory struct {
	Type          string   `json:"type"`
	Category      string   `json:"category"`
	Key           *string  `json:"key"`
	Content       string   `json:"content"`
	Importance    *float64 `json:"importance"`
	Confidence    *float64 `json:"confidence"`
	SourceTurnIDs []string `json:"source_turn_ids"`
	ValidFrom     *string  `json:"valid_from"`
	ExpireAt      *string  `json:"expire_at"`
	Speaker       string   `json:"speaker"`
}

// validationError lists what is wrong with a reply, for the corrective message.
type validationError struct{ problems []string }

func (v *validationError) Error() string {
	s := strings.Join(v.problems, "; ")
	if len(v.problems) >= maxReportedErrs {
		s += "; …"
	}
	return s
}

func (v *validationError) addf(format string, args ...any) {
	if len(v.problems) < maxReportedErrs {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

// parse decodes and validates a reply into candidates (without ids).
func (e *LLMExtractor) parse(b Batch, reply string) ([]memory.Candidate, error) {
	var out llmReply
	body := stripFences(reply)
	if body == "" {
		return nil, &validationError{problems: []string{"the reply is empty"}}
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		return nil, &validationError{problems: []string{"the reply is not valid JSON: " + err.Error()}}
	}
	if out.Memories == nil {
		return nil, &validationError{problems: []string{`the reply has no "memories" array`}}
	}
	pos := make(map[string]int, len(b.New))
	for i, t := range b.New {
		pos[t.TurnID] = i
	}
	verr := &validationError{}
	var cands []memory.Candidate
	seen := map[string]bool{}
	for i, m := range *out.Memories {
		c, ok := e.candidate(b, pos, i, m, verr)
		if !ok {
			continue
		}
		dedupe := string(c.Type) + "\x00" + c.Content
		if seen[dedupe] {
			continue
		}
		seen[dedupe] = true
		cands = append(cands, c)
	}
	if len(verr.problems) > 0 {
		return nil, verr
	}
	if len(cands) > e.cfg.MaxMemories {
		e.log.Warn("reply has more memories than allowed; keeping the most important",
			"session", b.SessionID, "got", len(cands), "max", e.cfg.MaxMemories)
		cands = mostImportant(cands, e.cfg.MaxMemories)
	}
	return cands, nil
}

// candidate validates one memory of the reply and builds its candidate.
func (e *LLMExtractor) candidate(b Batch, pos map[string]int, i int, m llmMemory, verr *validationError) (memory.Candidate, bool) {
	n := len(verr.problems)
	at := func(field string) string { return fmt.Sprintf("memories[%d].%s", i, field) }

	typ := memory.Type(strings.ToLower(strings.TrimSpace(m.Type)))
	if !typ.Valid() {
		verr.addf("%s: %q is not one of episodic, semantic, procedural", at("type"), m.Type)
	}
	cat := memory.Category(strings.ToLower(strings.TrimSpace(m.Category)))
	if !cat.Valid() {
		verr.addf("%s: %q is not a known category", at("category"), m.Category)
	}
	var key string
	if m.Key != nil {
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(*m.Key)), " ", "_")
		if key != "" && (len(key) > maxKeyLength || !e.keyRE.MatchString(key)) {
			verr.addf("%s: %q is not a dotted slot name like meeting.avoid_time", at("key"), *m.Key)
		}
	}
	content := strings.TrimSpace(m.Content)
	switch n := utf8.RuneCountInString(content); {
	case n == 0:
		verr.addf("%s: must not be empty", at("content"))
	case n > maxContentRunes:
		verr.addf("%s: %d characters, more than %d", at("content"), n, maxContentRunes)
	}
	importance := unitValue(m.Importance, at("importance"), verr)
	confidence := unitValue(m.Confidence, at("confidence"), verr)

	// Source turns, in conversation order so the candidate id does not depend on the
	// order the model listed them in.
	var srcIdx []int
	for _, id := range m.SourceTurnIDs {
		p, ok := pos[strings.TrimSpace(id)]
		switch {
		case !ok:
			verr.addf("%s: %q is not the id of a NEW turn", at("source_turn_ids"), id)
		case !slices.Contains(srcIdx, p):
			srcIdx = append(srcIdx, p)
		}
	}
	if len(m.SourceTurnIDs) == 0 {
		verr.addf("%s: at least one NEW turn id is required", at("source_turn_ids"))
	}
	slices.Sort(srcIdx)

	speaker := memory.Source(strings.ToLower(strings.TrimSpace(m.Speaker)))
	switch speaker {
	case memory.SourceUser, memory.SourceAssistant, memory.SourceTool:
		// Attributing an assistant's words to the user would make a hallucination look
		// trusted: the speaker must have said one of the source turns.
		if len(srcIdx) > 0 && !slices.ContainsFunc(srcIdx, func(p int) bool { return string(b.New[p].Role) == string(speaker) }) {
			verr.addf("%s: %q did not say any of its source turns", at("speaker"), m.Speaker)
		}
	default:
		verr.addf("%s: %q is not one of user, assistant, tool", at("speaker"), m.Speaker)
	}
	if len(verr.problems) > n || len(srcIdx) == 0 {
		return memory.Candidate{}, false
	}

	ref := b.New[srcIdx[0]].OccurredAt
	validFrom := ref
	if m.ValidFrom != nil && strings.TrimSpace(*m.ValidFrom) != "" {
		t, err := parseWhen(*m.ValidFrom, ref)
		if err != nil {
			verr.addf("%s: %v", at("valid_from"), err)
			return memory.Candidate{}, false
		}
		validFrom = t
	}
	var expire *time.Time
	if m.ExpireAt != nil && strings.TrimSpace(*m.ExpireAt) != "" {
		t, err := parseWhen(*m.ExpireAt, ref)
		switch {
		case err != nil:
			verr.addf("%s: %v", at("expire_at"), err)
			return memory.Candidate{}, false
		case !t.After(validFrom):
			verr.addf("%s: %s is not after valid_from %s", at("expire_at"), t.Format(time.RFC3339), validFrom.Format(time.RFC3339))
			return memory.Candidate{}, false
		}
		expire = &t
	}
	ids := make([]string, len(srcIdx))
	for j, p := range srcIdx {
		ids[j] = b.New[p].TurnID
	}
	return memory.Candidate{
		Tenant:    b.Tenant,
		UserID:    b.UserID,
		AgentID:   b.AgentID,
		SessionID: b.SessionID,
		Scope:     memory.ScopeUser,
		Type:      typ,
		Category:  cat,
		Key:       key,
		// A relative date the model left in place is annotated with its absolute date.
		Content:          e.temporal.Rewrite(content, ref),
		Importance:       importance,
		Confidence:       confidence,
		SourceTurnIDs:    ids,
		ValidFrom:        validFrom,
		ExpireAt:         expire,
		Source:           speaker,
		Trusted:          speaker != memory.SourceAssistant, // ApplyTrust has the final word
		Extractor:        e.cfg.Name,
		ExtractorVersion: e.cfg.Version,
		Model:            e.chat.Model(),
	}, true
}

func unitValue(v *float64, field string, verr *validationError) float64 {
	switch {
	case v == nil:
		verr.addf("%s: required", field)
	case math.IsNaN(*v) || *v < 0 || *v > 1:
		verr.addf("%s: %v is outside [0, 1]", field, *v)
	default:
		return *v
	}
	return 0
}

// parseWhen reads an RFC 3339 date-time or a YYYY-MM-DD date; a date, or a date-time
// without offset, is taken in ref's location (the source turn's offset).
func parseWhen(s string, ref time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	switch {
	case len(s) == len("2006-01-02"):
		t, err = time.ParseInLocation("2006-01-02", s, ref.Location())
	default:
		if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			var err2 error
			if t, err2 = time.ParseInLocation("2006-01-02T15:04:05", s, ref.Location()); err2 == nil {
				err = nil
			}
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 date-time or a YYYY-MM-DD date", s)
	}
	if y := t.Year(); y < 1900 || y > 2200 {
		return time.Time{}, fmt.Errorf("%q is not a plausible date", s)
	}
	return t, nil
}

// stripFences removes a Markdown code fence some models wrap JSON in when the server does
// not enforce a response format.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:] // the language tag line
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// mostImportant keeps the n most important candidates, in their original order.
func mostImportant(cands []memory.Candidate, n int) []memory.Candidate {
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cands[b].Importance, cands[a].Importance) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]memory.Candidate, n)
	for i, j := range idx {
		out[i] = cands[j]
	}
	return out
}
