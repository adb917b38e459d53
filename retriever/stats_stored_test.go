package retriever

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestStoredStatsFirstSearch checks the stored text statistics from the retriever's
// side: an owner's first search, without a stored row, counts as before and asks the
// refresher for a row; once the row exists, a retriever that never searched the owner
// knows the owner's frequent terms from its first query (so that query is pruned and
// learns nothing); a row older than the terms' life is used and refreshed in the
// background; a small owner is counted at each cache refresh and keeps the row's terms.
func TestStoredStatsFirstSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := pgtest.Store(t)
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	// 300 memories of u1, every one holding "plonk"; u2 has 30.
	var ms []memory.BulkMemory
	texts := map[string][]string{}
	for i := range 330 {
		user := "u1"
		if i >= 300 {
			user = "u2"
		}
		text := fmt.Sprintf("plonk zorbel%d quelbel%d", i%17, i%23)
		if i%50 == 0 {
			text += " kestrel"
		}
		texts[user] = append(texts[user], text)
		vs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, memory.BulkMemory{ID: uuid.New(), UserID: user, Type: memory.Semantic, Category: memory.CatFact,
			Content: text, Importance: 0.5, Confidence: 0.9, ValidFrom: time.Now().Add(-time.Hour), Source: memory.SourceUser,
			Extractor: "test", Embedding: vs[0]})
	}
	if err := store.InTx(ctx, "acme", func(tx *memory.Tx) error {
		return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: emb.Dims()})
	}); err != nil {
		t.Fatal(err)
	}
	clock := time.Now().UTC()
	newR := func() *Retriever {
		r, err := NewRetriever(store, emb, DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.now = func() time.Time { return clock }
		r.refresher.now = r.now
		return r
	}
	search := func(r *Retriever, user string) {
		t.Helper()
		if _, err := r.Search(ctx, "acme", SearchRequest{Query: "plonk kestrel", UserID: user}); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(r *Retriever, user string) statsEntry {
		t.Helper()
		for k, e := range r.textStats.m {
			if strings.HasPrefix(k, "m\x00acme\x00user\x00"+user+"\x00") {
				return e
			}
		}
		t.Fatalf("no cache entry for %s's memories", user)
		return statsEntry{}
	}
	// refreshAll runs what the searches asked the refresher for.
	refreshAll := func(r *Retriever) []refreshKey {
		t.Helper()
		var done []refreshKey
		for len(r.refresher.jobs) > 0 {
			rk := <-r.refresher.jobs
			if err := r.refresher.refresh(ctx, rk); err != nil {
				t.Fatal(err)
			}
			r.refresher.mu.Lock()
			delete(r.refresher.waiting, rk)
			r.refresher.mu.Unlock()
			done = append(done, rk)
		}
		return done
	}
	add := func(user, content string) {
		t.Helper()
		if err := store.InTx(ctx, "acme", func(tx *memory.Tx) error {
			_, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: user, Scope: memory.ScopeUser, Type: memory.Semantic,
				Category: memory.CatFact, Content: content, Importance: 0.5, Confidence: 0.9,
				Source: memory.SourceUser, Extractor: "test", Actor: "test"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	plonk := func(fs []memory.TermDF) float64 {
		for _, f := range fs {
			if f.Term == "plonk" {
				return f.DF
			}
		}
		return 0
	}

	// No stored row: counted in the search, learnt from its full match, a row asked for.
	r1 := newR()
	search(r1, "u1")
	if e := entry(r1, "u1"); e.stats.N != 300 || plonk(e.stats.Frequent) != 300 || e.learnt["plonk"].IsZero() {
		t.Fatalf("first search without a row: %+v", e)
	}
	asked := refreshAll(r1)
	if len(asked) != 1 || asked[0].key != (memory.StatsKey{Layer: memory.StatsMemories, Scope: memory.ScopeUser, Subject: "u1"}) {
		t.Fatalf("refreshes asked: %+v", asked)
	}

	// With the row, a retriever new to the owner prunes its first query: the frequent
	// term is known (from the row) and nothing is learnt.
	r2 := newR()
	search(r2, "u1")
	if e := entry(r2, "u1"); e.stats.N != 300 || plonk(e.stats.Frequent) != 300 || len(e.learnt) != 0 {
		t.Fatalf("first search with a stored row: %+v", e)
	}
	if asked := refreshAll(r2); len(asked) != 0 {
		t.Fatalf("a fresh row was refreshed: %+v", asked)
	}

	// An old row is still used, and refreshed in the background.
	add("u1", "plonk ptarmigan")
	clock = clock.Add(frequentTermLives*DefaultConfig().StatsCacheTTL + time.Second)
	r3 := newR()
	search(r3, "u1")
	if e := entry(r3, "u1"); e.stats.N != 300 {
		t.Fatalf("an old row is not used as it is: N %v", e.stats.N)
	}
	if asked := refreshAll(r3); len(asked) != 1 {
		t.Fatalf("an old row was not refreshed: %+v", asked)
	}
	r4 := newR()
	search(r4, "u1")
	if e := entry(r4, "u1"); e.stats.N != 301 || plonk(e.stats.Frequent) != 301 {
		t.Fatalf("after the refresh: %+v", e)
	}

	// A small owner: stored row or not, its N and mean length are counted afresh.
	search(r4, "u2")
	refreshAll(r4)
	add("u2", "zorbel quelbel")
	r5 := newR()
	search(r5, "u2")
	if e := entry(r5, "u2"); e.stats.N != 31 {
		t.Fatalf("small owner: N %v, want 31 (counted, not the stored 30)", e.stats.N)
	}
	if len(r5.refresher.jobs) != 0 {
		t.Fatalf("a fresh small owner's row was refreshed")
	}
}
