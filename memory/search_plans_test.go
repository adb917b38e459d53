package memory_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestHeavyOwnerGenericPlan checks the plan a search runs for an owner far larger than
// the average one, in a database of many tenants (migration 0014). Searches run
// generic plans, planned for any tenant and user; without the planner knowing that a
// user id determines its tenant, it multiplies the two columns' selectivities and
// plans for an owner of one row: it then reads the heavy owner's whole log in time
// order instead of through the full-text index, and finds each matched turn's session
// neighbours by scanning the owner's log (a 51,000-turn owner: 615 ms instead of 21).
func TestHeavyOwnerGenericPlan(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	text := planRowText
	// 300 tenants of one owner of 200 turns each.
	for n := range 300 {
		turns := make([]memory.BulkTurn, 200)
		for i := range turns {
			turns[i] = memory.BulkTurn{TurnID: fmt.Sprintf("t%d", i), UserID: fmt.Sprintf("user-%d", n),
				SessionID: fmt.Sprintf("s%d", i/10), Role: memory.RoleUser, Content: text(i), OccurredAt: at.Add(time.Duration(i) * time.Minute)}
		}
		e.copyRows(fmt.Sprintf("tenant-%d", n), turns, nil)
	}
	// One heavy owner: 8,000 turns in sessions of 40; "kingfisher" is in one turn of 50.
	heavy := make([]memory.BulkTurn, 8000)
	for i := range heavy {
		c := text(i)
		if i%50 == 0 {
			c += " kingfisher"
		}
		heavy[i] = memory.BulkTurn{TurnID: fmt.Sprintf("h%d", i), UserID: "heavy", SessionID: fmt.Sprintf("s%d", i/40),
			Role: memory.RoleUser, Content: c, OccurredAt: at.Add(time.Duration(i) * time.Minute)}
	}
	e.copyRows("acme", heavy, nil)
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE turns")

	var plan []string
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		stats, err := tx.TurnTextStats(e.ctx, "heavy")
		if err != nil {
			return err
		}
		q := memory.TurnSearch{Query: "kingfisher lantern", UserID: "heavy", Keyword: true, Limit: 20, Stats: &stats,
			Neighbours: 0.5}
		plan, err = tx.ExplainAnalyzeTurnCandidates(e.ctx, q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	text0 := strings.Join(plan, "\n")
	for _, want := range []string{"turns_owner_tsv", "turns_session"} {
		if !strings.Contains(text0, want) {
			t.Errorf("the generic plan does not use %s:\n%s", want, text0)
		}
	}
	if strings.Contains(text0, "turns_user_time") {
		t.Errorf("the generic plan reads the heavy owner's log in time order (turns_user_time):\n%s", text0)
	}
}

// TestLargeOwnerMemoryPlan checks the plan of a large owner's memory search in a
// database of many tenants: before migration 0019 the generic plan, made for an owner
// of about one row, read all of a 100,000-memory owner's rows through memories_owner
// and tested each against the query (113 ms). The plan a search runs for it now (its
// generic plan, PreferGenericPlans) reads its full-text entries.
func TestLargeOwnerMemoryPlan(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	mem := func(user string, i int, extra string) memory.BulkMemory {
		return memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatFact,
			Content:    planRowText(i) + extra,
			Importance: 0.5, Confidence: 0.9, ValidFrom: at, Source: memory.SourceUser, Extractor: "test", Embedding: []float32{1, float32(i%7) / 7}}
	}
	// 300 tenants of one owner of 100 memories each.
	for n := range 300 {
		ms := make([]memory.BulkMemory, 100)
		for i := range ms {
			ms[i] = mem(fmt.Sprintf("user-%d", n), i, "")
		}
		e.copyRows(fmt.Sprintf("tenant-%d", n), nil, ms)
	}
	// One large owner; "kingfisher" is in one memory of 50.
	large := make([]memory.BulkMemory, memory.LargeOwnerDocs+500)
	for i := range large {
		extra := ""
		if i%50 == 0 {
			extra = " kingfisher"
		}
		large[i] = mem("large", i, extra)
	}
	e.copyRows("acme", nil, large)
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE memories")

	var plan []string
	var hits []memory.MemoryHit
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		if err := tx.PreferGenericPlans(e.ctx); err != nil { // as a search does
			return err
		}
		stats, err := tx.OwnerTextStats(e.ctx, memory.ScopeUser, "large", "", []string{"active"}, time.Now())
		if err != nil {
			return err
		}
		q := memory.MemorySearch{Query: "kingfisher lantern", UserID: "large", Statuses: []string{"active"}, Now: time.Now(),
			Limit: 20, RecentLimit: 5, Stats: &stats}
		if hits, _, err = tx.MemoryCandidates(e.ctx, q); err != nil {
			return err
		}
		plan, err = tx.ExplainAnalyzeMemoryCandidates(e.ctx, q)
		if err != nil {
			return err
		}
		// An owner of a million rows (its statistics say so here) runs its generic
		// plan too: planning the statement for its values cost 10–12 ms a search at
		// that size. The transaction's settings are left as it chose them.
		customPlans := func() (n int) {
			if err := tx.Raw().QueryRow(e.ctx, "SELECT coalesce(sum(custom_plans), 0) FROM pg_prepared_statements").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := customPlans()
		huge := stats
		huge.N = 1_000_000
		q.Stats = &huge
		again, _, err := tx.MemoryCandidates(e.ctx, q)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(again, func(h memory.MemoryHit) bool {
			return h.KeywordRank == 1 && strings.Contains(h.Memory.Content, "kingfisher")
		}) {
			t.Errorf("for a very large owner, the best keyword hit does not hold the rare term")
		}
		if after := customPlans(); after != before {
			t.Errorf("custom plans of the connection's statements: %d before the very large owner's search, %d after; want none made", before, after)
		}
		var mode, sorting string
		if err := tx.Raw().QueryRow(e.ctx, "SELECT current_setting('plan_cache_mode'), current_setting('enable_sort')").Scan(&mode, &sorting); err != nil {
			return err
		}
		if mode != "force_generic_plan" || sorting != "on" {
			t.Errorf("after the search: plan_cache_mode %s, enable_sort %s; want force_generic_plan, on", mode, sorting)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hits, func(h memory.MemoryHit) bool {
		return h.KeywordRank == 1 && strings.Contains(h.Memory.Content, "kingfisher")
	}) {
		t.Errorf("the best keyword hit does not hold the rare term")
	}
	match := cteBlock(t, strings.Join(plan, "\n"), "kmatch") // no frequent term known yet: one pass
	if !strings.Contains(match, "memories_owner_tsv") || strings.Contains(match, "memories_owner ") {
		t.Errorf("the large owner's keyword side does not read its full-text entries:\n%s", match)
	}
}

// TestLargeOwnerWindowPlan checks the generic plan of a large owner's window (the
// pairs pass of wide pairs, bm25Spec) in a database of many small owners. A generic
// plan sees every owner as one of average size; with the search's filters in the
// ordered read of the newest rows, it read all of a million-memory owner's rows by
// memories_owner and sorted them (1.8 s). The window's read stops at
// memory.LargeOwnerWindow rows whatever the estimate.
func TestLargeOwnerWindowPlan(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	for n := range 300 {
		ms := make([]memory.BulkMemory, 100)
		for i := range ms {
			ms[i] = memory.BulkMemory{ID: uuid.New(), UserID: fmt.Sprintf("user-%d", n), Type: memory.Semantic,
				Category: memory.CatFact, Content: planRowText(i), Importance: 0.5, Confidence: 0.9, ValidFrom: at,
				Source: memory.SourceUser, Extractor: "test", Embedding: []float32{1, float32(i%7) / 7}}
		}
		e.copyRows(fmt.Sprintf("tenant-%d", n), nil, ms)
	}
	// "amber" and "birch" in 40 % of the large owner's rows each, never together: their
	// pair is expected in 3,036 rows (memory.PairsEstimate: wide), so the pairs pass
	// reads the window.
	const n = memory.LargeOwnerDocs + 2000
	texts := make([]string, n)
	for i := range texts {
		texts[i] = planRowText(i) + map[int]string{0: " amber", 1: " amber", 2: " birch", 3: " birch", 4: ""}[i%5]
	}
	e.seedOwner(texts)
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE memories")

	full := e.keyword("memories", "amber birch", n, nil)
	if len(full.frequent) != 2 {
		t.Fatalf("frequent terms %v, want amber and birch", full.frequent)
	}
	got := e.keyword("memories", "amber birch", 30, full.frequent)
	if len(got.ids) == 0 {
		t.Fatal("the window found nothing")
	}
	pairs := cteBlock(t, got.plan, "kcmatch")
	scan := regexp.MustCompile(`Scan.* on memories .*actual time=\S+ rows=([\d.]+) loops=(\d+)`)
	var read bool
	for _, line := range strings.Split(pairs, "\n") {
		m := scan.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows, _ := strconv.ParseFloat(m[1], 64) // PostgreSQL 18 prints rows=5000.00
		loops, _ := strconv.Atoi(m[2])
		read = read || rows > 0
		if rows*float64(loops) > memory.LargeOwnerWindow {
			t.Errorf("the pairs pass read %.0f rows of the owner's %d in one scan, want at most the window's %d:\n%s",
				rows*float64(loops), n, memory.LargeOwnerWindow, pairs)
		}
	}
	if !read {
		t.Errorf("the pairs pass read no row:\n%s", pairs)
	}
}

// TestGenericPlansAmongManyTenants checks the generic plans of an owner's statements in
// a database of many small tenants and one large one (migration 0016). Estimated from
// the tenant column's distinct count, "tenant = $1" looked like a few rows, and the
// planner ANDed the user's full-text entries (whose key has no tenant) with the
// tenant's whole range of the primary key: a search of a tenant of 1,050,000 turns read
// a million index entries; an owner was planned as a row or two, and the keyword sides
// read every row of the owner instead of its full-text entries. A generic plan is made
// for the largest tenant now: it never reads a tenant's range of the primary key to
// narrow an owner's rows, and reads an owner's text through its full-text entries.
// Without migration 0016 this test fails on the keyword sides.
func TestGenericPlansAmongManyTenants(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	// 3,000 tenants of one turn and one memory each, their users numbered as the large
	// tenant's are (many services number users per tenant).
	pgtest.OwnerExec(t, e.s.Pool(), "small-0", `DO $$
BEGIN
	FOR i IN 1..3000 LOOP
		PERFORM set_config('engram.tenant', 'small-' || i, true);
		INSERT INTO turns (turn_id, user_id, session_id, role, content, content_hash, occurred_at)
		VALUES ('t1', 'user-' || i % 12, 's1', 'user', 'copper lantern ' || i, '\x00', now());
		INSERT INTO memories (id, user_id, content, importance, confidence, valid_from, status, source, scope, type, category)
		VALUES (gen_random_uuid(), 'user-' || i % 12, 'copper lantern ' || i, 0.5, 0.9, now(), 'active', 'user', 'user', 'semantic', 'fact');
	END LOOP;
END $$`)
	// One tenant of 12 users with 600 turns and 500 memories each; "kingfisher" is in
	// one row of 50.
	text := func(i int) string {
		if i%50 == 0 {
			return planRowText(i) + " kingfisher"
		}
		return planRowText(i)
	}
	for u := range 12 {
		user := fmt.Sprintf("user-%d", u)
		turns := make([]memory.BulkTurn, 600)
		for i := range turns {
			turns[i] = memory.BulkTurn{TurnID: fmt.Sprintf("%s-t%d", user, i), UserID: user, SessionID: fmt.Sprintf("s%d", i/20),
				Role: memory.RoleUser, Content: text(i), OccurredAt: at.Add(time.Duration(i) * time.Minute)}
		}
		mems := make([]memory.BulkMemory, 500)
		for i := range mems {
			mems[i] = memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatPreference,
				Content: text(i), Importance: 0.5, Confidence: 0.9, ValidFrom: at, Source: memory.SourceUser, Extractor: "test",
				Embedding: []float32{1, float32(i%7) / 7}}
		}
		e.copyRows("acme", turns, mems)
	}
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE turns")
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE memories")

	plans := map[string]string{}
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		ts, err := tx.TurnTextStats(e.ctx, "user-3")
		if err != nil {
			return err
		}
		plan, err := tx.ExplainAnalyzeTurnCandidates(e.ctx, memory.TurnSearch{Query: "kingfisher lantern", UserID: "user-3",
			Keyword: true, Limit: 20, Stats: &ts, Neighbours: 0.5})
		if err != nil {
			return err
		}
		plans["turns"] = strings.Join(plan, "\n")
		ms, err := tx.OwnerTextStats(e.ctx, memory.ScopeUser, "user-3", "", []string{"active"}, time.Now())
		if err != nil {
			return err
		}
		plan, err = tx.ExplainAnalyzeMemoryCandidates(e.ctx, memory.MemorySearch{Query: "kingfisher lantern", UserID: "user-3",
			Statuses: []string{"active"}, Now: time.Now(), Limit: 20, RecentLimit: 5, Stats: &ms})
		if err != nil {
			return err
		}
		plans["memories"] = strings.Join(plan, "\n")
		// The shape of the context's profile statement: an owner's rows by their own
		// columns, no text.
		plan, err = tx.ExplainGeneric(e.ctx, `SELECT m.id FROM memories m
			WHERE m.tenant = $1 AND m.user_id = $2 AND m.status = 'active' AND m.scope <> 'session'
			  AND m.category IN ('preference', 'constraint', 'profile')
			ORDER BY m.importance DESC, m.updated_at DESC, m.id LIMIT $3`, "acme", "user-3", 30)
		if err != nil {
			return err
		}
		plans["profile"] = strings.Join(plan, "\n")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, plan := range plans {
		if strings.Contains(plan, "Bitmap Index Scan on turns_pkey") || strings.Contains(plan, "Bitmap Index Scan on memories_pkey") {
			t.Errorf("%s: the generic plan reads the tenant's range of the primary key:\n%s", name, plan)
		}
	}
	if !strings.Contains(plans["turns"], "turns_owner_tsv") {
		t.Errorf("the turns' keyword side does not read the user's full-text entries:\n%s", plans["turns"])
	}
	match := cteBlock(t, plans["memories"], "kmatch")
	if !strings.Contains(match, "memories_owner_tsv") {
		t.Errorf("the memories' keyword side does not read the user's full-text entries:\n%s", match)
	}
}

