package retriever_test

import (
	"testing"

	"github.com/engramhq/engram/retriever"
)

// TestSearchModes checks that keyword and vector modes each keep only their side,
// so the evaluation can measure what the hybrid adds on the same stored data.
func TestSearchModes(t *testing.T) {
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
	e := newEnv(t, emb, nil)
	kw := e.add("acme", mem{user: "u", content: "Order ORD-7 shipped"})
	vec := e.add("acme", mem{user: "u", content: "The package is on its way to Berlin"})
	tests := []struct {
		mode       string
		query      string
		want, miss string
	}{
		{retriever.ModeKeyword, "where is ORD-7", kw.ID.String(), vec.ID.String()},
		{retriever.ModeVector, "parcel location please", vec.ID.String(), kw.ID.String()},
	}
	for _, tt := range tests {
		resp := e.search("acme", retriever.SearchRequest{Query: tt.query, UserID: "u", Mode: tt.mode})
		got := ids(resp.Results)
		if indexOf(resp.Results, tt.want) < 0 || indexOf(resp.Results, tt.miss) >= 0 {
			t.Errorf("mode %s: got %v, want %s and not %s", tt.mode, got, tt.want, tt.miss)
		}
	}
	if _, err := e.r.Search(testCtx(t), "acme", retriever.SearchRequest{Query: "x", UserID: "u", Mode: "psychic"}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}
