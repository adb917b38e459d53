package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const tinyLoCoMo = "testdata/locomo_tiny.json"

func TestParseLoCoMoDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"1:56 pm on 8 May, 2023", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), false},
		{"10:04 am on 19 June, 2023", time.Date(2023, 6, 19, 10, 4, 0, 0, time.UTC), false},
		{"12:09 am on 13 September, 2023", time.Date(2023, 9, 13, 0, 9, 0, 0, time.UTC), false},
		{"12:30 pm on 1 January, 2024", time.Date(2024, 1, 1, 12, 30, 0, 0, time.UTC), false},
		{"7:05 PM on 3 March, 2022", time.Date(2022, 3, 3, 19, 5, 0, 0, time.UTC), false},
		{" 1:56  pm on 8 May, 2023 ", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), false},
		{"8 May 2023", time.Time{}, true},
		{"", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseLoCoMoDate(tt.in)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("ParseLoCoMoDate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestLoadLoCoMo(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 {
		t.Fatalf("%d conversations", len(convs))
	}
	c := convs[0]
	// session_3_date_time has no session behind it: only two sessions.
	if c.ID != "conv-t1" || c.SpeakerA != "Ann" || c.SpeakerB != "Bob" || len(c.Sessions) != 2 || c.turnCount() != 5 {
		t.Fatalf("conversation = %+v", c)
	}
	if c.Sessions[0].Number != 1 || c.Sessions[1].DateTimeRaw != "10:04 am on 19 June, 2023" {
		t.Errorf("sessions = %+v", c.Sessions)
	}
	wantQA := []struct {
		answer, adversarial string
		category            int
		evidence            []string
	}{
		{"Biscuit", "", 4, []string{"D1:1"}},
		{"violin, Marta", "", 1, []string{"D1:2", "D2:1"}}, // "D1:2; D2:1" split
		{"2023", "", 2, []string{"D1:1"}},                  // integer answer; "D1:01" repaired
		{"Likely yes", "", 3, nil},
		{"", "a garden hose", 5, []string{"D2:2"}},
		{"a small brown dog", "", 4, []string{"D1:3"}}, // "D:1:3" repaired, "D9:9" does not exist
	}
	if len(c.QA) != len(wantQA) {
		t.Fatalf("%d questions", len(c.QA))
	}
	for i, w := range wantQA {
		q := c.QA[i]
		if q.Answer != w.answer || q.AdversarialAnswer != w.adversarial || q.Category != w.category ||
			strings.Join(q.Evidence, ",") != strings.Join(w.evidence, ",") {
			t.Errorf("qa[%d] = %+v, want %+v", i, q, w)
		}
	}
	if strings.Join(c.QA[5].RawEvidence, ",") != "D:1:3,D9:9" {
		t.Errorf("raw evidence = %v", c.QA[5].RawEvidence)
	}
}

