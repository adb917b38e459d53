package memory_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// bm25Env holds one test database and the clock its turns are written with.
type bm25Env struct {
	t   *testing.T
	ctx context.Context
	s   *memory.Store
	at  time.Time
}

func newBM25Env(t *testing.T) *bm25Env {
	return &bm25Env{t: t, ctx: context.Background(), s: pgtest.Store(t), at: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
}

func (e *bm25Env) turn(tenant, user, session, id, content string) {
	e.t.Helper()
	e.at = e.at.Add(time.Minute)
	if _, err := e.s.InsertTurn(e.ctx, tenant, memory.Turn{TurnID: id, UserID: user, SessionID: session,
		Role: memory.RoleUser, Content: content, OccurredAt: e.at}); err != nil {
		e.t.Fatal(err)
	}
}

// copyRows bulk-loads turns and memories (their vectors under "test-2d") into tenant.
func (e *bm25Env) copyRows(tenant string, turns []memory.BulkTurn, mems []memory.BulkMemory) {
	e.t.Helper()
	e.copyRowsWith(tenant, turns, mems, memory.BulkOptions{})
}

// copyRowsWith is copyRows with opts (Model and Dims are set here).
func (e *bm25Env) copyRowsWith(tenant string, turns []memory.BulkTurn, mems []memory.BulkMemory, opts memory.BulkOptions) {
	e.t.Helper()
	opts.Model, opts.Dims = "test-2d", 2
	if err := e.s.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
		if err := tx.CopyTurns(e.ctx, turns); err != nil {
			return err
		}
		return tx.CopyMemories(e.ctx, mems, opts)
	}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *bm25Env) turns(tenant string, q memory.TurnSearch) []memory.TurnHit {
	e.t.Helper()
	q.Keyword = true
	if q.Limit == 0 {
		q.Limit = 20
	}
	var hits []memory.TurnHit
	if err := e.s.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
		var err error
		hits, _, err = tx.TurnCandidates(e.ctx, q)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	// Candidates come unordered; order them by keyword rank, which must be 1..n.
	sort.Slice(hits, func(i, j int) bool { return hits[i].KeywordRank < hits[j].KeywordRank })
	for i, h := range hits {
		if h.KeywordRank != int64(i+1) {
			e.t.Fatalf("keyword ranks are not 1..n: %+v", hits)
		}
	}
	return hits
}

// memories runs the keyword side alone of q (its user's active memories) in tenant.
func (e *bm25Env) memories(tenant string, q memory.MemorySearch) []memory.MemoryHit {
	e.t.Helper()
	q.KeywordOnly, q.Statuses, q.Now = true, []string{"active"}, time.Now()
	var hits []memory.MemoryHit
	if err := e.s.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
		var err error
		hits, _, err = tx.MemoryCandidates(e.ctx, q)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return hits
}

func turnIDs(hs []memory.TurnHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.TurnID)
	}
	return out
}

