package retriever_test

import (
	"cmp"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestIndexedOwnerSidesApart checks the candidate read of an owner with its own
// vector index: its vector side runs as a statement of its own, alongside the keyword
// and recency sides, and the merged hits are those of the one statement that runs
// every side (each hit's ranks, distance, keyword score and vector), with a helper
// connection and without one.
func TestIndexedOwnerSidesApart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	emb := e.emb
	rng := rand.New(rand.NewPCG(11, 13))
	words := strings.Fields("harbour lantern copper meadow violet ember quartz saddle timber orchard falcon basalt")
	const n = 600
	texts := make([]string, n)
	for i := range texts {
		var ws []string
		for range 3 + rng.IntN(4) {
			ws = append(ws, words[rng.IntN(len(words))])
		}
		texts[i] = strings.Join(ws, " ") + fmt.Sprintf(" note%d", i%37)
	}
	vecs, err := emb.Embed(e.ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]memory.BulkMemory, n)
	for i := range ms {
		ms[i] = memory.BulkMemory{ID: uuid.Must(uuid.NewV7()), UserID: "big", Type: memory.Semantic, Category: memory.CatFact,
			Content: texts[i], Importance: 0.5, Confidence: 0.8, ValidFrom: time.Now(), Source: memory.SourceUser, Embedding: vecs[i]}
	}
	if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		return tx.CopyMemories(e.ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: len(vecs[0])})
	}); err != nil {
		t.Fatal(err)
	}
	opool, err := memory.ConnectOwner(e.ctx, pgtest.OwnerURLOf(t, e.pool.Config().ConnString()), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(opool.Close)
	rep, err := memory.NewStore(opool).MaintainHNSW(e.ctx, memory.HNSWConfig{Threshold: 300, EfSearch: 100}, slog.New(slog.DiscardHandler))
	if err != nil || len(rep.Built) != 1 {
		t.Fatalf("building the owner's index: %v (%+v)", err, rep)
	}

	for _, query := range []string{"lantern quartz note5", "falcon basalt orchard", "nothing matches this"} {
		qv, err := emb.Embed(e.ctx, []string{query})
		if err != nil {
			t.Fatal(err)
		}
		q := memory.MemorySearch{Query: query, UserID: "big", Statuses: []string{"active"}, Now: time.Now(),
			Limit: 20, RecentLimit: 5, Vector: qv[0], Model: emb.Model(), MaxDistance: 2}
		for _, helpers := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/helpers=%v", query, helpers), func(t *testing.T) {
				if !helpers {
					defer e.r.HoldHelpers()()
				}
				var one, apart []memory.MemoryHit
				if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
					indexed, err := tx.OwnerIndexed(e.ctx, q)
					if err != nil || !indexed {
						return fmt.Errorf("owner indexed: %v, %w", indexed, err)
					}
					if one, _, err = tx.MemoryCandidates(e.ctx, q); err != nil {
						return err
					}
					apart, _, err = e.r.MemoryCandidates(e.ctx, tx, q)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if got, want := describeHits(apart), describeHits(one); got != want {
					t.Fatalf("sides apart:\n%s\none statement:\n%s", got, want)
				}
				if !slices.ContainsFunc(one, func(h memory.MemoryHit) bool { return h.VectorRank > 0 }) {
					t.Fatal("no vector hits: the test reads nothing")
				}
			})
		}
	}
}

// describeHits prints hits in memory order, one line each, with everything a search
// scores them by.
func describeHits(hs []memory.MemoryHit) string {
	hs = slices.Clone(hs)
	slices.SortFunc(hs, func(a, b memory.MemoryHit) int { return cmp.Compare(a.Memory.ID.String(), b.Memory.ID.String()) })
	var b strings.Builder
	for _, h := range hs {
		dist := "-"
		if h.Distance != nil {
			dist = fmt.Sprintf("%.6f", *h.Distance)
		}
		fmt.Fprintf(&b, "%s v%d d%s k%d %.6f r%d vec%d\n", h.Memory.ID, h.VectorRank, dist, h.KeywordRank, h.Keyword, h.RecentRank, len(h.Vector))
	}
	return b.String()
}