func TestLoCoMoTurns(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	sessions := convs[0].turns()
	if len(sessions) != 2 || len(sessions[0]) != 3 || len(sessions[1]) != 2 {
		t.Fatalf("sessions = %v", sessions)
	}
	s1 := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	tests := []struct {
		got     Turn
		id      string
		session string
		content string
		at      time.Time
	}{
		{sessions[0][0], "conv-t1:D1:1", "conv-t1-s1", "Ann: Hi Bob, I adopted a puppy named Biscuit yesterday.", s1},
		{sessions[0][1], "conv-t1:D1:2", "conv-t1-s1", "Bob: Congrats Ann! I started learning the violin last week.", s1.Add(time.Minute)},
		{sessions[0][2], "conv-t1:D1:3", "conv-t1-s1", "Ann: Look at this! [shares a photo of a small brown dog on a sofa]", s1.Add(2 * time.Minute)},
		{sessions[1][0], "conv-t1:D2:1", "conv-t1-s2", "Bob: My violin teacher is called Marta.", time.Date(2023, 6, 19, 10, 4, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		g := tt.got
		if g.TurnID != tt.id || g.SessionID != tt.session || g.Content != tt.content || !g.OccurredAt.Equal(tt.at) ||
			g.UserID != "conv-t1" || g.Role != "user" || g.Metadata["dia_id"] != strings.TrimPrefix(tt.id, "conv-t1:") {
			t.Errorf("turn = %+v\nwant id %s session %s content %q at %v", g, tt.id, tt.session, tt.content, tt.at)
		}
	}
	if id := locomoTurnID("conv-26", "D1:3"); id != "conv-26:D1:3" {
		t.Errorf("LoCoMoTurnID = %s", id)
	}
	full := convs[0].fullText()
	if !strings.HasPrefix(full, "DATE: 1:56 pm on 8 May, 2023\nAnn: Hi Bob") || !strings.Contains(full, "DATE: 10:04 am on 19 June, 2023\n") {
		t.Errorf("full text = %q", full)
	}
}

// log2 helpers for exact NDCG values.
var (
	inv2 = 1 / math.Log2(3) // rank 2
	inv3 = 1 / math.Log2(4) // rank 3 (= 0.5)
	inv4 = 1 / math.Log2(5)
)

func TestEvidenceRecallAndNDCG(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ranked   [][]string
		evidence []string
		k        int
		recall   float64
		ndcg     float64
	}{
		{"first hit", [][]string{{"a"}, {"x"}}, []string{"a"}, 10, 1, 1},
		{"hit at rank 2", [][]string{{"x"}, {"a"}}, []string{"a"}, 10, 1, inv2},
		{"hit beyond k", [][]string{{"x"}, {"a"}}, []string{"a"}, 1, 0, 0},
		{"half the evidence", [][]string{{"a"}, {"x"}}, []string{"a", "b"}, 10, 0.5, 1 / (1 + inv2)},
		{"memory covers two", [][]string{{"a", "b"}}, []string{"a", "b"}, 10, 1, 1 / (1 + inv2)},
		{"repeat earns nothing", [][]string{{"a"}, {"a"}, {"b"}}, []string{"a", "b"}, 10, 1, (1 + inv3) / (1 + inv2)},
		{"duplicate evidence ids count once", [][]string{{"a"}}, []string{"a", "a"}, 10, 1, 1},
		{"ideal capped at k", [][]string{{"x"}, {"a"}, {"b"}, {"c"}}, []string{"a", "b", "c"}, 2, 1.0 / 3, inv2 / (1 + inv2)},
		{"three of three", [][]string{{"c"}, {"x"}, {"a"}, {"b"}}, []string{"a", "b", "c"}, 10, 1, (1 + inv3 + inv4) / (1 + inv2 + inv3)},
		{"no evidence", [][]string{{"a"}}, nil, 10, 0, 0},
		{"empty ranking", nil, []string{"a"}, 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := evidenceRecall(tt.ranked, tt.evidence, tt.k); math.Abs(got-tt.recall) > 1e-12 {
				t.Errorf("recall@%d = %v, want %v", tt.k, got, tt.recall)
			}
			if got := ndcg(tt.ranked, tt.evidence, tt.k); math.Abs(got-tt.ndcg) > 1e-12 {
				t.Errorf("ndcg@%d = %v, want %v", tt.k, got, tt.ndcg)
			}
		})
	}
}

func turnItem(id string) SearchItem {
	return SearchItem{ID: "conv-t1:" + id, Kind: KindTurn, Content: id}
}

func memItem(ids ...string) SearchItem {
	var full []string
	for _, id := range ids {
		full = append(full, "conv-t1:"+id)
	}
	return SearchItem{ID: "m-" + strings.Join(ids, "-"), Kind: KindMemory, Content: "memory", TurnIDs: full}
}

