package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Case is one golden case: sessions to ingest into a fresh tenant, then queries
// whose answers must contain the expected facts and none of the forbidden ones.
type Case struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Tags        []string      `json:"tags,omitempty"`
	Sessions    []CaseSession `json:"sessions"`
	Queries     []CaseQuery   `json:"queries"`

	File string `json:"-"` // where the case was loaded from
}

// CaseSession is a session of a case. Its turns get consecutive times, one
// minute apart (turnGap), from OccurredAt.
type CaseSession struct {
	SessionID string `json:"session_id"`
	UserID    string `json:"user_id"`
	AgentID   string `json:"agent_id,omitempty"`
	// OccurredAt is RFC 3339 ("2026-01-05T09:00:00Z") or relative to the run's
	// clock: "now", "now-14d", "now-3d2h", "now-90m". Empty: session i of n is
	// placed at now-(n-i) days, in order.
	OccurredAt string     `json:"occurred_at,omitempty"`
	Turns      []CaseTurn `json:"turns"`
}

// CaseTurn is a turn of a case: every field of the turn event, all optional but
// role and content (or tool). Empty ids and time come from the session.
type CaseTurn struct {
	TurnID     string         `json:"turn_id,omitempty"`
	UserID     string         `json:"user_id,omitempty"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id,omitempty"`
	TaskID     string         `json:"task_id,omitempty"`
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	Tool       *Tool          `json:"tool,omitempty"`
	OccurredAt string         `json:"occurred_at,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// CaseQuery is one question asked after ingestion.
type CaseQuery struct {
	SessionID string `json:"session_id,omitempty"`
	UserID    string `json:"user_id"`
	AgentID   string `json:"agent_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	Query     string `json:"query"`
	// Via is "context" (default: the assembled context block) or "search" (the
	// contents of the top_k results).
	Via          string   `json:"via,omitempty"`
	TopK         int      `json:"top_k,omitempty"`
	BudgetTokens int      `json:"budget_tokens,omitempty"`
	Layers       []string `json:"layers,omitempty"` // search only
	Mode         string   `json:"mode,omitempty"`   // search only
	// Expect items are lists of alternatives: an item is found when any of its
	// alternatives occurs in the returned text (case-insensitively).
	Expect [][]string `json:"expect,omitempty"`
	// Forbid items fail the query when any of their alternatives occurs.
	Forbid [][]string `json:"forbid,omitempty"`
	// UnconfirmedOK ignores lines engram marks "(unconfirmed)" when checking
	// forbids: an unconfirmed claim shown as such is not stated as a fact.
	UnconfirmedOK bool   `json:"unconfirmed_ok,omitempty"`
	Note          string `json:"note,omitempty"`
}

// Query routes.
const (
	viaContext = "context"
	viaSearch  = "search"
)

// Defaults of a golden run.
const (
	defaultGoldenBudget = 1500
	defaultGoldenTopK   = 10
	// turnGap separates consecutive turns of a session.
	turnGap = time.Minute
)

// idPattern is what engram accepts as an id; case names become parts of turn ids.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:@-]+$`)

