package retriever_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/reembed"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/retriever"
)

// topicVector is a controlled embedding: one dimension per topic. Model A and model
// B put the topics on different dimensions (and lengths), as two real models would.
func topicVector(model, text string) []float32 {
	topics := []string{"tea|chamomile|infusion", "bike|brompton", "peanut", "chess"}
	dims, shift := 6, 0
	if model == "model-a" {
		dims, shift = 8, 3
	}
	v := make([]float32, dims)
	v[dims-1] = 0.05 // no zero vectors
	for i, t := range topics {
		for _, w := range strings.Split(t, "|") {
			if strings.Contains(strings.ToLower(text), w) {
				v[(i+shift)%dims] = 1
			}
		}
	}
	return v
}

// TestSearchWhileTheModelChanges: memories written with model A stay findable by
// keyword once model B is configured, ranked on their keyword side instead of sinking
// below memories that do have a B vector, and the responses say how much of the owner
// is covered; after re-embedding they are found by vector too and coverage is 1.
func TestSearchWhileTheModelChanges(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.New(t)
	srv.SetEmbedFunc(topicVector)
	newEmb := func(model string) llm.Embedder {
		emb, err := llm.NewOpenAIEmbedder(llm.EmbedConfig{BaseURL: srv.URL(), Model: model, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return emb
	}
	embA, embB := newEmb("model-a"), newEmb("model-b")
	e := newEnv(t, embA, nil)
	old := time.Now().Add(-30 * 24 * time.Hour)
	written := map[string]string{} // content → id
	for i, c := range []string{"Ana drinks oolong tea every morning", "Ana rides a red Brompton bike to work", "Ana is allergic to peanuts"} {
		written[c] = e.add("t1", mem{user: "ana", content: c, validFrom: old.Add(time.Duration(i) * time.Hour)}).ID.String()
	}
	// Model B is configured: the resolver embeds new memories with it.
	eB := &env{t: t, ctx: e.ctx, store: e.store, pool: e.pool, emb: embB}
	const infusion = "Ana enjoys chamomile infusions after dinner"
	written[infusion] = eB.add("t1", mem{user: "ana", content: infusion, validFrom: time.Now().Add(-time.Hour)}).ID.String()
	cfgB := retriever.DefaultConfig()
	cfgB.CoverageCacheTTL = -1 // every search counts: the checks below follow the re-embedding at once
	rB, err := retriever.NewRetriever(e.store, embB, cfgB, nil)
	if err != nil {
		t.Fatal(err)
	}
	eB.r = rB

	check := func(label string, wantCoverage float64, vectorFinds bool) {
		t.Helper()
		for _, q := range []struct{ query, want string }{
			{"oolong tea", "Ana drinks oolong tea every morning"},
			{"Brompton bike", "Ana rides a red Brompton bike to work"},
			{"peanuts allergy", "Ana is allergic to peanuts"},
		} {
			resp := eB.search("t1", retriever.SearchRequest{Query: q.query, UserID: "ana"})
			if len(resp.Results) == 0 || resp.Results[0].ID != written[q.want] {
				t.Errorf("%s: hybrid %q: %v, want %q first", label, q.query, contents(resp.Results), q.want)
			}
			if resp.VectorCoverage == nil || *resp.VectorCoverage != wantCoverage {
				t.Errorf("%s: hybrid %q: vector_coverage %v, want %v", label, q.query, resp.VectorCoverage, wantCoverage)
			}
			vec := eB.search("t1", retriever.SearchRequest{Query: q.query, UserID: "ana", Mode: retriever.ModeVector})
			if found := indexOf(vec.Results, written[q.want]) >= 0; found != vectorFinds {
				t.Errorf("%s: vector mode %q: found %v, want %v (%v)", label, q.query, found, vectorFinds, contents(vec.Results))
			}
		}
		kw := eB.search("t1", retriever.SearchRequest{Query: "oolong tea", UserID: "ana", Mode: retriever.ModeKeyword})
		if kw.VectorCoverage != nil {
			t.Errorf("%s: keyword mode reports vector_coverage %v", label, *kw.VectorCoverage)
		}
		cx, err := eB.r.Context(e.ctx, "t1", retriever.ContextRequest{Query: "oolong tea", UserID: "ana"})
		if err != nil {
			t.Fatal(err)
		}
		if cx.VectorCoverage == nil || *cx.VectorCoverage != wantCoverage || !strings.Contains(cx.Text, "oolong tea") {
			t.Errorf("%s: context: vector_coverage %v, want %v; text %q", label, cx.VectorCoverage, wantCoverage, cx.Text)
		}
	}
	// One of ana's four memories has a model B vector.
	check("before re-embedding", 0.25, false)

	// A coverage hint saying complete skips the count (1 is reported); one saying
	// incomplete counts exactly.
	for complete, want := range map[bool]float64{true: 1, false: 0.25} {
		cfg := retriever.DefaultConfig()
		cfg.VectorsComplete = func(model string) bool { return complete && model == "model-b" }
		r, err := retriever.NewRetriever(e.store, embB, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := r.Search(e.ctx, "t1", retriever.SearchRequest{Query: "oolong tea", UserID: "ana"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.VectorCoverage == nil || *resp.VectorCoverage != want {
			t.Errorf("hint complete=%v: vector_coverage %v", complete, resp.VectorCoverage)
		}
	}

	// The default retriever reuses an incomplete owner count for a few seconds.
	cached, err := retriever.NewRetriever(e.store, embB, retriever.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cachedSearch := func() float64 {
		t.Helper()
		resp, err := cached.Search(e.ctx, "t1", retriever.SearchRequest{Query: "oolong tea", UserID: "ana"})
		if err != nil || resp.VectorCoverage == nil {
			t.Fatalf("search: %v, coverage %v", err, resp.VectorCoverage)
		}
		return *resp.VectorCoverage
	}
	if c := cachedSearch(); c != 0.25 {
		t.Errorf("default retriever: vector_coverage %v, want 0.25", c)
	}

	rep, err := reembed.Run(e.ctx, e.store, embB, reembed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Embedded != 3 {
		t.Fatalf("re-embedding: %+v", rep.Memories)
	}
	check("after re-embedding", 1, true)
	if c := cachedSearch(); c != 0.25 {
		t.Errorf("default retriever right after re-embedding: vector_coverage %v, want the cached 0.25", c)
	}
}

func contents(res []retriever.Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.Content)
	}
	return out
}