// scriptedLoCoMo ranks the tiny conversation's questions by hand.
func scriptedLoCoMo() *fakeSystem {
	sys := newFakeSystem()
	sys.llmCalls = 3
	sys.ctxText, sys.ctxToks = "engram context", 7
	sys.scripted = map[string]map[string][]SearchItem{
		modeHybrid: {
			"What is the name of Ann's puppy?":                    {turnItem("D1:2"), memItem("D1:1", "D2:2")},
			"What instrument does Bob learn and who teaches him?": {memItem("D1:2"), turnItem("D1:2"), turnItem("D2:1")},
			"What did Bob's puppy chew?":                          {turnItem("D2:2")},
			"What did Ann's photo show?":                          {turnItem("D1:3")},
		},
		modeKeyword: {"What is the name of Ann's puppy?": {turnItem("D1:1")}},
		modeVector:  {},
		modeHybrid + "/" + LayerMemories: {
			"What instrument does Bob learn and who teaches him?": {memItem("D1:2")},
		},
	}
	// One memory matches the only observation ("Ann adopted a puppy."), one
	// matches none, one comes from no turn of the conversation.
	sys.memories = []StoredMemory{
		{ID: "m1", Content: "Ann adopts puppies now.", TurnIDs: []string{"conv-t1:D1:1"}},
		{ID: "m2", Content: "Bob is learning the violin.", TurnIDs: []string{"conv-t1:D1:2"}},
		{ID: "m3", Content: "Something else.", TurnIDs: []string{"other:D1:1"}},
	}
	return sys
}