// LoadGolden reads golden cases. Each path is a JSON file holding one case or a
// list of cases, or a directory whose *.json files are read in name order.
// Unknown fields, missing required fields and duplicate case names are errors
// that name the file and the case.
func LoadGolden(paths ...string) ([]Case, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("loading golden cases: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("listing golden cases in %s: %w", p, err)
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	if len(files) == 0 {
		return nil, errors.New("loading golden cases: no files")
	}
	var out []Case
	seen := map[string]string{}
	for _, f := range files {
		cases, err := loadGoldenFile(f)
		if err != nil {
			return nil, err
		}
		for _, c := range cases {
			if prev, dup := seen[c.Name]; dup {
				return nil, fmt.Errorf("golden file %s: case %q: name already used in %s", f, c.Name, prev)
			}
			seen[c.Name] = f
			out = append(out, c)
		}
	}
	return out, nil
}

func loadGoldenFile(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading golden file: %w", err)
	}
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	switch {
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("golden file %s: %w", path, err)
		}
	case len(data) > 0 && data[0] == '{':
		raws = []json.RawMessage{data}
	default:
		return nil, fmt.Errorf("golden file %s: want a case object or a list of cases", path)
	}
	cases := make([]Case, 0, len(raws))
	for i, raw := range raws {
		// The name is read leniently first so that a strict-decoding error can say
		// which case it is about.
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &head)
		label := fmt.Sprintf("case %d", i+1)
		if head.Name != "" {
			label = fmt.Sprintf("case %q", head.Name)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var c Case
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("golden file %s: %s: %w", path, label, err)
		}
		c.File = path
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("golden file %s: %s: %w", path, label, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func (c *Case) validate() error {
	if c.Name == "" {
		return errors.New("name is required")
	}
	if !idPattern.MatchString(c.Name) || len(c.Name) > 64 {
		return fmt.Errorf("name %q: use at most 64 of A-Z a-z 0-9 . _ : @ - (it becomes part of turn ids)", c.Name)
	}
	if len(c.Sessions) == 0 {
		return errors.New("sessions: at least one is required")
	}
	ref := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range c.Sessions {
		where := fmt.Sprintf("sessions[%d]", i)
		if s.SessionID == "" || s.UserID == "" {
			return fmt.Errorf("%s: session_id and user_id are required", where)
		}
		if _, err := resolveTime(s.OccurredAt, ref); err != nil {
			return fmt.Errorf("%s.occurred_at: %w", where, err)
		}
		if len(s.Turns) == 0 {
			return fmt.Errorf("%s: at least one turn is required", where)
		}
		for j, t := range s.Turns {
			tw := fmt.Sprintf("%s.turns[%d]", where, j)
			switch t.Role {
			case "user", "assistant", "tool", "system":
			default:
				return fmt.Errorf("%s.role: %q, want user, assistant, tool or system", tw, t.Role)
			}
			if t.Tool != nil && (t.Tool.Name == "" || (t.Tool.Status != "success" && t.Tool.Status != "failure")) {
				return fmt.Errorf("%s.tool: name and status (success or failure) are required", tw)
			}
			if strings.TrimSpace(t.Content) == "" && t.Tool == nil {
				return fmt.Errorf("%s.content: empty", tw)
			}
			if t.OccurredAt != "" {
				if _, err := resolveTime(t.OccurredAt, ref); err != nil {
					return fmt.Errorf("%s.occurred_at: %w", tw, err)
				}
			}
		}
	}
	if len(c.Queries) == 0 {
		return errors.New("queries: at least one is required")
	}
	for i, q := range c.Queries {
		where := fmt.Sprintf("queries[%d]", i)
		if q.UserID == "" || strings.TrimSpace(q.Query) == "" {
			return fmt.Errorf("%s: user_id and query are required", where)
		}
		switch q.Via {
		case "", viaContext, viaSearch:
		default:
			return fmt.Errorf("%s.via: %q, want context or search", where, q.Via)
		}
		switch q.Mode {
		case "", modeHybrid, modeKeyword, modeVector:
		default:
			return fmt.Errorf("%s.mode: %q, want hybrid, keyword or vector", where, q.Mode)
		}
		for _, l := range q.Layers {
			if l != LayerMemories && l != LayerTurns {
				return fmt.Errorf("%s.layers: %q, want memories or turns", where, l)
			}
		}
		if q.TopK < 0 || q.BudgetTokens < 0 {
			return fmt.Errorf("%s: top_k and budget_tokens must not be negative", where)
		}
		if len(q.Expect) == 0 && len(q.Forbid) == 0 {
			return fmt.Errorf("%s: at least one expect or forbid item is required", where)
		}
		for name, items := range map[string][][]string{"expect": q.Expect, "forbid": q.Forbid} {
			for j, alts := range items {
				if len(alts) == 0 {
					return fmt.Errorf("%s.%s[%d]: no alternatives", where, name, j)
				}
				for _, a := range alts {
					if strings.TrimSpace(a) == "" {
						return fmt.Errorf("%s.%s[%d]: empty alternative", where, name, j)
					}
				}
			}
		}
	}
	return nil
}

var relTime = regexp.MustCompile(`^now(?:([+-])(?:(\d+)d)?((?:\d+(?:h|m|s))*))?$`)

// resolveTime reads an RFC 3339 time or a time relative to now ("now-14d2h").
// Empty gives the zero time.
func resolveTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if m := relTime.FindStringSubmatch(s); m != nil {
		if m[1] == "" {
			return now, nil
		}
		var d time.Duration
		if m[2] != "" {
			days, err := strconv.Atoi(m[2])
			if err != nil {
				return time.Time{}, fmt.Errorf("%q: %w", s, err)
			}
			d = time.Duration(days) * 24 * time.Hour
		}
		if m[3] != "" {
			rest, err := time.ParseDuration(m[3])
			if err != nil {
				return time.Time{}, fmt.Errorf("%q: %w", s, err)
			}
			d += rest
		}
		if d == 0 {
			return time.Time{}, fmt.Errorf("%q: want an offset such as now-7d", s)
		}
		if m[1] == "-" {
			d = -d
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339 or now-<N>d<duration>", s)
	}
	return t, nil
}

// turns returns the case's turns in ingestion order, with ids, owners and times
// filled in. now anchors relative times.
func (c Case) turns(now time.Time) ([][]Turn, error) {
	out := make([][]Turn, len(c.Sessions))
	for i, s := range c.Sessions {
		start, err := resolveTime(s.OccurredAt, now)
		if err != nil {
			return nil, fmt.Errorf("case %q session %s: %w", c.Name, s.SessionID, err)
		}
		if s.OccurredAt == "" {
			start = now.Add(-time.Duration(len(c.Sessions)-i) * 24 * time.Hour)
		}
		for j, ct := range s.Turns {
			t := Turn{
				TurnID:     ct.TurnID,
				UserID:     or(ct.UserID, s.UserID),
				AgentID:    or(ct.AgentID, s.AgentID),
				SessionID:  or(ct.SessionID, s.SessionID),
				TaskID:     ct.TaskID,
				Role:       ct.Role,
				Content:    ct.Content,
				OccurredAt: start.Add(time.Duration(j) * turnGap).UTC(),
				Metadata:   ct.Metadata,
			}
			if ct.Tool != nil {
				tool := *ct.Tool
				t.Tool = &tool
			}
			if t.TurnID == "" {
				t.TurnID = fmt.Sprintf("%s-%s-%d", c.Name, s.SessionID, j+1)
			}
			if ct.OccurredAt != "" {
				at, err := resolveTime(ct.OccurredAt, now)
				if err != nil {
					return nil, fmt.Errorf("case %q turn %s: %w", c.Name, t.TurnID, err)
				}
				t.OccurredAt = at.UTC()
			}
			out[i] = append(out[i], t)
		}
	}
	return out, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// GoldenOptions configure RunGolden.
type GoldenOptions struct {
	Tokens   TokenCounter     // nil: a rough estimate (say so in the report)
	Progress io.Writer        // one line per case; nil: quiet
	Now      func() time.Time // anchors relative session times; nil: time.Now
	// BudgetTokens and TopK apply to queries that do not set their own
	// (defaults 1500 and 10).
	BudgetTokens int
	TopK         int
}

// GoldenReport is the outcome of a golden run.
type GoldenReport struct {
	Cases         int                `json:"cases"`
	CasesPassed   int                `json:"cases_passed"`
	Queries       int                `json:"queries"`
	Facts         int                `json:"facts"` // expect items
	Hits          int                `json:"hits"`
	HitRate       float64            `json:"hit_rate"`
	Forbids       int                `json:"forbids"` // forbid items
	ForbiddenHits int                `json:"forbidden_hits"`
	Tokens        GoldenTokens       `json:"tokens"`
	Baselines     GoldenBaselines    `json:"baselines"`
	Turns         int                `json:"turns"`
	LLMCalls      int                `json:"llm_calls"`
	Estimator     string             `json:"tokens_estimator"`
	Details       []GoldenCaseResult `json:"details"`
	// Causes counts the failed queries' missing facts and forbidden values by cause
	// (WhyNotExtracted …), on tenants that can list their memories.
	Causes map[string]int `json:"failure_causes,omitempty"`
}

// GoldenTokens are the mean tokens per query handed to the agent.
type GoldenTokens struct {
	EngramMean     float64 `json:"engram_mean"`
	FullReplayMean float64 `json:"full_replay_mean"`
	NoMemoryMean   float64 `json:"no_memory_mean"` // always 0
}

// GoldenBaselines score the same expectations on what an agent without engram
// would have: nothing (only the query itself), or every earlier turn of the user.
type GoldenBaselines struct {
	NoMemory   BaselineScore `json:"no_memory"`
	FullReplay BaselineScore `json:"full_replay"`
}

// BaselineScore is a baseline's result on the golden expectations.
type BaselineScore struct {
	Hits          int     `json:"hits"`
	HitRate       float64 `json:"hit_rate"`
	ForbiddenHits int     `json:"forbidden_hits"`
}

// GoldenCaseResult is one case's outcome.
type GoldenCaseResult struct {
	Name     string              `json:"name"`
	File     string              `json:"file,omitempty"`
	Tags     []string            `json:"tags,omitempty"`
	Passed   bool                `json:"passed"`
	Error    string              `json:"error,omitempty"`
	Turns    int                 `json:"turns"`
	LLMCalls int                 `json:"llm_calls"`
	Queries  []GoldenQueryResult `json:"queries"`
}

// GoldenQueryResult is one query's outcome, with both baselines on the same
// expectations.
type GoldenQueryResult struct {
	Query          string     `json:"query"`
	UserID         string     `json:"user_id"`
	Via            string     `json:"via"`
	Passed         bool       `json:"passed"`
	Error          string     `json:"error,omitempty"`
	Facts          int        `json:"facts"`
	Hits           int        `json:"hits"`
	Missing        [][]string `json:"missing,omitempty"`
	ForbiddenFound []string   `json:"forbidden_found,omitempty"`
	EngramTokens   int        `json:"engram_tokens"`
	ReplayTokens   int        `json:"replay_tokens"`
	ReplayHits     int        `json:"replay_hits"`
	ReplayMissing  [][]string `json:"replay_missing,omitempty"`
	ReplayForbid   []string   `json:"replay_forbidden_found,omitempty"`
	NoMemoryHits   int        `json:"no_memory_hits"`
	Returned       string     `json:"returned,omitempty"` // engram's text, kept for failed queries only
	// Why, for a failed query on a tenant that can list its memories (MemoryLister):
	// each missing fact and each forbidden value traced to the stored memories.
	MissingWhy   []string `json:"missing_why,omitempty"`
	ForbiddenWhy []string `json:"forbidden_why,omitempty"`
}

// What a failed query's facts come down to, read from the user's stored memories.
const (
	// WhyNotExtracted: no memory of the user holds the fact.
	WhyNotExtracted = "not extracted"
	// WhyNotRetrieved: an active memory holds it, the answer did not.
	WhyNotRetrieved = "not retrieved"
	// WhyRetired: only memories no longer active hold it.
	WhyRetired = "retired"
	// WhyStaleActive: an active memory still holds the forbidden value.
	WhyStaleActive = "stale memory active"
	// WhyNotAMemory: no active memory holds the forbidden value; it came with the
	// turns layer or as an unconfirmed claim.
	WhyNotAMemory = "not from an active memory"
)

// diagnose traces a failed query's missing facts and forbidden values to mems.
func diagnose(qr *GoldenQueryResult, mems []StoredMemory) {
	var active, inactive []string
	for _, m := range mems {
		if m.Status == "active" {
			active = append(active, fold(m.Content))
		} else {
			inactive = append(inactive, fold(m.Content))
		}
	}
	holds := func(texts []string, alts []string) bool {
		for _, t := range texts {
			if firstFound(t, alts) != "" {
				return true
			}
		}
		return false
	}
	for _, alts := range qr.Missing {
		switch {
		case holds(active, alts):
			qr.MissingWhy = append(qr.MissingWhy, WhyNotRetrieved)
		case holds(inactive, alts):
			qr.MissingWhy = append(qr.MissingWhy, WhyRetired)
		default:
			qr.MissingWhy = append(qr.MissingWhy, WhyNotExtracted)
		}
	}
	for _, f := range qr.ForbiddenFound {
		if holds(active, []string{f}) {
			qr.ForbiddenWhy = append(qr.ForbiddenWhy, WhyStaleActive)
		} else {
			qr.ForbiddenWhy = append(qr.ForbiddenWhy, WhyNotAMemory)
		}
	}
}

// RunGolden runs every case in its own fresh tenant: it ingests the sessions in
// order, draining after each, and asks the queries. A case whose tenant fails is reported as
// failed with its error, and the run goes on; only a cancelled ctx stops it.
func RunGolden(ctx context.Context, sys System, cases []Case, opts GoldenOptions) (GoldenReport, error) {
	tokens, estimator := counter(opts.Tokens)
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rep := GoldenReport{Estimator: estimator, Details: []GoldenCaseResult{}}
	var engramTok, replayTok int
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("golden run stopped before case %q: %w", c.Name, err)
		}
		res := runCase(ctx, sys, c, now(), tokens, opts)
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("golden run stopped in case %q: %w", c.Name, err)
		}
		rep.Cases++
		if res.Passed {
			rep.CasesPassed++
		}
		rep.Turns += res.Turns
		rep.LLMCalls += res.LLMCalls
		for _, q := range res.Queries {
			rep.Queries++
			rep.Facts += q.Facts
			rep.Hits += q.Hits
			rep.ForbiddenHits += len(q.ForbiddenFound)
			for _, why := range append(append([]string(nil), q.MissingWhy...), q.ForbiddenWhy...) {
				if rep.Causes == nil {
					rep.Causes = map[string]int{}
				}
				rep.Causes[why]++
			}
			rep.Baselines.FullReplay.Hits += q.ReplayHits
			rep.Baselines.FullReplay.ForbiddenHits += len(q.ReplayForbid)
			rep.Baselines.NoMemory.Hits += q.NoMemoryHits
			engramTok += q.EngramTokens
			replayTok += q.ReplayTokens
		}
		for _, q := range c.Queries {
			rep.Forbids += len(q.Forbid)
		}
		rep.Details = append(rep.Details, res)
		if opts.Progress != nil {
			verdict := "PASS"
			if !res.Passed {
				verdict = "FAIL"
			}
			fmt.Fprintf(opts.Progress, "golden %d/%d %-40s %s\n", i+1, len(cases), c.Name, verdict)
		}
	}
	rep.HitRate = rate(rep.Hits, rep.Facts)
	rep.Baselines.FullReplay.HitRate = rate(rep.Baselines.FullReplay.Hits, rep.Facts)
	rep.Baselines.NoMemory.HitRate = rate(rep.Baselines.NoMemory.Hits, rep.Facts)
	rep.Tokens.EngramMean = mean(engramTok, rep.Queries)
	rep.Tokens.FullReplayMean = mean(replayTok, rep.Queries)
	return rep, nil
}

