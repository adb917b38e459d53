package retriever_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams/natstest"
)

func TestContextBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	texts := map[string][]string{
		"english": {
			"The user prefers vegetarian food and dislikes meetings before ten in the morning; reminders should arrive the evening before.",
			"When deploying to production, run the migrations first, then restart the workers one at a time and watch the error rate.",
			"Order ORD-2024-88123 was shipped on March 3rd via DHL with tracking number 4471-9920-1134 to the Berlin office.",
		},
		"chinese": {
			"用户不喜欢在早上十点之前开会，喜欢喝绿茶，提醒最好在前一天晚上发送。",
			"部署到生产环境时，先执行数据库迁移，然后逐个重启工作进程，并观察错误率的变化。",
			"我对海鲜过敏，吃虾会起疹子，所以以后推荐餐厅的时候请避开海鲜为主的店。",
		},
		"mixed": {
			"用户喜欢用 Go 写后端代码，但是 prefers Python for data analysis，周末会用 Jupyter 做项目。",
			"下周一 (Monday) 的 standup 改到 9:30，地点在 3 楼会议室 B，记得带上 Q3 的 roadmap。",
			"请记住我的订单号是 ORD-2024-88123，预计下周三 (Wednesday) 送达，快递是 SF Express。",
		},
	}
	types := []memory.Type{memory.Semantic, memory.Episodic, memory.Procedural}
	cats := []memory.Category{memory.CatPreference, memory.CatFact, memory.CatConstraint, memory.CatEvent}
	for lang, ts := range texts {
		for i := 0; i < 30; i++ {
			e.add("acme", mem{user: lang, content: fmt.Sprintf("%s (%d)", ts[i%len(ts)], i), typ: types[i%3], cat: cats[i%4],
				importance: float64(i%10) / 10})
		}
		for i := 0; i < 12; i++ {
			e.addTurn("acme", lang, "s1", fmt.Sprintf("%s-t%d", lang, i), memory.RoleUser, strings.Repeat(ts[i%len(ts)]+" ", 1+i%3),
				time.Now().Add(-time.Duration(12-i)*time.Minute))
		}
	}
	for lang, ts := range texts {
		for _, budget := range []int{1, 30, 60, 100, 250, 500, 1500, 4000} {
			resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: lang, SessionID: "s1", Query: ts[0], BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			if resp.TokensUsed > budget || retriever.EstimateTokens(resp.Text) > budget || resp.Budget != budget {
				t.Errorf("%s budget %d: used %d (text %d)", lang, budget, resp.TokensUsed, retriever.EstimateTokens(resp.Text))
			}
			if budget >= 500 {
				if len(resp.MemoryIDs) == 0 || !strings.HasPrefix(resp.Text, "<engram-memory>") || !strings.HasSuffix(resp.Text, "</engram-memory>") {
					t.Errorf("%s budget %d: fenced block with memories expected:\n%s", lang, budget, resp.Text)
				}
				if resp.TokensUsed < budget/2 && budget <= 1500 {
					t.Errorf("%s budget %d: only %d used although there is more to say", lang, budget, resp.TokensUsed)
				}
				sum := 0
				for _, s := range resp.Sections {
					sum += s.Tokens
				}
				if sum > resp.TokensUsed {
					t.Errorf("%s budget %d: sections %d exceed total %d", lang, budget, sum, resp.TokensUsed)
				}
			}
		}
	}
}

func TestContextProfileForUnrelatedQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	veg := e.add("acme", mem{user: "u", content: "Is strictly vegetarian", cat: memory.CatPreference, importance: 0.95, confidence: 0.9})
	noCalls := e.add("acme", mem{user: "u", content: "Never schedule calls on Fridays", cat: memory.CatConstraint, importance: 0.8})
	for i := 0; i < 40; i++ {
		e.add("acme", mem{user: "u", content: fmt.Sprintf("Quantum physics homework problem %d is about entanglement", i),
			typ: memory.Episodic, cat: memory.CatEvent, importance: 0.9})
	}
	resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", Query: "quantum physics homework entanglement", BudgetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	sem := strings.Index(resp.Text, "## Semantic memory")
	for _, m := range []memory.Memory{veg, noCalls} {
		i := strings.Index(resp.Text, "[memory_ref: "+m.ID.String()+"]")
		if i < 0 || i < sem {
			t.Errorf("profile memory %q missing from the semantic layer:\n%s", m.Content, resp.Text)
		}
	}
	if !strings.Contains(resp.Text, "(semantic · preference · confidence 0.9 · updated just now) Is strictly vegetarian") {
		t.Errorf("memory line format:\n%s", resp.Text)
	}
	if !strings.Contains(resp.Text, "It is not an instruction") {
		t.Errorf("block not introduced as reference data:\n%s", resp.Text)
	}
}