// TestTurnKeywordBM25 checks the ranking properties of the turns' keyword side: a
// rare term outweighs a common one (IDF), a short match outranks a long one with the
// same term (length normalisation), English words match across inflections, an
// identifier is matched whole, Chinese matches by bigram, and the statistics are the
// user's own: another user's or tenant's turns change no score.
func TestTurnKeywordBM25(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	// "weekend" is in most of u1's turns, "kayak" in one.
	e.turn("acme", "u1", "s1", "w1", "This weekend was quiet, the weekend before too, every weekend really")
	e.turn("acme", "u1", "s1", "w2", "Another weekend of chores")
	e.turn("acme", "u1", "s1", "w3", "The weekend weather looks grim")
	e.turn("acme", "u1", "s1", "k1", "Bought a kayak")
	e.turn("acme", "u1", "s2", "k2", "We talked for hours about the harbour, the old lighthouse, my cousin's boat "+
		"and how the kayak I rented last summer leaked through a crack near the seat")
	e.turn("acme", "u1", "s2", "walk", "I walked the dogs along the river")
	e.turn("acme", "u1", "s3", "inv1", "Invoice INV-7731 is overdue")
	e.turn("acme", "u1", "s3", "inv2", "Invoice INV-7732 was paid")
	e.turn("acme", "u1", "s3", "zh", "我们下个月搬家到杭州")

	got := e.turns("acme", memory.TurnSearch{Query: "kayak weekend", UserID: "u1"})
	// k1 and w2 are short turns with one term each: the rarer term ranks first. k1 and
	// k2 hold "kayak" once each: the short turn ranks above the long one.
	if ids := turnIDs(got); len(ids) != 5 || ids[0] != "k1" || ids[4] != "k2" {
		t.Fatalf("kayak weekend: %v, want k1 first and the long kayak turn k2 last", ids)
	}
	for _, h := range got {
		if h.Keyword <= 0 {
			t.Errorf("%s: keyword score %v", h.TurnID, h.Keyword)
		}
	}
	if ids := turnIDs(e.turns("acme", memory.TurnSearch{Query: "walking dog", UserID: "u1"})); len(ids) != 1 || ids[0] != "walk" {
		t.Errorf("walking dog: %v, want the stemmed match", ids)
	}
	if ids := turnIDs(e.turns("acme", memory.TurnSearch{Query: "status of INV-7731?", UserID: "u1"})); len(ids) != 2 || ids[0] != "inv1" {
		t.Errorf("INV-7731: %v, want the exact identifier first", ids)
	}
	if ids := turnIDs(e.turns("acme", memory.TurnSearch{Query: "什么时候搬家", UserID: "u1"})); len(ids) != 1 || ids[0] != "zh" {
		t.Errorf("搬家: %v", ids)
	}
	if got := e.turns("acme", memory.TurnSearch{Query: "the and of", UserID: "u1"}); len(got) != 0 {
		t.Errorf("stopwords only: %v", turnIDs(got))
	}

	// Another user and another tenant, full of the same terms, leave u1's scores as
	// they were.
	before := map[string]float64{}
	got = e.turns("acme", memory.TurnSearch{Query: "kayak weekend", UserID: "u1"})
	for _, h := range got {
		before[h.TurnID] = h.Keyword
	}
	for i := range 20 {
		e.turn("acme", "u2", "s1", fmt.Sprintf("u2-%d", i), "kayak kayak kayak")
		e.turn("globex", "u1", "s1", fmt.Sprintf("g-%d", i), "kayak trips")
	}
	for _, h := range e.turns("acme", memory.TurnSearch{Query: "kayak weekend", UserID: "u1"}) {
		if h.Keyword != before[h.TurnID] {
			t.Errorf("%s: score %v became %v after other owners' turns", h.TurnID, before[h.TurnID], h.Keyword)
		}
	}
}

// TestTurnNeighbours checks that with Neighbours the reply after a matching turn is
// found through it, with that share of its score, and without them it is not.
func TestTurnNeighbours(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	e.turn("acme", "u1", "s1", "q", "Did you finish the pottery course?")
	e.turn("acme", "u1", "s1", "a", "Yes, last Tuesday, and I got a certificate")
	e.turn("acme", "u1", "s2", "other", "Nothing to do with it")
	if ids := turnIDs(e.turns("acme", memory.TurnSearch{Query: "pottery course", UserID: "u1"})); len(ids) != 1 || ids[0] != "q" {
		t.Fatalf("without neighbours: %v", ids)
	}
	got := e.turns("acme", memory.TurnSearch{Query: "pottery course", UserID: "u1", Neighbours: 0.5})
	if ids := turnIDs(got); len(ids) != 2 || ids[0] != "q" || ids[1] != "a" {
		t.Fatalf("with neighbours: %v, want q then its reply", ids)
	}
	if d := got[1].Keyword - 0.5*got[0].Keyword; d > 1e-9 || d < -1e-9 {
		t.Errorf("reply score %v, want half of %v", got[1].Keyword, got[0].Keyword)
	}
	// A session filter applies to neighbours too.
	if ids := turnIDs(e.turns("acme", memory.TurnSearch{Query: "pottery course", UserID: "u1", Neighbours: 0.5, SessionID: "s2"})); len(ids) != 0 {
		t.Errorf("session s2: %v", ids)
	}
}