func runCase(ctx context.Context, sys System, c Case, now time.Time, tokens TokenCounter, opts GoldenOptions) GoldenCaseResult {
	res := GoldenCaseResult{Name: c.Name, File: c.File, Tags: c.Tags, Passed: true}
	sessions, err := c.turns(now)
	var all []Turn
	for _, s := range sessions {
		all = append(all, s...)
	}
	res.Turns = len(all)
	if err == nil {
		err = ingestCase(ctx, sys, c, sessions, &res, tokens, opts, all)
	}
	if err != nil {
		res.Passed = false
		res.Error = err.Error()
		// The baselines do not need engram: score them anyway, engram scores nothing.
		res.Queries = res.Queries[:0]
		for _, q := range c.Queries {
			qr := baselineQuery(q, all, tokens)
			qr.Error = "case failed: " + err.Error()
			qr.Missing = q.Expect
			res.Queries = append(res.Queries, qr)
		}
	}
	return res
}

func ingestCase(ctx context.Context, sys System, c Case, sessions [][]Turn, res *GoldenCaseResult,
	tokens TokenCounter, opts GoldenOptions, all []Turn) (err error) {
	tn, err := sys.NewTenant(ctx, "golden-"+c.Name)
	if err != nil {
		return fmt.Errorf("creating a tenant: %w", err)
	}
	defer func() {
		if cerr := tn.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("closing the tenant: %w", cerr)
		}
	}()
	// Each session is drained before the next one starts: sessions are days apart
	// in the story, so a later statement must meet the earlier one already stored.
	for i, s := range sessions {
		if err := tn.AddTurns(ctx, s); err != nil {
			return fmt.Errorf("adding the turns of session %s: %w", c.Sessions[i].SessionID, err)
		}
		if err := tn.Drain(ctx); err != nil {
			return fmt.Errorf("draining the pipeline after session %s: %w", c.Sessions[i].SessionID, err)
		}
	}
	if res.LLMCalls, err = tn.LLMCalls(ctx); err != nil {
		return fmt.Errorf("counting LLM calls: %w", err)
	}
	stored := map[string][]StoredMemory{} // a user's memories, listed once for the case's failed queries
	for _, q := range c.Queries {
		qr := baselineQuery(q, all, tokens)
		text, n, err := ask(ctx, tn, q, opts)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.Query, err)
		}
		if n == 0 {
			n = tokens(text)
		}
		j := judge(text, q.Expect, q.Forbid, q.UnconfirmedOK)
		qr.Hits, qr.Missing, qr.ForbiddenFound, qr.EngramTokens = j.hits, j.missing, j.forbidden, n
		qr.Passed = j.passed()
		if !qr.Passed {
			res.Passed = false
			qr.Returned = text
			if l, ok := tn.(MemoryLister); ok {
				mems, listed := stored[q.UserID]
				if !listed {
					if mems, err = l.Memories(ctx, q.UserID); err != nil {
						return fmt.Errorf("query %q: listing the memories of %s: %w", q.Query, q.UserID, err)
					}
					stored[q.UserID] = mems
				}
				diagnose(&qr, mems)
			}
		}
		res.Queries = append(res.Queries, qr)
	}
	return nil
}

