package extractor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// failingEmbedder is a TurnEmbedder whose endpoint is down.
type failingEmbedder struct{}

func (failingEmbedder) Model() string { return "down" }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedding endpoint unavailable")
}

// TestTurnEmbeddings checks that each stored turn gets a vector when a TurnEmbedder is
// set, none when it is not, and that an embedding failure loses neither the turn nor
// the batch.
func TestTurnEmbeddings(t *testing.T) {
	t.Parallel()
	hash, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		emb          extractor.TurnEmbedder
		wantVectors  int
		wantEmbedded int64
		wantFailures int64
	}{
		{name: "embedder set", emb: hash, wantVectors: 2, wantEmbedded: 2},
		{name: "no embedder", emb: nil, wantVectors: 0},
		{name: "embedder fails", emb: failingEmbedder{}, wantVectors: 0, wantFailures: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{offline: true, turnEmb: tc.emb})
			turns := []memory.Turn{
				userTurn("e1", "s1", 0, "I moved to Lisbon last spring and I love the tram rides."),
				assistantTurn("e2", "s1", 1, "That sounds lovely."),
			}
			h.mustHandle(turns...)
			pool := h.store.Pool()
			stored := pgtest.Count(t, pool, tenant, "SELECT count(*) FROM turns")
			vectors := pgtest.Count(t, pool, tenant, `SELECT count(*) FROM turn_embeddings e JOIN turns t
				ON t.tenant = e.tenant AND t.turn_id = e.turn_id AND t.user_id = e.user_id`)
			if stored != len(turns) {
				t.Errorf("%d turns stored, want %d", stored, len(turns))
			}
			if vectors != tc.wantVectors {
				t.Errorf("%d turn vectors, want %d", vectors, tc.wantVectors)
			}
			st := h.p.Stats()
			if st.TurnsEmbedded != tc.wantEmbedded || st.TurnEmbedFailures != tc.wantFailures {
				t.Errorf("stats embedded %d, failures %d; want %d, %d", st.TurnsEmbedded, st.TurnEmbedFailures,
					tc.wantEmbedded, tc.wantFailures)
			}
			if tc.emb == nil {
				return
			}
			// A redelivery rewrites the vectors in place: still one per turn.
			h.mustHandle(turns...)
			vectors = pgtest.Count(t, pool, tenant, "SELECT count(*) FROM turn_embeddings")
			if vectors != tc.wantVectors {
				t.Errorf("after redelivery %d turn vectors, want %d", vectors, tc.wantVectors)
			}
		})
	}
}