func TestRunLoCoMo(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	sys := scriptedLoCoMo()
	var progress bytes.Buffer
	rep, err := RunLoCoMo(context.Background(), sys, convs, LoCoMoOptions{Ks: []int{3, 1}, Tokens: wordTokens,
		Progress: &progress, Details: true})
	if err != nil {
		t.Fatal(err)
	}
	// Scored: q0 (cat 4), q1 (cat 1), q2 (cat 2), q5 (cat 4); q3 has no evidence,
	// q4 is category 5.
	//   q0: recall@1 0, @3 1, NDCG 1/log2(3)
	//   q1: recall@1 .5, @3 1, NDCG (1 + 1/log2(4)) / (1 + 1/log2(3))
	//   q2: nothing retrieved
	//   q5: recall 1, NDCG 1
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if rep.Questions != 4 || rep.NoEvidence != 1 || rep.QuestionsByCategory[4] != 2 || rep.QuestionsByCategory[5] != 0 {
		t.Errorf("questions = %d, no evidence %d, by category %v", rep.Questions, rep.NoEvidence, rep.QuestionsByCategory)
	}
	wantRecall := map[int]RecallStats{
		1: {Overall: 1.5 / 4, ByCategory: map[int]float64{1: 0.5, 2: 0, 4: 0.5}},
		3: {Overall: 3.0 / 4, ByCategory: map[int]float64{1: 1, 2: 0, 4: 1}},
	}
	for k, w := range wantRecall {
		g := rep.RecallAt[k]
		if !close(g.Overall, w.Overall) || len(g.ByCategory) != len(w.ByCategory) {
			t.Errorf("recall@%d = %+v, want %+v", k, g, w)
		}
		for cat, v := range w.ByCategory {
			if !close(g.ByCategory[cat], v) {
				t.Errorf("recall@%d category %d = %v, want %v", k, cat, g.ByCategory[cat], v)
			}
		}
	}
	q1NDCG := (1 + inv3) / (1 + inv2)
	if want := (inv2 + q1NDCG + 0 + 1) / 4; !close(rep.NDCGAt10, want) {
		t.Errorf("ndcg@10 = %v, want %v", rep.NDCGAt10, want)
	}
	if !close(rep.NDCGByCategory[4], (inv2+1)/2) || !close(rep.NDCGByCategory[1], q1NDCG) {
		t.Errorf("ndcg by category = %v", rep.NDCGByCategory)
	}
	// Keyword finds q0's evidence at rank 1; vector finds nothing.
	if !close(rep.Baselines.Keyword.RecallAt[1].Overall, 0.25) || !close(rep.Baselines.Keyword.RecallAt[1].ByCategory[4], 0.5) ||
		rep.Baselines.Vector.RecallAt[3].Overall != 0 {
		t.Errorf("baselines = %+v", rep.Baselines)
	}
	// Category 5 is scored apart.
	if rep.Category5.Questions != 1 || rep.Category5.RecallAt[1].Overall != 1 {
		t.Errorf("category 5 = %+v", rep.Category5)
	}
	// Context: 5 category 1-4 questions at 7 tokens against the whole conversation.
	full := float64(wordTokens(convs[0].fullText()))
	if rep.ContextTokensMean != 7 || rep.FullContextTokensMean != full {
		t.Errorf("tokens = %v against %v, want 7 against %v", rep.ContextTokensMean, rep.FullContextTokensMean, full)
	}
	if rep.Turns != 5 || rep.LLMCalls != 3 || !close(rep.LLMCallsPerTurn, 0.6) {
		t.Errorf("turns %d, llm calls %d, per turn %v", rep.Turns, rep.LLMCalls, rep.LLMCallsPerTurn)
	}
	if len(rep.Details) != 6 || rep.Details[1].RecallAt[1] != 0.5 || rep.Details[3].RecallAt != nil {
		t.Errorf("details = %+v", rep.Details)
	}
	// The system saw one tenant, two drained sessions, searches at the largest k
	// (at least 10, for NDCG@10) over memories and turns, in all three modes.
	tn := sys.tenants["locomo-conv-t1"]
	if tn == nil || tn.drains != 2 || len(tn.turns) != 5 || !tn.closed {
		t.Fatalf("tenant = %+v", tn)
	}
	// memories-only is a hybrid search of the memories layer, for the scored questions.
	modes := map[string]int{}
	for _, q := range tn.queries {
		layers := strings.Join(q.Layers, ",")
		modes[q.Mode+" "+layers]++
		if q.TopK != 10 || (layers != "memories,turns" && !(layers == "memories" && q.Mode == modeHybrid)) || q.UserID != "conv-t1" {
			t.Errorf("search = %+v", q)
		}
	}
	if modes[modeHybrid+" memories,turns"] != 5 || modes[modeKeyword+" memories,turns"] != 4 ||
		modes[modeVector+" memories,turns"] != 4 || modes[modeHybrid+" memories"] != 4 {
		t.Errorf("searches per mode = %v", modes)
	}
	// memories-only finds half of q1's evidence at rank 1.
	if mo := rep.Baselines.MemoriesOnly.RecallAt[1]; !close(mo.Overall, 0.5/4) || !close(mo.ByCategory[1], 0.5) {
		t.Errorf("memories-only = %+v", rep.Baselines.MemoriesOnly)
	}
	// bm25-turns over the raw turns: q0 (name, ann, puppy) → D1:1 first; q1
	// (instrument, bob, learn, teaches) → D1:2 and D2:1 hold only "bob";
	// q2 (year, ann, adopt, puppy) → D1:1; q5 (ann, photo, show) → D1:3, whose
	// image caption holds "photo".
	b := rep.Baselines.BM25Turns
	if !close(b.RecallAt[1].ByCategory[4], 1) || !close(b.RecallAt[1].ByCategory[1], 0.5) || !close(b.RecallAt[1].ByCategory[2], 1) || !close(b.RecallAt[3].ByCategory[1], 1) {
		t.Errorf("bm25-turns = %+v", b)
	}
	for _, k := range rep.Ks {
		if want := rep.RecallAt[k].Overall / b.RecallAt[k].Overall; !close(rep.HybridOverBM25[k], want) {
			t.Errorf("hybrid / bm25 @%d = %v, want %v", k, rep.HybridOverBM25[k], want)
		}
	}
	if o := rep.Observations; o == nil || o.Observations != 1 || o.Covered != 1 || o.Memories != 2 || o.MatchingMemories != 1 ||
		!close(o.Coverage, 1) || !close(o.Precision, 0.5) || !close(o.MemoriesPer100Turns, 40) || len(o.Misses) != 0 {
		t.Errorf("observations = %+v", rep.Observations)
	}
	for _, want := range []string{"ingesting conv-t1", "5/5", "questions conv-t1", "6/6"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q: %q", want, progress.String())
		}
	}

	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"recall_at.1.overall", "recall_at.3.by_category.4", "ndcg_at_10", "baselines.keyword.recall_at.3",
		"baselines.vector.recall_at.1", "context_tokens_mean", "full_context_tokens_mean", "llm_calls_per_turn", "questions",
		"category5.recall_at.1", "baselines.memories_only.recall_at.3", "baselines.bm25_turns.recall_at.1.overall",
		"hybrid_over_bm25_turns.3", "bm25_tokenisation", "observations.coverage", "observations.precision",
		"observations.memories_per_100_turns", "observations.rule"} {
		if _, ok := lookup(m, path); !ok {
			t.Errorf("report JSON lacks %s", path)
		}
	}
	if _, ok := m["answer"]; ok {
		t.Error("answer accuracy reported without an LLM")
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hybrid @1", "keyword @3", "vector NDCG@10", "category 5", "LLM calls per ingested turn",
		"memories-only @3", "bm25-turns @1", "hybrid / bm25-turns", "k1=1.2 b=0.75", "observation coverage",
		"observation precision", "memories per 100 turns", "rule: "} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