// ask runs one query through engram and returns the text handed to the agent and
// its tokens as engram counted them (0: unknown).
func ask(ctx context.Context, tn Tenant, q CaseQuery, opts GoldenOptions) (string, int, error) {
	if q.Via == viaSearch {
		k := q.TopK
		if k == 0 {
			k = or0(opts.TopK, defaultGoldenTopK)
		}
		r, err := tn.Search(ctx, SearchQuery{UserID: q.UserID, Query: q.Query, TopK: k, Layers: q.Layers, Mode: q.Mode})
		if err != nil {
			return "", 0, err
		}
		lines := make([]string, 0, len(r.Items))
		for i, it := range r.Items {
			if i >= k {
				break
			}
			lines = append(lines, it.Content)
		}
		return strings.Join(lines, "\n"), r.Tokens, nil
	}
	budget := q.BudgetTokens
	if budget == 0 {
		budget = or0(opts.BudgetTokens, defaultGoldenBudget)
	}
	r, err := tn.Context(ctx, ContextQuery{UserID: q.UserID, AgentID: q.AgentID, SessionID: q.SessionID,
		TaskID: q.TaskID, Query: q.Query, BudgetTokens: budget})
	if err != nil {
		return "", 0, err
	}
	return r.Text, r.Tokens, nil
}

