package memory_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestOwnerTextIndex: the maintenance pass gives an owner above the threshold a
// full-text index of its own and drops it when the owner shrinks; a search that names
// a large owner by literals reads it (as the application role, under row-level
// security) and ranks exactly as through memories_owner_tsv; a pass limited to some
// tenants leaves the others' indexes alone.
func TestOwnerTextIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, pool, _ := hnswStores(t)
	e := &bm25Env{t: t, ctx: ctx, s: app, at: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	rows := func(user string, n int) []memory.BulkMemory {
		ms := make([]memory.BulkMemory, n)
		for i := range ms {
			extra := map[int]string{0: " amber", 1: " amber birch", 2: " birch", 3: ""}[i%4]
			ms[i] = memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatFact,
				Content: planRowText(i) + extra, Importance: 0.5, Confidence: 0.9, ValidFrom: at.Add(time.Duration(i) * time.Second),
				Source: memory.SourceUser, Extractor: "test", Embedding: []float32{1, float32(i%7) / 7}}
		}
		return ms
	}
	// A user id that needs quoting, named by a literal in the large owner's statement.
	const big = `o'ne\il`
	e.copyRows("acme", nil, rows(big, 600))
	e.copyRows("acme", nil, rows("small", 100))
	e.copyRows("globex", nil, rows(big, 600)) // the same user id in another tenant
	pgtest.OwnerExec(t, pool, "acme", "ANALYZE memories")

	// search ranks big's memories by "amber birch" with statistics that call it large
	// (named by literals), and returns the ids, the scores and the plan; wide makes both
	// terms frequent, their pairs wide, so the last pass reads the owner's newest rows.
	search := func(tenant string, large, wide bool) ([]string, []float64, string) {
		t.Helper()
		var ids []string
		var scores []float64
		var plan []string
		if err := app.InTx(ctx, tenant, func(tx *memory.Tx) error {
			stats, err := tx.OwnerTextStats(ctx, memory.ScopeUser, big, "", []string{"active"}, time.Now())
			if err != nil {
				return err
			}
			if large {
				stats.N = memory.TextIndexMinDocs // the scores change with N: compare like with like
			}
			if wide {
				stats.Frequent = []memory.TermDF{{Term: "amber", DF: 20_000}, {Term: "birch", DF: 20_000}}
			}
			q := memory.MemorySearch{Query: "amber birch", UserID: big, Statuses: []string{"active"}, Now: time.Now(),
				KeywordOnly: true, Limit: 20, Stats: &stats}
			hits, _, err := tx.MemoryCandidates(ctx, q)
			if err != nil {
				return err
			}
			for _, h := range ranked(hits, func(h memory.MemoryHit) int64 { return h.KeywordRank }) {
				ids, scores = append(ids, h.Memory.ID.String()), append(scores, h.Keyword)
			}
			plan, err = tx.ExplainAnalyzeMemoryCandidates(ctx, q)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ids, scores, strings.Join(plan, "\n")
	}
	textIndexes := func() []string {
		t.Helper()
		r, err := pool.Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = 'memories' AND indexname LIKE 'engram\_text\_%' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}

	wantIDs, wantScores, plan := search("acme", true, false)
	if len(wantIDs) != 20 || strings.Contains(plan, "engram_text_") {
		t.Fatalf("before the pass: %d hits, plan:\n%s", len(wantIDs), plan)
	}
	if strings.Contains(plan, "user_id = $") {
		t.Errorf("the large owner is named by a parameter:\n%s", plan)
	}
	wideIDs, wideScores, _ := search("acme", true, true)
	if len(wideIDs) != 20 {
		t.Fatalf("before the pass, frequent terms known: %d hits", len(wideIDs))
	}
	pass := func(threshold int, tenants ...string) memory.TextIndexReport {
		t.Helper()
		// The vector threshold is above every owner: only the text indexes change.
		rep, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 1_000_000, TextThreshold: threshold, Tenants: tenants}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Text
	}
	if rep := pass(500, "acme"); rep.Built != 1 || rep.Dropped != 0 {
		t.Fatalf("first pass over acme: %+v, want u1's index built", rep)
	}
	if got := textIndexes(); len(got) != 1 {
		t.Fatalf("full-text indexes %v, want acme/u1's", got)
	}
	ids, scores, plan := search("acme", true, false)
	if !strings.Contains(plan, "engram_text_") {
		t.Errorf("the large owner's search does not read its own index:\n%s", plan)
	}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(scores, wantScores) {
		t.Errorf("through the owner's index:\n%v\n%v\nwant\n%v\n%v", ids, scores, wantIDs, wantScores)
	}
	if ids, scores, _ := search("acme", true, true); !slices.Equal(ids, wideIDs) || !slices.Equal(scores, wideScores) {
		t.Errorf("frequent terms known, with the owner's index:\n%v\n%v\nwant\n%v\n%v", ids, scores, wideIDs, wideScores)
	}
	// Named by parameters (statistics of an owner below the threshold), the search
	// cannot prove the index's predicate and reads memories_owner_tsv.
	if _, _, plan := search("acme", false, false); strings.Contains(plan, "engram_text_") || !strings.Contains(plan, "memories_owner_tsv") {
		t.Errorf("an owner named by parameters reads the partial index:\n%s", plan)
	}
	// The other tenant's owner of that id has another key: its search does not read
	// acme's index.
	if _, _, plan := search("globex", true, false); strings.Contains(plan, "engram_text_") {
		t.Errorf("globex's u1 reads acme's u1's index:\n%s", plan)
	}

	if rep := pass(500, "globex"); rep.Built != 1 || rep.Dropped != 0 || rep.Kept != 0 {
		t.Fatalf("pass over globex: %+v, want its u1's index built and acme's left alone", rep)
	}
	if rep := pass(500); rep.Kept != 2 || rep.Built+rep.Dropped != 0 {
		t.Fatalf("pass over every tenant: %+v, want both kept", rep)
	}
	// `engram index list` names each index's owner, found by its owner_key.
	listed, err := owner.TextIndexes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, ix := range listed {
		if !ix.Valid || ix.Bytes <= 0 {
			t.Errorf("listed %+v", ix)
		}
		owners = append(owners, ix.Tenant+"/"+ix.UserID)
	}
	slices.Sort(owners)
	if want := []string{"acme/" + big, "globex/" + big}; !slices.Equal(owners, want) {
		t.Errorf("listed owners %q, want %q", owners, want)
	}
	// acme's u1 shrinks below half the threshold: a pass limited to acme drops its
	// index and keeps globex's.
	pgtest.Exec(t, pool, "acme", `DELETE FROM memories WHERE user_id = $1 AND id IN (
		SELECT id FROM memories WHERE user_id = $1 ORDER BY id LIMIT 400)`, big)
	if rep := pass(500, "acme"); rep.Dropped != 1 || rep.Built != 0 {
		t.Fatalf("pass over acme after u1 shrank: %+v, want its index dropped", rep)
	}
	if got := textIndexes(); len(got) != 1 {
		t.Fatalf("full-text indexes %v, want globex/u1's only", got)
	}
	if ids, _, _ := search("acme", true, false); len(ids) == 0 {
		t.Errorf("after the drop the search finds nothing")
	}
	// Every memory of globex's owner deleted (a tenant erased): its key is in no count,
	// and a pass limited to globex still drops its index.
	pgtest.Exec(t, pool, "globex", `DELETE FROM memories WHERE user_id = $1`, big)
	if rep := pass(500, "globex"); rep.Dropped != 1 {
		t.Fatalf("pass over globex after its owner was emptied: %+v, want its index dropped", rep)
	}
	if got := textIndexes(); len(got) != 0 {
		t.Fatalf("full-text indexes %v, want none", got)
	}
	// A negative threshold builds nothing and drops nothing.
	if rep := pass(-1); rep != (memory.TextIndexReport{}) {
		t.Errorf("pass with the text indexes off: %+v", rep)
	}
}
