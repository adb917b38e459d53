package consolidator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestResolveThroughOwnerIndex resolves the same candidates against the same owner
// in two databases, one where the owner has its HNSW index (a low threshold keeps the
// fixture small) and one where it has not, and wants the same decisions, the same
// version, lineage, audit and ledger rows, and a redelivered candidate a no-op.
func TestResolveThroughOwnerIndex(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	emb := hashEmbedder(t)
	facts := ownerIndexFacts(60)

	type side struct {
		name  string
		pool  *pgxpool.Pool
		store *memory.Store
		r     *consolidator.Resolver
	}
	var sides []*side
	for _, indexed := range []bool{true, false} {
		url := pgtest.URL(t)
		pool, err := memory.Connect(ctx, url, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		s := &side{name: "exact", pool: pool, store: memory.NewStore(pool)}
		seedOwnerIndexFacts(t, s.store, emb, facts)
		if indexed {
			s.name = "indexed"
			opool, err := memory.ConnectOwner(ctx, pgtest.OwnerURLOf(t, url), 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(opool.Close)
			// The resolver's ef_search (100) covers the graph of at most 60 + 32 vectors:
			// the index's answer is exact, so any difference in the decisions is the path's.
			rep, err := memory.NewStore(opool).MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 50}, nil)
			if err != nil || len(rep.Built) != 1 {
				t.Fatalf("building the owner index: %+v, %v", rep, err)
			}
		}
		s.r = consolidator.NewResolver(s.store, emb, nil, consolidator.ResolverConfig{}, nil)
		sides = append(sides, s)
	}

	// Restatements, refinements, contradictions of seeded facts, and new facts.
	var cands []memory.Candidate
	for i := range 8 {
		f := facts[i*7%len(facts)]
		novel := fmt.Sprintf("The user is learning to play the %s from a teacher in %s.", oxInstruments[i], oxCities[(i+5)%len(oxCities)])
		for j, content := range []string{f.content, f.refined, f.negated, novel} {
			c := cand("u1", content)
			c.ID = fmt.Sprintf("cand-%d-%d", i, j)
			c.SourceTurnIDs = []string{fmt.Sprintf("turn-%d-%d", i, j)}
			cands = append(cands, c)
		}
	}
	kinds := map[consolidator.DecisionKind]int{}
	fresh := map[uuid.UUID]uuid.UUID{} // a memory added on the indexed side: its id on the other
	for _, c := range cands {
		var ds []consolidator.Decision
		for _, s := range sides {
			d, err := s.r.Resolve(ctx, c)
			if err != nil {
				t.Fatalf("%s: resolving %q: %v", s.name, c.Content, err)
			}
			ds = append(ds, d)
		}
		got, want := ds[0], ds[1]
		if got.Kind == consolidator.KindAdd && want.Kind == consolidator.KindAdd {
			fresh[got.MemoryID] = want.MemoryID // a new memory's id is fresh on each side
		}
		if id, ok := fresh[got.MemoryID]; ok {
			got.Reason = strings.ReplaceAll(got.Reason, got.MemoryID.String(), id.String())
			got.MemoryID = id
		}
		if got != want {
			t.Errorf("%q: indexed %+v, exact %+v", c.Content, got, want)
		}
		kinds[want.Kind]++
	}
	for _, k := range []consolidator.DecisionKind{consolidator.KindAdd, consolidator.KindConfirm, consolidator.KindUpdate, consolidator.KindSupersede} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the decisions %v: the fixture does not exercise it", k, kinds)
		}
	}

	// The indexed side read through its index, the other by the exact scan.
	vecs, err := emb.Embed(ctx, []string{cands[0].Content})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sides {
		var rd memory.ResolveRead
		err := s.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var err error
			rd, err = tx.ResolveReads(ctx, memory.ResolveQuery{Nearest: memory.NearestQuery{UserID: "u1", Model: emb.Model(), Vector: vecs[0], K: 8}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if (rd.Index != "") != (i == 0) {
			t.Errorf("%s: the resolver's read went through index %q", s.name, rd.Index)
		}
	}

	// A redelivered candidate replays its decision and writes nothing.
	counts := func(s *side) []int {
		var n []int
		for _, table := range []string{"memories", "memory_versions", "memory_lineage", "audit_log", "applied_candidates"} {
			n = append(n, pgtest.Count(t, s.pool, tenant, `SELECT count(*)::int FROM `+table))
		}
		return n
	}
	before := counts(sides[0])
	d, err := sides[0].r.Resolve(ctx, cands[5])
	if err != nil || !d.Replayed {
		t.Fatalf("redelivered candidate: %+v, %v; want a replay", d, err)
	}
	if after := counts(sides[0]); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rows (memories, versions, lineage, audit, ledger) %v after the redelivery, %v before", after, before)
	}
	if exact := counts(sides[1]); fmt.Sprint(exact) != fmt.Sprint(before) {
		t.Errorf("rows (memories, versions, lineage, audit, ledger): indexed %v, exact %v", before, exact)
	}
}

type ownerIndexFactText struct{ content, refined, negated string }

var (
	oxFoods       = []string{"sushi", "ramen", "tacos", "pizza", "dumplings", "pho", "curry", "paella", "falafel", "kimchi"}
	oxCities      = []string{"Lisbon", "Osaka", "Denver", "Nairobi", "Krakow", "Hanoi", "Montreal", "Seville", "Bergen", "Busan"}
	oxInstruments = []string{"cello", "banjo", "oboe", "harp", "sitar", "tuba", "ukulele", "bassoon"}
	oxNames       = []string{"Alice", "Bob", "Chen", "Diego", "Emma", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena"}
)

// ownerIndexFact is the i-th of distinct facts (food, city and companion differ).
func ownerIndexFact(i int) ownerIndexFactText {
	base := fmt.Sprintf("orders %s when visiting %s with %s", oxFoods[i%len(oxFoods)], oxCities[i/len(oxFoods)%len(oxCities)],
		oxNames[i/(len(oxFoods)*len(oxCities))%len(oxNames)])
	return ownerIndexFactText{content: "The user " + base + ".", refined: "The user " + base + ", usually at lunch on Mondays.",
		negated: "The user no longer " + base + "."}
}

func ownerIndexFacts(n int) []ownerIndexFactText {
	fs := make([]ownerIndexFactText, n)
	for i := range fs {
		fs[i] = ownerIndexFact(i)
	}
	return fs
}

// seedOwnerIndexFacts bulk-loads the facts as u1's memories, with the same ids in
// every database, so decisions about them compare across databases.
func seedOwnerIndexFacts(t *testing.T, s *memory.Store, emb *llm.HashEmbedder, facts []ownerIndexFactText) {
	t.Helper()
	ctx := testCtx(t)
	texts := make([]string, len(facts))
	for i, f := range facts {
		texts[i] = f.content
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]memory.BulkMemory, len(facts))
	for i, f := range facts {
		ms[i] = memory.BulkMemory{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(f.content)), UserID: "u1", Type: memory.Semantic,
			Category: memory.CatPreference, Content: f.content, Importance: 0.5, Confidence: 0.8,
			ValidFrom: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), Source: memory.SourceUser, Extractor: "test",
			ExtractorVersion: "1", Embedding: vecs[i]}
	}
	err = s.InTx(ctx, tenant, func(tx *memory.Tx) error {
		return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: emb.Dims(), VersionActor: "test"})
	})
	if err != nil {
		t.Fatal(err)
	}
}