func or0(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// baselineQuery scores the no-memory and full-replay baselines of a query.
func baselineQuery(q CaseQuery, all []Turn, tokens TokenCounter) GoldenQueryResult {
	via := q.Via
	if via == "" {
		via = viaContext
	}
	qr := GoldenQueryResult{Query: q.Query, UserID: q.UserID, Via: via, Facts: len(q.Expect)}
	qr.NoMemoryHits = judge(q.Query, q.Expect, nil, false).hits
	replay := transcript(all, q.UserID)
	r := judge(replay, q.Expect, q.Forbid, false)
	qr.ReplayHits, qr.ReplayMissing, qr.ReplayForbid = r.hits, r.missing, r.forbidden
	qr.ReplayTokens = 0
	if replay != "" {
		qr.ReplayTokens = tokens(replay)
	}
	return qr
}

// transcript renders the turns of userID ("" for all) as "role: content" lines,
// the full-replay baseline: what an agent would paste without a memory layer.
func transcript(turns []Turn, userID string) string {
	var b strings.Builder
	for _, t := range turns {
		if userID != "" && t.UserID != userID {
			continue
		}
		b.WriteString(t.Role)
		if t.Tool != nil {
			fmt.Fprintf(&b, " [%s %s", t.Tool.Name, t.Tool.Status)
			if t.Tool.Error != "" {
				b.WriteString(": " + t.Tool.Error)
			}
			b.WriteString("]")
		}
		b.WriteString(": ")
		b.WriteString(strings.Join(strings.Fields(t.Content), " "))
		b.WriteString("\n")
	}
	return b.String()
}

func rate(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func mean(sum, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// WriteTable prints the report for people: the headline against both baselines,
// then one line per query, with what was missed or wrongly found.
func (r GoldenReport) WriteTable(w io.Writer) error {
	tw := newTable(w)
	tw.printf("golden: %d/%d cases passed, %d queries, tokens counted by %s\n\n", r.CasesPassed, r.Cases, r.Queries, r.Estimator)
	tw.printf("\tengram\tno memory\tfull replay\n")
	tw.printf("expected facts found\t%d/%d (%s)\t%d/%d (%s)\t%d/%d (%s)\n",
		r.Hits, r.Facts, pct(r.HitRate), r.Baselines.NoMemory.Hits, r.Facts, pct(r.Baselines.NoMemory.HitRate),
		r.Baselines.FullReplay.Hits, r.Facts, pct(r.Baselines.FullReplay.HitRate))
	tw.printf("forbidden found\t%d/%d\t%d/%d\t%d/%d\n", r.ForbiddenHits, r.Forbids, 0, r.Forbids,
		r.Baselines.FullReplay.ForbiddenHits, r.Forbids)
	tw.printf("tokens per query (mean)\t%.0f\t%.0f\t%.0f\n", r.Tokens.EngramMean, r.Tokens.NoMemoryMean, r.Tokens.FullReplayMean)
	tw.printf("LLM calls (ingestion)\t%d\t\t\n\n", r.LLMCalls)
	if len(r.Causes) > 0 {
		tw.printf("failures by cause: missing facts %d not extracted, %d not retrieved, %d retired; forbidden values %d from a stale active memory, %d not from an active memory\n\n",
			r.Causes[WhyNotExtracted], r.Causes[WhyNotRetrieved], r.Causes[WhyRetired], r.Causes[WhyStaleActive], r.Causes[WhyNotAMemory])
	}
	tw.printf("case\tquery\tresult\tfound\tengram tok\treplay tok\n")
	for _, c := range r.Details {
		for _, q := range c.Queries {
			verdict := "PASS"
			if !q.Passed {
				verdict = "FAIL"
			}
			tw.printf("%s\t%s\t%s\t%d/%d\t%d\t%d\n", c.Name, clip(q.Query, 32), verdict, q.Hits, q.Facts, q.EngramTokens, q.ReplayTokens)
			for i, m := range q.Missing {
				tw.printf("\t  missing: %s%s\t\t\t\t\n", strings.Join(m, " | "), because(q.MissingWhy, i))
			}
			for i, f := range q.ForbiddenFound {
				tw.printf("\t  forbidden found: %s%s\t\t\t\t\n", f, because(q.ForbiddenWhy, i))
			}
			if q.Error != "" {
				tw.printf("\t  error: %s\t\t\t\t\n", clip(q.Error, 100))
			}
		}
	}
	return tw.flush()
}

// because is " (cause)" for the i-th item of whys, or "" when it was not diagnosed.
func because(whys []string, i int) string {
	if i < len(whys) {
		return " (" + whys[i] + ")"
	}
	return ""
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