func TestRunLoCoMoSelection(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunLoCoMo(context.Background(), scriptedLoCoMo(), convs, LoCoMoOptions{Conversations: []string{"conv-99"}}); err == nil {
		t.Error("an unknown conversation must be an error")
	}
	if _, err := RunLoCoMo(context.Background(), scriptedLoCoMo(), convs, LoCoMoOptions{Ks: []int{0}}); err == nil {
		t.Error("k = 0 must be an error")
	}
	rep, err := RunLoCoMo(context.Background(), scriptedLoCoMo(), convs, LoCoMoOptions{Conversations: []string{"conv-t1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(intsToStrings(rep.Ks), ",") != "5,10,20" || strings.Join(rep.Conversations, ",") != "conv-t1" || rep.Details != nil {
		t.Errorf("defaults: ks %v, conversations %v, details %v", rep.Ks, rep.Conversations, rep.Details)
	}
	sys := scriptedLoCoMo()
	sys.failName = "locomo-conv-t1"
	if _, err := RunLoCoMo(context.Background(), sys, convs, LoCoMoOptions{}); err == nil || !strings.Contains(err.Error(), "conv-t1") {
		t.Errorf("a failing system must stop the run naming the conversation: %v", err)
	}
}

func intsToStrings(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Itoa(x)
	}
	return out
}

// fakeChat answers from a script and judges by comparing the generated answer
// with the gold one, as a real judge would on these easy cases.
type fakeChat struct {
	mu       sync.Mutex
	answers  map[string]string // question → answer
	failOn   string            // answering this question fails
	prompts  []string
	judgeRaw func(gold, generated string) string
}

var judgeFields = regexp.MustCompile(`Question: (.*)\nGold answer: (.*)\nGenerated answer: (.*)\n`)

func (f *fakeChat) Complete(_ context.Context, system, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, user)
	if m := judgeFields.FindStringSubmatch(user); m != nil && system == "" {
		return f.judgeRaw(m[2], m[3]), nil
	}
	if system != answerSystemPrompt {
		return "", errors.New("unexpected prompt")
	}
	for q, a := range f.answers {
		if strings.HasSuffix(user, "Question: "+q+"\nAnswer:") {
			if q == f.failOn {
				return "", errors.New("model unavailable")
			}
			return a, nil
		}
	}
	return "I don't know", nil
}