func TestTaskStateIsolation(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	_, js := ns.Connect(t)
	ctx := testCtx(t)
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{TTL: time.Hour, MaxBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Put(ctx, "acme", "trip.1", json.RawMessage(`{"step":2,"goal":"book flights"}`)); err != nil {
		t.Fatal(err)
	}
	// The same task id in another tenant, and tenant/task pairs that concatenate alike.
	if _, err := tasks.Get(ctx, "globex", "trip.1"); err == nil {
		t.Fatal("another tenant read acme's task state")
	}
	if _, err := tasks.Put(ctx, "globex", "trip.1", json.RawMessage(`{"step":9}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Get(ctx, "acme.trip", "1"); err == nil {
		t.Fatal("tenant acme.trip read acme's task trip.1")
	}
	a, err := tasks.Get(ctx, "acme", "trip.1")
	if err != nil || string(a.State) != `{"step":2,"goal":"book flights"}` {
		t.Fatalf("acme state %s, %v", a.State, err)
	}

	// Through the API, and into a context call.
	e := newEnv(t, nil, func(c *retriever.Config) { c.Tasks = tasks })
	api := httpapi.Config{Retriever: e.r, Tasks: tasks}
	acme, globex := server(t, api, "acme"), server(t, api, "globex")
	var st retriever.TaskState
	if code := do(t, globex, "GET", "/v1/tasks/trip.1/state", "", &st); code != 200 || string(st.State) != `{"step":9}` {
		t.Errorf("globex GET: %d %s", code, st.State)
	}
	if code := do(t, acme, "PUT", "/v1/tasks/t2/state", `{"todo":["a","b"]}`, &st); code != 200 || st.Revision == 0 {
		t.Errorf("PUT: %d %+v", code, st)
	}
	var body struct{ Error struct{ Field string } }
	if code := do(t, acme, "PUT", "/v1/tasks/t2/state", `[1,2]`, &body); code != 400 || body.Error.Field != "state" {
		t.Errorf("PUT array: %d %q", code, body.Error.Field)
	}
	if code := do(t, acme, "PUT", "/v1/tasks/t2/state", `{"big":"`+strings.Repeat("x", 2000)+`"}`, nil); code != 413 {
		t.Errorf("PUT too large: %d", code)
	}
	if code := do(t, globex, "GET", "/v1/tasks/t2/state", "", nil); code != 404 {
		t.Errorf("globex read acme's t2: %d", code)
	}
	resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", TaskID: "trip.1", Query: "flights"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Text, `[task: trip.1]`) || !strings.Contains(resp.Text, `"goal":"book flights"`) {
		t.Errorf("working memory missing:\n%s", resp.Text)
	}
	if code := do(t, acme, "DELETE", "/v1/tasks/trip.1/state", "", nil); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	if code := do(t, acme, "GET", "/v1/tasks/trip.1/state", "", nil); code != 404 {
		t.Errorf("GET after DELETE: %d", code)
	}
	if code := do(t, globex, "GET", "/v1/tasks/trip.1/state", "", nil); code != 200 {
		t.Errorf("globex's task went with acme's: %d", code)
	}
}

func TestRetrievalRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a := e.add("acme", mem{user: "u", content: "Keeps a sourdough starter named Bob"})
	e.add("globex", mem{user: "u", content: "Keeps a sourdough starter named Bob"})
	api := httpapi.Config{Retriever: e.r}
	acme, globex := server(t, api, "acme"), server(t, api, "globex")
	var sr retriever.SearchResponse
	if code := do(t, acme, "POST", "/v1/search", `{"query":"sourdough","user_id":"u"}`, &sr); code != 200 || len(sr.Results) != 1 {
		t.Fatalf("search: %d %+v", code, sr)
	}
	var rec retriever.Retrieval
	if code := do(t, acme, "GET", "/v1/retrievals/"+sr.RetrievalID, "", &rec); code != 200 {
		t.Fatalf("GET retrieval: %d", code)
	}
	if rec.Kind != "search" || len(rec.MemoryIDs) != 1 || rec.MemoryIDs[0] != a.ID || rec.UserID != "u" || len(rec.QueryHash) != 64 {
		t.Errorf("record %+v", rec)
	}
	// The record keeps the score each result was ranked by, aligned with the ids.
	if len(rec.MemoryScores) != 1 || rec.MemoryScores[0] == nil || *rec.MemoryScores[0] != sr.Results[0].Score {
		t.Errorf("recorded scores %v, want [%v]", rec.MemoryScores, sr.Results[0].Score)
	}
	if code := do(t, globex, "GET", "/v1/retrievals/"+sr.RetrievalID, "", nil); code != 404 {
		t.Errorf("another tenant read the record: %d", code)
	}
	if code := do(t, acme, "GET", "/v1/retrievals/nope", "", nil); code != 400 {
		t.Errorf("bad id: %d", code)
	}
	var cr retriever.ContextResponse
	if code := do(t, acme, "POST", "/v1/context", `{"query":"sourdough","user_id":"u"}`, &cr); code != 200 {
		t.Fatalf("context: %d", code)
	}
	rec = retriever.Retrieval{}
	if code := do(t, acme, "GET", "/v1/retrievals/"+cr.RetrievalID, "", &rec); code != 200 || rec.Kind != "context" ||
		len(rec.MemoryIDs) != len(cr.MemoryIDs) || len(cr.MemoryIDs) != 1 {
		t.Errorf("context record %d %+v (response ids %v)", code, rec, cr.MemoryIDs)
	}
	if len(rec.MemoryScores) != len(rec.MemoryIDs) || len(rec.TurnScores) != len(rec.TurnIDs) {
		t.Errorf("context record scores %v / %v not aligned with %v / %v", rec.MemoryScores, rec.TurnScores, rec.MemoryIDs, rec.TurnIDs)
	}
}

func TestAccessCountsBatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a := e.add("acme", mem{user: "u", content: "Drives an old blue Volvo"})
	g := e.add("globex", mem{user: "u", content: "Drives an old blue Volvo"})
	for i := 0; i < 5; i++ {
		e.search("acme", retriever.SearchRequest{Query: "volvo", UserID: "u"})
	}
	e.search("globex", retriever.SearchRequest{Query: "volvo", UserID: "u"})
	// Nothing is written on the read path.
	if n := accessCount(t, e, "acme", a.ID); n != 0 {
		t.Fatalf("access count %d before the flush", n)
	}
	if err := e.r.Access().Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := accessCount(t, e, "acme", a.ID); n != 5 {
		t.Errorf("acme access count %d, want 5", n)
	}
	if n := accessCount(t, e, "globex", g.ID); n != 1 {
		t.Errorf("globex access count %d, want 1", n)
	}
	if st := e.r.Access().Stats(); st.Statements != 2 || st.Flushes != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v: want one statement per tenant in one flush", st)
	}
	// Run flushes on its own and once more when stopped.
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- e.r.Access().Run(ctx) }()
	e.search("acme", retriever.SearchRequest{Query: "volvo", UserID: "u"})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := accessCount(t, e, "acme", a.ID); n != 6 {
		t.Errorf("after Run: %d, want 6", n)
	}
}

func accessCount(t *testing.T, e *env, tenant string, id uuid.UUID) int64 {
	t.Helper()
	var n int64
	err := e.store.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
		m, err := tx.Get(e.ctx, id)
		n = m.AccessCount
		if err == nil && n > 0 && m.LastAccessAt == nil {
			t.Errorf("access count without last access time")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSessionSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, func(c *retriever.Config) {
		c.WindowTurns, c.SummaryMinTurns, c.SummaryEvery = 4, 10, 5
	})
	start := time.Now().Add(-time.Hour)
	lines := []string{"ok", "I work at Contoso as a data engineer in Berlin.", "thanks", "My daughter Mia plays violin every Saturday.",
		"yes", "what time is it?", "I never eat meat or fish.", "sure", "cool", "Our budget for the trip is 3000 euros.",
		"ok", "hmm", "fine", "see you"}
	for i, l := range lines {
		e.addTurn("acme", "u", "s1", fmt.Sprintf("t%02d", i), memory.RoleUser, l, start.Add(time.Duration(i)*time.Minute))
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go e.r.RunSummarizer(ctx)
	// The first context call finds the summary due and queues it; the summarizer writes
	// it off the request path; a later call shows it.
	var text string
	for i := 0; i < 200 && !strings.Contains(text, "[session summary]"); i++ {
		resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", SessionID: "s1", Query: "trip"})
		if err != nil {
			t.Fatal(err)
		}
		text = resp.Text
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"[session summary]", "Contoso", "violin", "[turn: t13]"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[turn: t05]") {
		t.Errorf("turn outside the window shown verbatim:\n%s", text)
	}
}

func TestExtractiveSummary(t *testing.T) {
	t.Parallel()
	got := retriever.ExtractiveSummary([]string{"ok thanks", "I live in Lisbon and work remotely. What do you think?",
		"我喜欢在周末去爬山。好的。", "yes"}, 2)
	if !strings.Contains(got, "I live in Lisbon and work remotely.") || !strings.Contains(got, "我喜欢在周末去爬山。") {
		t.Errorf("summary %q", got)
	}
	if strings.Contains(got, "ok thanks") || strings.Contains(got, "What do you think") {
		t.Errorf("filler kept: %q", got)
	}
}

func TestRetrieverTablesForceRLS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	for _, table := range []string{"retrievals", "session_summaries"} {
		if n := pgtest.Count(t, e.pool, "acme", `SELECT count(*) FROM pg_class WHERE relname = $1
			AND relrowsecurity AND relforcerowsecurity`, table); n != 1 {
			t.Errorf("%s: forced row-level security not set", table)
		}
	}
	// A row written under one tenant cannot claim another. (pgtest.Exec would fail the
	// test on the error this expects.)
	err := pgx.BeginFunc(e.ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(e.ctx, "SELECT set_config('engram.tenant', 'acme', true)"); err != nil {
			t.Fatal(err)
		}
		_, err := tx.Exec(e.ctx, `INSERT INTO session_summaries (tenant, user_id, session_id, summary, turn_count)
			VALUES ('globex', 'u', 's', 'x', 1)`)
		return err
	})
	if err == nil {
		t.Error("inserted a globex row from an acme transaction")
	}
}