// planRowText is the text of row i of the plan tests' owners: three of ten words, so
// each word is in a good share of an owner's rows, and a number of its own.
func planRowText(i int) string {
	words := strings.Fields("harbour lantern copper meadow violet ember quartz saddle timber orchard")
	return fmt.Sprintf("%s %s %s note %d", words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], i)
}

// cteBlock returns the lines of plan under CTE name, up to the next CTE; it fails the
// test when the plan has no such CTE.
func cteBlock(t *testing.T, plan, name string) string {
	t.Helper()
	i := strings.Index(plan, "CTE "+name)
	if i < 0 {
		t.Fatalf("no CTE %s in the plan:\n%s", name, plan)
	}
	block := plan[i:]
	if j := strings.Index(block, "\n  CTE "); j > 0 {
		block = block[:j]
	}
	return block
}

// TestKeywordSideReadsItsTenantOnly checks that a keyword side reads its own tenant's
// owner only (migration 0019). A user id is a tenant's own name for its user, and the
// global scope is user_id ” in every tenant: keyed by user id, the full-text index
// gave a tenant's search every tenant's rows of that id holding a term, each read and
// rechecked (a 100,000-memory user read 8,419 rows to rank its 545). Here another
// tenant holds 2,000 matching rows of the same user and global scope; the small
// tenant's keyword sides must read only their own few, through the index.
func TestKeywordSideReadsItsTenantOnly(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	rows := func(user string, n, every int) ([]memory.BulkTurn, []memory.BulkMemory) {
		var turns []memory.BulkTurn
		var mems []memory.BulkMemory
		for i := range n {
			text := planRowText(i)
			if i%every == 0 {
				text += " kingfisher"
			}
			if user != "" {
				turns = append(turns, memory.BulkTurn{TurnID: fmt.Sprintf("t%d", i), UserID: user, SessionID: fmt.Sprintf("s%d", i/20),
					Role: memory.RoleUser, Content: text, OccurredAt: at.Add(time.Duration(i) * time.Minute)})
			}
			scope := memory.ScopeUser
			if user == "" {
				scope = memory.ScopeGlobal
			}
			mems = append(mems, memory.BulkMemory{ID: uuid.New(), UserID: user, Scope: scope, Type: memory.Semantic,
				Category: memory.CatFact, Content: text, Importance: 0.5, Confidence: 0.9, ValidFrom: at,
				Source: memory.SourceUser, Extractor: "test", Embedding: []float32{1, float32(i%7) / 7}})
		}
		return turns, mems
	}
	// The other tenant: every row of its user-1 and of its global scope holds the term.
	turns, mems := rows("user-1", 2000, 1)
	e.copyRows("other", turns, mems)
	_, mems = rows("", 2000, 1)
	e.copyRows("other", nil, mems)
	// This tenant: one row in ten of 40.
	turns, mems = rows("user-1", 40, 10)
	e.copyRows("acme", turns, mems)
	_, mems = rows("", 40, 10)
	e.copyRows("acme", nil, mems)
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE turns")
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE memories")

	// indexRows is how many rows the plan's scan of index read.
	indexRows := func(plan, index string) int {
		t.Helper()
		for _, line := range strings.Split(plan, "\n") {
			if !strings.Contains(line, "Index Scan on "+index) {
				continue
			}
			i := strings.Index(line, "actual time=")
			var a, b float64
			var n int
			if i < 0 {
				break
			}
			if _, err := fmt.Sscanf(line[i:], "actual time=%f..%f rows=%d", &a, &b, &n); err != nil {
				t.Fatalf("reading %q: %v", line, err)
			}
			return n
		}
		t.Fatalf("the plan does not read %s:\n%s", index, plan)
		return 0
	}
	for _, scope := range []memory.Scope{memory.ScopeUser, memory.ScopeGlobal} {
		user := "user-1"
		if scope == memory.ScopeGlobal {
			user = ""
		}
		var plan []string
		if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
			stats, err := tx.OwnerTextStats(e.ctx, scope, user, "", []string{"active"}, time.Now())
			if err != nil {
				return err
			}
			plan, err = tx.ExplainAnalyzeMemoryCandidates(e.ctx, memory.MemorySearch{Query: "kingfisher", Scope: scope, UserID: user,
				Statuses: []string{"active"}, Now: time.Now(), Limit: 20, RecentLimit: 5, Stats: &stats})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n := indexRows(cteBlock(t, strings.Join(plan, "\n"), "kmatch"), "memories_owner_tsv"); n != 4 {
			t.Errorf("%s scope: the keyword side read %d index entries, want this tenant's 4", scope, n)
		}
	}
	var plan []string
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		stats, err := tx.TurnTextStats(e.ctx, "user-1")
		if err != nil {
			return err
		}
		plan, err = tx.ExplainAnalyzeTurnCandidates(e.ctx, memory.TurnSearch{Query: "kingfisher", UserID: "user-1",
			Keyword: true, Limit: 20, Stats: &stats})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := indexRows(strings.Join(plan, "\n"), "turns_owner_tsv"); n != 4 {
		t.Errorf("turns: the keyword side read %d index entries, want this tenant's 4", n)
	}
}