func TestRunLoCoMoAnswers(t *testing.T) {
	t.Parallel()
	convs, err := LoadLoCoMo(tinyLoCoMo)
	if err != nil {
		t.Fatal(err)
	}
	chat := &fakeChat{
		answers: map[string]string{
			"What is the name of Ann's puppy?":                    "Biscuit",
			"What instrument does Bob learn and who teaches him?": "the violin, taught by Marta",
			"In which year did Ann adopt her puppy?":              "2022",
			"Would Ann enjoy a dog park?":                         "Likely yes",
			"What did Ann's photo show?":                          "a cat",
		},
		failOn: "What did Ann's photo show?",
		judgeRaw: func(gold, generated string) string {
			if strings.Contains(strings.ToLower(generated), strings.ToLower(strings.Split(gold, ",")[0])) {
				return `The answer names the same thing. {"label": "CORRECT"}`
			}
			return `{"label": "WRONG"}`
		},
	}
	rep, err := RunLoCoMo(context.Background(), scriptedLoCoMo(), convs, LoCoMoOptions{Tokens: wordTokens, Details: true,
		Answer: &AnswerOptions{Chat: chat, AnswerModel: "fake-answer", JudgeModel: "fake-judge"}})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Answer
	if a == nil {
		t.Fatal("no answer report")
	}
	// Answered: q0 right, q1 right, q2 wrong year, q3 right, q5 failed (wrong, an
	// error). Category 5 is not answered.
	if a.Questions != 5 || a.Correct != 3 || a.Errors != 1 || math.Abs(a.J-0.6) > 1e-12 {
		t.Errorf("answers = %+v", a)
	}
	want := map[int]float64{1: 1, 2: 0, 3: 1, 4: 0.5}
	for cat, v := range want {
		if a.JByCategory[cat] != v {
			t.Errorf("J category %d = %v, want %v", cat, a.JByCategory[cat], v)
		}
	}
	if _, ok := a.JByCategory[5]; ok {
		t.Error("category 5 must not be judged")
	}
	if a.AnswerModel != "fake-answer" || a.MeanAnswerWords != float64(1+5+1+2)/4 {
		t.Errorf("answer report = %+v", a)
	}
	if rep.Details[0].Label != labelCorrect || rep.Details[0].Answer != "Biscuit" || rep.Details[2].Label != labelWrong {
		t.Errorf("details = %+v", rep.Details[:3])
	}
	// The answer prompt carries engram's context; the judge prompt is Mem0's, filled.
	var sawContext, sawJudge bool
	for _, p := range chat.prompts {
		sawContext = sawContext || strings.HasPrefix(p, "Memory context:\nengram context\n\nQuestion: ")
		sawJudge = sawJudge || (strings.Contains(p, "Gold answer: Biscuit\nGenerated answer: Biscuit\n") &&
			strings.Contains(p, "label an answer to a question as ’CORRECT’ or ’WRONG’"))
	}
	if !sawContext || !sawJudge {
		t.Errorf("prompts: context %v, judge %v", sawContext, sawJudge)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "J overall") || !strings.Contains(table.String(), "fake-judge") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestParseJudgeLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply   string
		want    string
		wantErr bool
	}{
		{`{"label": "CORRECT"}`, labelCorrect, false},
		{`The dates match.` + "\n```json\n{\"label\": \"WRONG\"}\n```", labelWrong, false},
		{`{"label":"correct"}`, labelCorrect, false},
		{`{"reason": "same date", "label" : " WRONG "}`, labelWrong, false},
		{`CORRECT`, labelCorrect, false},
		{`It is WRONG.`, labelWrong, false},
		{`Not CORRECT, rather WRONG`, "", true},
		{`no idea`, "", true},
	}
	for _, tt := range tests {
		got, err := parseJudgeLabel(tt.reply)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseJudgeLabel(%q) = %q, %v; want %q, error %v", tt.reply, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestJudgePromptIsMem0s(t *testing.T) {
	t.Parallel()
	p := judgeUserPrompt("When did Ann adopt a puppy?", "7 May 2023", "May 7th")
	for _, want := range []string{
		"(1) a question (posed by one user to another user), \n",
		"as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. \n",
		`Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.`,
		"Question: When did Ann adopt a puppy?\nGold answer: 7 May 2023\nGenerated answer: May 7th\n",
		`Just return the label CORRECT or WRONG in a json format with the key as "label".`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("judge prompt lacks %q", want)
		}
	}
}