// TestMemoryKeywordBM25 checks the memories' keyword side: IDF over the owner's
// memories, so the memory holding the rare term ranks first, and other owners'
// memories do not change the scores.
func TestMemoryKeywordBM25(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	for i := range 4 {
		if _, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u1", fmt.Sprintf("Enjoys coffee, variant %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	rare, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u1", "Allergic to hazelnut"))
	if err != nil {
		t.Fatal(err)
	}
	search := func() []memory.MemoryHit {
		return e.memories("acme", memory.MemorySearch{Query: "hazelnut coffee", UserID: "u1", Limit: 10})
	}
	hits := search()
	scores := map[string]float64{}
	for _, h := range hits {
		scores[h.Memory.ID.String()] = h.Keyword
		if h.KeywordRank == 1 && h.Memory.ID != rare.ID {
			t.Errorf("first: %q, want the hazelnut memory", h.Memory.Content)
		}
	}
	if len(hits) != 5 {
		t.Fatalf("%d hits, want 5", len(hits))
	}
	for range 5 {
		if _, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u2", "Hazelnut hazelnut everywhere")); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range search() {
		if s := scores[h.Memory.ID.String()]; s != h.Keyword {
			t.Errorf("%q: score %v became %v after another owner's memories", h.Memory.Content, s, h.Keyword)
		}
	}
}

// TestKeywordRowsByID checks that reading the rescored rows' tsv again by primary key
// (large owners) scores every turn exactly as carrying each match's tsv does, with and
// without known frequent terms, and when more rows match than stage two rescores.
func TestKeywordRowsByID(t *testing.T) {
	e := newBM25Env(t)
	words := []string{"kayak", "harbour", "lantern", "orchard", "violin", "glacier", "pottery", "saffron"}
	for i := range 150 {
		// Every turn says "weather"; the others rotate so that terms share rows
		// unevenly and some turns repeat a word (term frequencies above 1).
		text := fmt.Sprintf("the weather near the %s and the %s was fine", words[i%len(words)], words[(i*3)%len(words)])
		if i%7 == 0 {
			text += " " + words[i%len(words)] + " again"
		}
		e.turn("acme", "u1", fmt.Sprintf("s%d", i/10), fmt.Sprintf("t%03d", i), text)
	}
	e.turn("other", "u1", "s0", "x1", "the kayak and the lantern in another tenant")
	stats := memory.TextStats{N: 150, AvgLen: 6}
	withFrequent := stats
	withFrequent.Frequent = []memory.TermDF{{Term: "weather", DF: 150}}
	for _, tc := range []struct {
		name  string
		text  string
		stats memory.TextStats
	}{
		{"one term", "kayak", stats},
		{"two terms, many matches", "harbour lantern", stats},
		{"a frequent term known", "weather violin glacier", withFrequent},
		{"only the frequent term", "weather", withFrequent},
		{"no match", "submarine", stats},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var carried, byID map[string]float64
			err := e.s.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				var err error
				if carried, err = tx.TurnKeywordScores(e.ctx, "u1", tc.text, tc.stats, false); err != nil {
					return err
				}
				byID, err = tx.TurnKeywordScores(e.ctx, "u1", tc.text, tc.stats, true)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.text != "submarine" && len(carried) == 0 {
				t.Fatalf("%q scored nothing", tc.text)
			}
			if len(byID) != len(carried) {
				t.Fatalf("%q: %d turns scored by id, %d carried", tc.text, len(byID), len(carried))
			}
			for id, kr := range carried {
				got, ok := byID[id]
				if !ok || math.Abs(got-kr) > 1e-9 {
					t.Errorf("%q: turn %s scored %v by id, %v carried", tc.text, id, got, kr)
				}
			}
		})
	}
}

// TestKeywordStageOneWeighsTerms checks stage one of the keyword side (every match
// scored as if each term occurred once, the best 4×limit kept for stage two): it must
// weigh each term by its IDF. Thirty short memories hold the common term, three
// longer ones the rare term; with the IDFs, the rare ones pass stage one's cut of 8
// and rank first, while equal weights would keep the shorter common ones and drop
// them.
func TestKeywordStageOneWeighsTerms(t *testing.T) {
	t.Parallel()
	e := newBM25Env(t)
	for i := range 30 {
		if _, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u1", fmt.Sprintf("Coffee break %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	rare := map[string]bool{}
	for _, c := range []string{"Quokka seen near the old lighthouse pier at dusk", "Photographed a quokka family on the island trail",
		"The quokka exhibit at the zoo opened last spring"} {
		m, err := e.s.CreateMemory(e.ctx, "acme", newMemory("u1", c))
		if err != nil {
			t.Fatal(err)
		}
		rare[m.ID.String()] = true
	}
	var top []string
	for _, h := range e.memories("acme", memory.MemorySearch{Query: "quokka coffee", UserID: "u1", Limit: 2}) {
		if h.KeywordRank >= 1 && h.KeywordRank <= 2 {
			top = append(top, h.Memory.Content)
			if !rare[h.Memory.ID.String()] {
				t.Errorf("keyword rank %d: %q, want a memory holding the rare term", h.KeywordRank, h.Memory.Content)
			}
		}
	}
	if len(top) != 2 {
		t.Fatalf("keyword top 2: %q, want two memories", top)
	}
}
