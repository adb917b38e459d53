package memory_test

import (
	"fmt"
	"slices"
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
	words := strings.Fields("harbour lantern copper meadow violet ember quartz saddle timber orchard")
	text := func(i int) string {
		return fmt.Sprintf("%s %s %s note %d", words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], i)
	}
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
	for _, want := range []string{"turns_user_tsv", "turns_session"} {
		if !strings.Contains(text0, want) {
			t.Errorf("the generic plan does not use %s:\n%s", want, text0)
		}
	}
	if strings.Contains(text0, "turns_user_time") {
		t.Errorf("the generic plan reads the heavy owner's log in time order (turns_user_time):\n%s", text0)
	}
}

// TestLargeOwnerMemoryPlan checks the plan of a large owner's memory search in a
// database of many tenants (LargeOwnerCustomPlans): the generic plan, made for an
// owner of about one row, read all of a 100,000-memory owner's rows through
// memories_owner and tested each against the query (113 ms); the plan made for the
// owner's values reads its full-text entries.
func TestLargeOwnerMemoryPlan(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	words := strings.Fields("harbour lantern copper meadow violet ember quartz saddle timber orchard")
	mem := func(user string, i int, extra string) memory.BulkMemory {
		return memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatFact,
			Content:    fmt.Sprintf("%s %s %s note %d%s", words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], i, extra),
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
		// The statement planned for its values; the transaction's statements after it
		// plan as it chose.
		var mode string
		if err := tx.Raw().QueryRow(e.ctx, "SELECT current_setting('plan_cache_mode')").Scan(&mode); err != nil {
			return err
		}
		if mode != "force_generic_plan" {
			t.Errorf("plan_cache_mode after the search: %s, want force_generic_plan", mode)
		}
		plan, err = tx.ExplainAnalyzeMemoryCandidates(e.ctx, q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hits, func(h memory.MemoryHit) bool {
		return h.KeywordRank == 1 && strings.Contains(h.Memory.Content, "kingfisher")
	}) {
		t.Errorf("the best keyword hit does not hold the rare term")
	}
	text := strings.Join(plan, "\n")
	i := strings.Index(text, "CTE kmatch") // no frequent term known yet: one pass
	if i < 0 {
		t.Fatalf("no keyword match in the plan:\n%s", text)
	}
	match := text[i:]
	if j := strings.Index(match, "\n  CTE "); j > 0 {
		match = match[:j]
	}
	if !strings.Contains(match, "memories_user_tsv") || strings.Contains(match, "memories_owner") {
		t.Errorf("the large owner's keyword side does not read its full-text entries:\n%s", match)
	}
}
