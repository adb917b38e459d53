package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const oneCase = `{"name": "tea", "tags": ["preference", "en"],
 "sessions": [{"session_id": "a", "user_id": "u1", "occurred_at": "2026-01-05T09:00:00Z",
   "turns": [{"role": "user", "content": "I prefer green tea"},
             {"role": "tool", "tool": {"name": "kettle", "status": "failure", "error": "no water"}, "task_id": "t1", "metadata": {"k": 1}},
             {"role": "assistant", "content": "Noted", "turn_id": "custom-id"}]}],
 "queries": [{"session_id": "b", "user_id": "u1", "query": "what to drink", "expect": [["green tea"]]}]}`

func TestLoadGoldenOneOrList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.json", oneCase)
	list := strings.Replace(oneCase, `"name": "tea"`, `"name": "tea-2"`, 1)
	list2 := strings.Replace(oneCase, `"name": "tea"`, `"name": "tea-3"`, 1)
	writeFile(t, dir, "b.json", "["+list+",\n"+list2+"]")
	writeFile(t, dir, "notes.txt", "not a case")

	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"one case", []string{filepath.Join(dir, "a.json")}, []string{"tea"}},
		{"a list", []string{filepath.Join(dir, "b.json")}, []string{"tea-2", "tea-3"}},
		{"a directory", []string{dir}, []string{"tea", "tea-2", "tea-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cases, err := LoadGolden(tt.paths...)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range cases {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("names = %v, want %v", names, tt.want)
			}
			c := cases[0]
			if c.File == "" || len(c.Sessions[0].Turns) != 3 || c.Sessions[0].Turns[1].Tool.Error != "no water" ||
				c.Sessions[0].Turns[1].TaskID != "t1" || c.Sessions[0].Turns[1].Metadata["k"] != float64(1) {
				t.Errorf("case not decoded fully: %+v", c)
			}
		})
	}
}

func TestLoadGoldenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the error
	}{
		{"unknown case field", strings.Replace(oneCase, `"tags"`, `"colour": "red", "tags"`, 1), []string{`case "tea"`, `"colour"`}},
		{"unknown turn field", strings.Replace(oneCase, `"role": "user"`, `"role": "user", "speaker": "x"`, 1), []string{`case "tea"`, `"speaker"`}},
		{"unknown tool field", strings.Replace(oneCase, `"error": "no water"`, `"error": "no water", "code": 3`, 1), []string{`case "tea"`, `"code"`}},
		{"unknown query field", strings.Replace(oneCase, `"query": "what`, `"question": "x", "query": "what`, 1), []string{`case "tea"`, `"question"`}},
		{"unnamed case", strings.Replace(oneCase, `"name": "tea", `, `"nom": 1, `, 1), []string{"case 1", `"nom"`}},
		{"bad name", strings.Replace(oneCase, `"name": "tea"`, `"name": "tea time"`, 1), []string{"name"}},
		{"bad via", strings.Replace(oneCase, `"query": "what`, `"via": "telepathy", "query": "what`, 1), []string{"via"}},
		{"bad role", strings.Replace(oneCase, `"role": "user"`, `"role": "robot"`, 1), []string{"role"}},
		{"bad time", strings.Replace(oneCase, `2026-01-05T09:00:00Z`, `yesterday`, 1), []string{"occurred_at"}},
		{"empty alternative", strings.Replace(oneCase, `[["green tea"]]`, `[["green tea", " "]]`, 1), []string{"expect[0]"}},
		{"no expectations", strings.Replace(oneCase, `, "expect": [["green tea"]]`, ``, 1), []string{"expect or forbid"}},
		{"not json", `{"name": `, []string{"bad.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, t.TempDir(), "bad.json", tt.content)
			_, err := LoadGolden(p)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tt.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	t.Run("duplicate names across files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, dir, "a.json", oneCase)
		writeFile(t, dir, "b.json", oneCase)
		if _, err := LoadGolden(dir); err == nil || !strings.Contains(err.Error(), "already used") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestResolveTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		{"now", now, false},
		{"now-14d", now.AddDate(0, 0, -14), false},
		{"now-3d2h", now.Add(-74 * time.Hour), false},
		{"now-90m", now.Add(-90 * time.Minute), false},
		{"now+1h", now.Add(time.Hour), false},
		{"2026-01-05T09:00:00Z", time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), false},
		{"now-", time.Time{}, true},
		{"now-x", time.Time{}, true},
		{"5 May", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := resolveTime(tt.in, now)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("resolveTime(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCaseTurns(t *testing.T) {
	t.Parallel()
	c := Case{Name: "c1", Sessions: []CaseSession{
		{SessionID: "a", UserID: "u1", Turns: []CaseTurn{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y", TurnID: "mine"}}},
		{SessionID: "b", UserID: "u1", AgentID: "ag", OccurredAt: "now-1d", Turns: []CaseTurn{{Role: "user", Content: "z", UserID: "u2"}}},
	}}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	got, err := c.turns(now)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Turn{
		{{TurnID: "c1-a-1", UserID: "u1", SessionID: "a", Role: "user", Content: "x", OccurredAt: now.AddDate(0, 0, -2)},
			{TurnID: "mine", UserID: "u1", SessionID: "a", Role: "assistant", Content: "y", OccurredAt: now.AddDate(0, 0, -2).Add(turnGap)}},
		{{TurnID: "c1-b-1", UserID: "u2", AgentID: "ag", SessionID: "b", Role: "user", Content: "z", OccurredAt: now.AddDate(0, 0, -1)}},
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Fatalf("turns\n got %s\nwant %s", gj, wj)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	text := "The user prefers GREEN tea\n[memory_ref: 1] (unconfirmed) The assistant stated: the plan costs $49\n用户偏好周五下午开会 ＰｏｓｔｇｒｅＳＱＬ\n" +
		"[memory_ref: 01a248ae-a7b4-7db1-ba87-a5e9b4199070] (semantic · profile) 用户是独立开发者\n[turn: t-7731] (user said · 2 days ago) ok"
	tests := []struct {
		name          string
		expect        [][]string
		forbid        [][]string
		unconfirmedOK bool
		hits          int
		missing       int
		forbidden     []string
	}{
		{"latin is case-insensitive", [][]string{{"green tea"}}, nil, false, 1, 0, nil},
		{"any alternative", [][]string{{"coffee", "Green Tea"}}, nil, false, 1, 0, nil},
		{"no alternative", [][]string{{"coffee", "espresso"}}, nil, false, 0, 1, nil},
		{"chinese", [][]string{{"周五下午"}, {"星期五"}}, nil, false, 1, 1, nil},
		{"full-width folds", [][]string{{"postgresql"}}, nil, false, 1, 0, nil},
		{"whitespace folds", [][]string{{"prefers   green\ntea"}}, nil, false, 1, 0, nil},
		{"forbid any alternative", nil, [][]string{{"black tea", "GREEN"}, {"coffee"}}, false, 0, 0, []string{"GREEN"}},
		{"unconfirmed line counts", nil, [][]string{{"$49"}}, false, 0, 0, []string{"$49"}},
		{"unconfirmed line ignored when allowed", nil, [][]string{{"$49"}}, true, 0, 0, nil},
		{"expect still sees unconfirmed lines", [][]string{{"$49"}}, nil, true, 1, 0, nil},
		{"citations are not facts", [][]string{{"7731"}}, [][]string{{"199"}, {"a7b4"}}, false, 0, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := judge(text, tt.expect, tt.forbid, tt.unconfirmedOK)
			if j.hits != tt.hits || len(j.missing) != tt.missing || strings.Join(j.forbidden, "|") != strings.Join(tt.forbidden, "|") {
				t.Errorf("judge = hits %d missing %v forbidden %v; want %d, %d, %v", j.hits, j.missing, j.forbidden, tt.hits, tt.missing, tt.forbidden)
			}
			if j.passed() != (tt.missing == 0 && len(tt.forbidden) == 0) {
				t.Errorf("passed = %v", j.passed())
			}
		})
	}
}

func goldenCases() []Case {
	sess := func(id, user, at string, contents ...string) CaseSession {
		s := CaseSession{SessionID: id, UserID: user, OccurredAt: at}
		for i, c := range contents {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			s.Turns = append(s.Turns, CaseTurn{Role: role, Content: c})
		}
		return s
	}
	return []Case{
		{Name: "pass", Tags: []string{"preference"}, Sessions: []CaseSession{
			sess("a", "u1", "now-7d", "I prefer green tea", "Noted"),
			sess("a2", "u2", "now-6d", "I prefer black coffee", "Noted"),
		}, Queries: []CaseQuery{
			{SessionID: "q", UserID: "u1", Query: "what should I drink", Expect: [][]string{{"green tea"}}, Forbid: [][]string{{"coffee"}}},
			{SessionID: "q", UserID: "u1", Query: "tea please", Via: viaSearch, Expect: [][]string{{"tea"}}},
		}},
		{Name: "fail", Sessions: []CaseSession{sess("a", "u1", "now-2d", "I live in Paris", "ok", "The weather is nice")},
			Queries: []CaseQuery{{UserID: "u1", Query: "where do I live, Paris?", Expect: [][]string{{"Paris"}, {"London"}},
				Forbid: [][]string{{"weather"}}}}},
	}
}

func TestRunGolden(t *testing.T) {
	t.Parallel()
	sys := newFakeSystem()
	var progress bytes.Buffer
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	rep, err := RunGolden(context.Background(), sys, goldenCases(), GoldenOptions{Tokens: wordTokens, Progress: &progress,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cases != 2 || rep.CasesPassed != 1 || rep.Queries != 3 || rep.Facts != 4 || rep.Hits != 3 || rep.ForbiddenHits != 1 || rep.Forbids != 2 {
		t.Errorf("headline = %+v", rep)
	}
	if rep.HitRate != 0.75 {
		t.Errorf("hit_rate = %v", rep.HitRate)
	}
	pass, fail := rep.Details[0], rep.Details[1]
	if !pass.Passed || fail.Passed {
		t.Errorf("passed = %v, %v", pass.Passed, fail.Passed)
	}
	if got := fail.Queries[0]; len(got.Missing) != 1 || got.Missing[0][0] != "London" || strings.Join(got.ForbiddenFound, ",") != "weather" || got.Returned == "" {
		t.Errorf("failed query = %+v", got)
	}
	// Baselines: no memory scores the query text alone ("tea please" and "Paris?"
	// give a fact away each) and costs nothing; full replay holds every earlier
	// turn of the user, and only that user's.
	if rep.Tokens.NoMemoryMean != 0 || rep.Baselines.NoMemory.Hits != 2 || fail.Queries[0].NoMemoryHits != 1 {
		t.Errorf("no-memory baseline = %+v, %+v", rep.Tokens, rep.Baselines.NoMemory)
	}
	q := pass.Queries[0]
	if q.ReplayHits != 1 || len(q.ReplayForbid) != 0 || q.ReplayTokens != wordTokens("user: I prefer green tea\nassistant: Noted\n") {
		t.Errorf("replay of u1 = %+v", q)
	}
	if fq := fail.Queries[0]; fq.ReplayHits != 1 || strings.Join(fq.ReplayForbid, ",") != "weather" {
		t.Errorf("replay of failing case = %+v", fq)
	}
	if rep.Baselines.FullReplay.Hits != 3 || rep.Baselines.FullReplay.ForbiddenHits != 1 {
		t.Errorf("full replay = %+v", rep.Baselines.FullReplay)
	}
	// The tenants saw each session in order, drained after each, and were closed.
	tn := sys.tenants["golden-pass"]
	if tn == nil || !tn.closed || tn.drains != 2 || len(tn.turns) != 4 || tn.turns[0].TurnID != "pass-a-1" ||
		!tn.turns[1].OccurredAt.Equal(now.AddDate(0, 0, -7).Add(time.Minute)) {
		t.Errorf("tenant = %+v", tn)
	}
	if len(tn.queries) != 1 || tn.queries[0].TopK != defaultGoldenTopK {
		t.Errorf("search queries = %+v", tn.queries)
	}
	if !strings.Contains(progress.String(), "golden 2/2 fail") || !strings.Contains(progress.String(), "FAIL") {
		t.Errorf("progress = %q", progress.String())
	}

	// The JSON report carries the documented fields.
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"cases", "cases_passed", "facts", "hits", "hit_rate", "forbidden_hits",
		"tokens.engram_mean", "tokens.full_replay_mean", "tokens.no_memory_mean", "baselines.no_memory.hit_rate",
		"baselines.full_replay.hit_rate", "baselines.full_replay.forbidden_hits", "details"} {
		if _, ok := lookup(m, path); !ok {
			t.Errorf("report JSON lacks %s", path)
		}
	}
	d := m["details"].([]any)[1].(map[string]any)
	dq := d["queries"].([]any)[0].(map[string]any)
	for _, k := range []string{"query", "passed", "missing", "forbidden_found", "engram_tokens", "replay_tokens"} {
		if _, ok := dq[k]; !ok {
			t.Errorf("query details lack %s", k)
		}
	}
	if d["name"] != "fail" || d["passed"] != false {
		t.Errorf("case details = %v", d)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1/2 cases passed", "full replay", "FAIL", "missing: London", "forbidden found: weather"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func TestRunGoldenTenantFailure(t *testing.T) {
	t.Parallel()
	sys := newFakeSystem()
	sys.failName = "golden-pass"
	rep, err := RunGolden(context.Background(), sys, goldenCases(), GoldenOptions{Tokens: wordTokens})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Details[0]
	if c.Passed || !strings.Contains(c.Error, "tenant unavailable") || len(c.Queries) != 2 || c.Queries[0].Hits != 0 ||
		c.Queries[0].ReplayHits != 1 || len(c.Queries[0].Missing) != 1 {
		t.Errorf("failed case = %+v", c)
	}
	if rep.Cases != 2 || rep.CasesPassed != 0 {
		t.Errorf("the run should go on: %+v", rep)
	}
}

func TestRunGoldenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunGolden(ctx, newFakeSystem(), goldenCases(), GoldenOptions{}); err == nil {
		t.Fatal("a cancelled run must say so")
	}
}

// TestGoldenSet checks the repository's golden set: it parses, it is big enough,
// and every required theme and both languages are covered.
func TestGoldenSet(t *testing.T) {
	t.Parallel()
	cases, err := LoadGolden(filepath.Join("..", "..", "testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("%d golden cases, want at least 30", len(cases))
	}
	themes := map[string]int{"preference": 0, "prohibition": 0, "decision": 0, "identity": 0, "procedural": 0,
		"update": 0, "temporary": 0, "multi-user": 0, "small-talk": 0, "hallucination": 0, "zh": 0, "en": 0}
	for _, c := range cases {
		if len(c.Tags) == 0 {
			t.Errorf("case %s has no tags", c.Name)
		}
		for _, tag := range c.Tags {
			if _, ok := themes[tag]; ok {
				themes[tag]++
			}
		}
		zh, en := hasTag(c, "zh"), hasTag(c, "en")
		if zh == en {
			t.Errorf("case %s: tag it zh or en (exactly one)", c.Name)
		}
		for _, q := range c.Queries {
			// A query that gives its answer away measures nothing.
			if j := judge(q.Query, q.Expect, nil, false); j.hits > 0 {
				t.Errorf("case %s: the query %q already contains an expected fact", c.Name, q.Query)
			}
			for _, s := range c.Sessions {
				if q.SessionID != "" && q.SessionID == s.SessionID {
					t.Errorf("case %s: query in ingested session %s would see the raw turns", c.Name, s.SessionID)
				}
			}
		}
		// Every expected fact must be in the conversation, or no system could find it.
		turns, err := c.turns(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var all []Turn
		for _, s := range turns {
			all = append(all, s...)
		}
		for _, q := range c.Queries {
			if j := judge(transcript(all, q.UserID), q.Expect, nil, false); len(j.missing) > 0 {
				t.Errorf("case %s: expected %v is said by nobody", c.Name, j.missing)
			}
		}
	}
	for theme, n := range themes {
		if n == 0 {
			t.Errorf("no golden case is tagged %q", theme)
		}
	}
	t.Logf("%d golden cases: %v", len(cases), themes)
}

func hasTag(c Case, tag string) bool {
	for _, t := range c.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	mems := []StoredMemory{
		{Content: "The user lives in Lisbon", Status: "active"},
		{Content: "The user lived in Porto", Status: "superseded"},
		{Content: "The user drives a Skoda", Status: "active"},
	}
	tests := []struct {
		name        string
		missing     [][]string
		forbidden   []string
		wantMissing []string
		wantForbid  []string
	}{
		{"stored and active", [][]string{{"Lisbon"}}, nil, []string{WhyNotRetrieved}, nil},
		{"only retired", [][]string{{"Porto", "Oporto"}}, nil, []string{WhyRetired}, nil},
		{"never stored", [][]string{{"Madrid"}}, nil, []string{WhyNotExtracted}, nil},
		{"a stale value active", nil, []string{"skoda"}, nil, []string{WhyStaleActive}},
		{"a value from elsewhere", nil, []string{"Porto"}, nil, []string{WhyNotAMemory}},
	}
	for _, tt := range tests {
		qr := GoldenQueryResult{Missing: tt.missing, ForbiddenFound: tt.forbidden}
		diagnose(&qr, mems)
		if strings.Join(qr.MissingWhy, ",") != strings.Join(tt.wantMissing, ",") ||
			strings.Join(qr.ForbiddenWhy, ",") != strings.Join(tt.wantForbid, ",") {
			t.Errorf("%s: missing %v forbidden %v; want %v %v", tt.name, qr.MissingWhy, qr.ForbiddenWhy, tt.wantMissing, tt.wantForbid)
		}
	}
}

func TestRunGoldenCountsFailureCauses(t *testing.T) {
	t.Parallel()
	sys := newFakeSystem()
	sys.memories = []StoredMemory{{Content: "lives in London", Status: "superseded"}, {Content: "asked about the weather", Status: "active"}}
	rep, err := RunGolden(context.Background(), sys, goldenCases(), GoldenOptions{Tokens: wordTokens,
		Now: func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Causes[WhyRetired] != 1 || rep.Causes[WhyStaleActive] != 1 || len(rep.Causes) != 2 {
		t.Errorf("causes = %v, want one retired fact and one stale active value", rep.Causes)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "missing: London (retired)") || !strings.Contains(out.String(), "1 from a stale active memory") {
		t.Errorf("table lacks the causes:\n%s", out.String())
	}
}
