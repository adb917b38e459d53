package retriever_test

import (
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// addTurnWithVector stores a turn and its vector under the env's embedder, as the
// extractor pipeline does when turn embedding is on.
func (e *env) addTurnWithVector(tenant, user, session, id, content string, at time.Time) {
	e.t.Helper()
	e.addTurn(tenant, user, session, id, memory.RoleUser, content, at)
	vs, err := e.emb.Embed(e.ctx, []string{content})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
		return tx.PutTurnEmbedding(e.ctx, id, user, memory.Embedding{Model: e.emb.Model(), Vector: vs[0]})
	}); err != nil {
		e.t.Fatal(err)
	}
}

// TestTurnVectorSide checks that with EmbedTurns a turn sharing no keyword with the
// query is found through its vector, in hybrid and vector mode, only for its owner;
// keyword mode and EmbedTurns off stay keyword-only.
func TestTurnVectorSide(t *testing.T) {
	t.Parallel()
	emb := fakeEmbedder(t, func(in string) []float32 {
		switch in {
		case "Order ORD-7 shipped":
			return unit(0, 1, 0, 0, 0, 0, 0, 0) // orthogonal to the query
		case "parcel location please":
			return unit(1, 0, 0, 0, 0, 0, 0, 0)
		}
		return unit(0.9, 0.1, 0, 0, 0, 0, 0, 0) // the paraphrase is close to the query
	})
	const paraphrase = "The package is on its way to Berlin"
	at := time.Now().Add(-time.Hour)
	tests := []struct {
		name       string
		embedTurns bool
		mode       string
		query      string
		want, miss []string
	}{
		{"hybrid finds the paraphrase by vector", true, retriever.ModeHybrid, "parcel location please",
			[]string{"t-vec"}, []string{"t-kw", "t-other-user", "t-other-tenant"}},
		{"vector mode returns turns", true, retriever.ModeVector, "parcel location please",
			[]string{"t-vec"}, []string{"t-kw", "t-other-user"}},
		{"hybrid still matches keywords", true, retriever.ModeHybrid, "where is ORD-7",
			[]string{"t-kw"}, nil},
		{"keyword mode stays keyword-only", true, retriever.ModeKeyword, "parcel location please",
			nil, []string{"t-vec"}},
		{"off: keyword-only", false, retriever.ModeHybrid, "parcel location please",
			nil, []string{"t-vec"}},
		{"off: vector mode returns no turns", false, retriever.ModeVector, "parcel location please",
			nil, []string{"t-vec"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Neighbours off: t-kw and t-vec share a session, and the keyword share a
			// neighbour receives would blur the vector side this test isolates.
			e := newEnv(t, emb, func(c *retriever.Config) { c.EmbedTurns, c.TurnNeighbourWeight = tc.embedTurns, -1 })
			e.addTurnWithVector("acme", "u", "s1", "t-vec", paraphrase, at)
			e.addTurnWithVector("acme", "u", "s1", "t-kw", "Order ORD-7 shipped", at)
			e.addTurnWithVector("acme", "u2", "s1", "t-other-user", paraphrase, at)
			e.addTurnWithVector("globex", "u", "s1", "t-other-tenant", paraphrase, at)
			resp := e.search("acme", retriever.SearchRequest{Query: tc.query, UserID: "u", Mode: tc.mode,
				Layers: []string{retriever.LayerTurns}})
			for _, id := range tc.want {
				i := indexOf(resp.Results, id)
				if i < 0 {
					t.Fatalf("%s missing from %v", id, ids(resp.Results))
				}
				if r := resp.Results[i]; r.Layer != retriever.LayerTurns || r.Score <= 0 || r.Components.RRF <= 0 {
					t.Errorf("%s: %+v", id, r)
				}
			}
			for _, id := range tc.miss {
				if indexOf(resp.Results, id) >= 0 {
					t.Errorf("%s returned: %v", id, ids(resp.Results))
				}
			}
			if i := indexOf(resp.Results, "t-vec"); i >= 0 {
				c := resp.Results[i].Components
				// Ranked first on the only side that matched it: its fused score is
				// normalised against both sides that ran, so it is 1/2 in hybrid mode.
				wantRRF := 1.0
				if tc.mode == retriever.ModeHybrid {
					wantRRF = 0.5
				}
				if c.Vector < 0.9 || c.Keyword != 0 || c.RRF < wantRRF-1e-9 || c.RRF > wantRRF+1e-9 {
					t.Errorf("t-vec components %+v, want vector ≥ 0.9, no keyword, rrf %v", c, wantRRF)
				}
			}
		})
	}
}