// TestSearchReadsItsCandidatesByID checks that a search (and the resolver's nearest
// read) reads the rows of its few candidates by primary key, whatever the planner
// expects of them. A generic plan
// takes a LIMIT $n to keep a tenth of its input, so for a large tenant it may expect
// 100,000 candidates where there are 20; a plain join of the candidates to their rows
// then hashed every row of the tenant (1.12 million memories, 1.8 s a search, once
// the statistics had changed). Hash joins are made the planner's choice here, and a
// small owner's search, beside an owner of 3,000 rows in its tenant, must still read
// none of that owner's rows.
func TestSearchReadsItsCandidatesByID(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	rows := func(user string, n int) ([]memory.BulkTurn, []memory.BulkMemory) {
		var turns []memory.BulkTurn
		var mems []memory.BulkMemory
		for i := range n {
			text := planRowText(i)
			turns = append(turns, memory.BulkTurn{TurnID: fmt.Sprintf("%s-t%d", user, i), UserID: user,
				SessionID: fmt.Sprintf("s%d", i/20), Role: memory.RoleUser, Content: text, OccurredAt: at.Add(time.Duration(i) * time.Minute)})
			mems = append(mems, memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic,
				Category: memory.CatFact, Content: text, Importance: 0.5, Confidence: 0.9, ValidFrom: at,
				Source: memory.SourceUser, Extractor: "test", Embedding: []float32{1, float32(i%7) / 7}})
		}
		return turns, mems
	}
	const big = 3000
	// With version 1 of each memory, for the search as of a time.
	versioned := memory.BulkOptions{VersionActor: "test"}
	turns, mems := rows("big", big)
	e.copyRowsWith("acme", turns, mems, versioned)
	turns, mems = rows("small", 30)
	e.copyRowsWith("acme", turns, mems, versioned)
	if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		for i, x := range turns {
			if err := tx.PutTurnEmbedding(e.ctx, x.TurnID, x.UserID,
				memory.Embedding{Model: "test-2d", Vector: []float32{1, float32(i%7) / 7}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pgtest.OwnerExec(t, e.s.Pool(), "acme", "ANALYZE turns, turn_embeddings, memories, memory_embeddings, memory_versions")
	// Statistics as a large owner's are passed (their rows are then read by id).
	large := func() *memory.TextStats { return &memory.TextStats{N: memory.RowByIDMinDocs, AvgLen: 4} }

	// mostRows is the largest count of rows one step of the plan produced in all
	// (PostgreSQL 18 prints rows with two decimals).
	nodeRows := regexp.MustCompile(`actual time=[0-9.]+\.\.[0-9.]+ rows=([0-9.]+) loops=(\d+)`)
	mostRows := func(t *testing.T, plan []string) (float64, string) {
		t.Helper()
		most, where, steps := 0.0, "", 0
		for _, line := range plan {
			if m := nodeRows.FindStringSubmatch(line); m != nil {
				n, err := strconv.ParseFloat(m[1], 64)
				if err != nil {
					t.Fatalf("reading %q: %v", line, err)
				}
				loops, _ := strconv.Atoi(m[2])
				steps++
				if n*float64(loops) > most {
					most, where = n*float64(loops), line
				}
			}
		}
		if steps == 0 {
			t.Fatalf("no step of the plan says what it produced:\n%s", strings.Join(plan, "\n"))
		}
		return most, where
	}
	for _, tc := range []struct {
		name    string
		explain func(tx *memory.Tx) ([]string, error)
	}{
		{"memories", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainAnalyzeMemoryCandidates(e.ctx, memory.MemorySearch{Query: "harbour lantern", Scope: memory.ScopeUser,
				UserID: "small", Statuses: []string{"active"}, Now: time.Now(), Limit: 10, RecentLimit: 5,
				Vector: []float32{1, 0.5}, Model: "test-2d", MaxDistance: 2})
		}},
		{"memories as of a time", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainAnalyzeMemoryCandidates(e.ctx, memory.MemorySearch{Query: "harbour lantern", Scope: memory.ScopeUser,
				UserID: "small", Statuses: []string{"active"}, Now: time.Now(), AsOf: new(time.Now()), Limit: 10, RecentLimit: 5,
				Vector: []float32{1, 0.5}, Model: "test-2d", MaxDistance: 2})
		}},
		{"memories with a large owner's statistics", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainAnalyzeMemoryCandidates(e.ctx, memory.MemorySearch{Query: "harbour lantern", Scope: memory.ScopeUser,
				UserID: "small", Statuses: []string{"active"}, Now: time.Now(), Limit: 10, RecentLimit: 5,
				Vector: []float32{1, 0.5}, Model: "test-2d", MaxDistance: 2, Stats: large()})
		}},
		{"turns", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainAnalyzeTurnCandidates(e.ctx, memory.TurnSearch{Query: "harbour lantern", UserID: "small",
				Keyword: true, Limit: 10})
		}},
		{"the resolver's nearest read", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainResolveNearest(e.ctx, memory.NearestQuery{UserID: "small", Model: "test-2d",
				Vector: []float32{1, 0.5}, K: 10})
		}},
		{"turns, both sides, with neighbours and a large owner's statistics", func(tx *memory.Tx) ([]string, error) {
			return tx.ExplainAnalyzeTurnCandidates(e.ctx, memory.TurnSearch{Query: "harbour lantern", UserID: "small",
				Keyword: true, Vector: []float32{1, 0.5}, Model: "test-2d", MaxDistance: 2, Neighbours: 0.5, Limit: 10,
				Stats: large()})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plan []string
			if err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				// Every join the planner may replace by a hash join is one.
				if _, err := tx.Raw().Exec(e.ctx, `SELECT set_config('enable_nestloop', 'off', true),
					set_config('enable_mergejoin', 'off', true)`); err != nil {
					return err
				}
				var err error
				plan, err = tc.explain(tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if n, line := mostRows(t, plan); n >= big {
				t.Errorf("a step read %.0f rows, the other owner's among them: %s\n%s", n, line, strings.Join(plan, "\n"))
			}
			// Each statement reads its candidates' memories or turns by primary key.
			if !slices.ContainsFunc(plan, func(l string) bool {
				return strings.Contains(l, "Index Scan using memories_pkey") || strings.Contains(l, "Index Scan using turns_pkey")
			}) {
				t.Errorf("no candidate read by primary key:\n%s", strings.Join(plan, "\n"))
			}
		})
	}
}
