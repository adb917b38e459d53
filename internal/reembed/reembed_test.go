package reembed_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/reembed"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/google/uuid"
)

const modelB = "model-b"

// fixture is a store with memories of two tenants embedded under the local hashing
// model (model A), and a fake endpoint serving model B.
type fixture struct {
	store *memory.Store
	fake  *fakeopenai.Server
	embB  *llm.OpenAIEmbedder
	ids   map[string][]uuid.UUID // tenant/user → memory ids
	// wanted is how many memories of each tenant should get a model B vector
	// (active, pending, archived): every seeded one but the superseded.
	wanted map[string]int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{store: pgtest.Store(t), fake: fakeopenai.New(t), ids: map[string][]uuid.UUID{}, wanted: map[string]int64{}}
	hash, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, o := range []struct {
		tenant, user string
		n            int
	}{{"t1", "ana", 5}, {"t1", "ben", 3}, {"t2", "cy", 4}} {
		for i := range o.n {
			id := pgtest.SeedEpisode(t, ctx, f.store, hash, o.tenant, o.user, fmt.Sprintf("%s planted %d tulips in row %d", o.user, i+2, i), at.Add(time.Duration(i)*time.Hour))
			f.ids[o.tenant+"/"+o.user] = append(f.ids[o.tenant+"/"+o.user], id)
		}
		f.wanted[o.tenant] += int64(o.n)
	}
	// One pending, one archived (both still wanted) and one superseded (history).
	ana := f.ids["t1/ana"]
	pool := f.store.Pool()
	pgtest.Exec(t, pool, "t1", "UPDATE memories SET status = 'pending' WHERE id = $1", ana[0])
	pgtest.Exec(t, pool, "t1", "UPDATE memories SET status = 'archived' WHERE id = $1", ana[1])
	pgtest.Exec(t, pool, "t1", "UPDATE memories SET status = 'superseded' WHERE id = $1", ana[2])
	f.wanted["t1"]--
	f.embB, err = llm.NewOpenAIEmbedder(llm.EmbedConfig{BaseURL: f.fake.URL(), APIKey: "k", Model: modelB, BatchSize: 2,
		InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) vectorsB(t *testing.T, tenant string) int64 {
	t.Helper()
	return int64(pgtest.Count(t, f.store.Pool(), tenant, "SELECT count(*) FROM memory_embeddings WHERE model = $1", modelB))
}

// embeddedTexts is every text sent to the fake, in order.
func (f *fixture) embeddedTexts() []string {
	var out []string
	for _, r := range f.fake.EmbedRequests() {
		switch in := r.Input.(type) {
		case string:
			out = append(out, in)
		case []any:
			for _, s := range in {
				out = append(out, s.(string))
			}
		}
	}
	return out
}

func TestReembedFillsTheNewModelOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	opts := reembed.Options{BatchSize: 3}

	dry, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	total := f.wanted["t1"] + f.wanted["t2"]
	if dry.Memories.Missing != total || dry.Owners != 3 || dry.Tenants != 2 || len(f.fake.EmbedRequests()) != 0 || f.vectorsB(t, "t1") != 0 {
		t.Fatalf("dry run: %+v, %d requests", dry, len(f.fake.EmbedRequests()))
	}

	rep, err := reembed.Run(ctx, f.store, f.embB, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Missing != total || rep.Memories.Embedded != total || rep.Memories.Changed != 0 || rep.Memories.Failed != 0 {
		t.Fatalf("run: %+v", rep.Memories)
	}
	if b, a := rep.Before.Memories, rep.After.Memories; b.Total != total || b.For(modelB) != 0 || b.For(llm.HashModel) != total ||
		a.For(modelB) != total || reembed.Ratio(a, modelB) != 1 {
		t.Fatalf("coverage before %+v, after %+v", b, a)
	}
	for tenant, want := range f.wanted {
		if got := f.vectorsB(t, tenant); got != want {
			t.Errorf("tenant %s: %d model B vectors, want %d", tenant, got, want)
		}
	}
	superseded := f.ids["t1/ana"][2]
	if n := pgtest.Count(t, f.store.Pool(), "t1", "SELECT count(*) FROM memory_embeddings WHERE memory_id = $1 AND model = $2", superseded, modelB); n != 0 {
		t.Error("the superseded memory was embedded")
	}
	// Each memory was sent once; no batch was larger than asked for.
	texts := f.embeddedTexts()
	if int64(len(texts)) != total {
		t.Errorf("%d texts sent, want %d", len(texts), total)
	}
	for _, r := range f.fake.EmbedRequests() {
		if in, ok := r.Input.([]any); ok && len(in) > 2 {
			t.Errorf("a request of %d texts: the embedder's batch is 2", len(in))
		}
	}

	// Idempotent: a second run finds nothing and calls nothing.
	before := len(f.fake.EmbedRequests())
	again, err := reembed.Run(ctx, f.store, f.embB, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Memories.Missing != 0 || again.Memories.Embedded != 0 || again.Owners != 0 || len(f.fake.EmbedRequests()) != before {
		t.Fatalf("second run: %+v, %d new requests", again, len(f.fake.EmbedRequests())-before)
	}
}

func TestReembedScopes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	ben := "ben"
	rep, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t1", User: &ben})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Embedded != 3 || rep.Before.Memories.Total != 3 || f.vectorsB(t, "t1") != 3 || f.vectorsB(t, "t2") != 0 {
		t.Fatalf("--tenant t1 --user ben: %+v, t1 %d, t2 %d", rep, f.vectorsB(t, "t1"), f.vectorsB(t, "t2"))
	}
	rep, err = reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Embedded != f.wanted["t2"] || f.vectorsB(t, "t2") != f.wanted["t2"] || f.vectorsB(t, "t1") != 3 {
		t.Fatalf("--tenant t2: %+v", rep)
	}
	// --turns: each seeded memory came from one stored turn.
	rep, err = reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t2", Turns: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns == nil || rep.Turns.Embedded != 4 || rep.Memories.Embedded != 0 || rep.After.Turns.For(modelB) != 4 || rep.After.Turns.Total != 4 {
		t.Fatalf("--turns: %+v, turns %+v", rep, rep.Turns)
	}
	if n := pgtest.Count(t, f.store.Pool(), "t2", "SELECT count(*) FROM turn_embeddings WHERE model = $1", modelB); n != 4 {
		t.Errorf("%d turn vectors stored, want 4", n)
	}
	if _, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "bad tenant!"}); err == nil {
		t.Error("an invalid tenant was accepted")
	}
}

// TestReembedResumes: a job cancelled part-way keeps what it stored, and the rerun
// embeds only the rest: no text is sent twice.
func TestReembedResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	total := f.wanted["t1"] + f.wanted["t2"]
	_, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{BatchSize: 2, Progress: func(p reembed.Progress) {
		if p.Done >= 4 {
			cancel() // Ctrl-C after two batches
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	stored := f.vectorsB(t, "t1") + f.vectorsB(t, "t2")
	if stored != 4 {
		t.Fatalf("%d vectors stored before the interruption, want 4", stored)
	}
	rep, err := reembed.Run(context.Background(), f.store, f.embB, reembed.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Missing != total-4 || rep.Memories.Embedded != total-4 || reembed.Ratio(rep.After.Memories, modelB) != 1 {
		t.Fatalf("resumed run: %+v", rep.Memories)
	}
	texts := f.embeddedTexts()
	sorted := slices.Clone(texts)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(texts) {
		t.Errorf("a text was embedded twice across the two runs: %v", texts)
	}
}

// TestReembedHonoursRateLimitsAndOutages: a 429 with Retry-After is waited out by the
// client; an outage longer than the client's retries is waited out by the job; a
// text the model refuses is skipped and counted, the others still embedded.
func TestReembedHonoursRateLimitsAndOutages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.fake.QueueEmbed(
		fakeopenai.Reply{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After-Ms": "20"}},
		fakeopenai.Reply{Status: http.StatusServiceUnavailable}, fakeopenai.Reply{Status: http.StatusServiceUnavailable},
		fakeopenai.Reply{Status: http.StatusServiceUnavailable}, fakeopenai.Reply{Status: http.StatusServiceUnavailable},
		fakeopenai.Reply{Status: http.StatusServiceUnavailable}, fakeopenai.Reply{Status: http.StatusServiceUnavailable},
	)
	noRetry, err := llm.NewOpenAIEmbedder(llm.EmbedConfig{BaseURL: f.fake.URL(), APIKey: "k", Model: modelB, MaxRetries: 1,
		InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := reembed.Run(ctx, f.store, noRetry, reembed.Options{Tenant: "t2", OutageWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Embedded != f.wanted["t2"] {
		t.Fatalf("after a rate limit and an outage: %+v", rep.Memories)
	}
	if n := len(f.fake.EmbedRequests()); n != 8 {
		t.Errorf("%d requests, want 7 refused and 1 answered", n)
	}

	// t1/ben: the batch is refused (400), then the first text alone; the rest are
	// embedded one by one.
	f.fake.QueueEmbed(fakeopenai.Reply{Status: http.StatusBadRequest, Content: "input too long"},
		fakeopenai.Reply{Status: http.StatusBadRequest, Content: "input too long"})
	ben := "ben"
	rep, err = reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t1", User: &ben})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories.Embedded != 2 || rep.Memories.Failed != 1 {
		t.Fatalf("with one refused text: %+v", rep.Memories)
	}

	// A model that refuses everything (a wrong model name, say) ends the job.
	// ana has 4 memories to embed: one batch request, then 4 single ones.
	for range 5 {
		f.fake.QueueEmbed(fakeopenai.Reply{Status: http.StatusNotFound})
	}
	ana := "ana"
	if _, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t1", User: &ana}); err == nil {
		t.Error("a model refusing every text did not fail the job")
	}
}

// gapCounter is the store, counting which tenants' gaps a job reads.
type gapCounter struct {
	*memory.Store
	read []string
}

func (g *gapCounter) MemoryGaps(ctx context.Context, tenant, model string, user *string) ([]memory.OwnerGap, error) {
	g.read = append(g.read, tenant)
	return g.Store.MemoryGaps(ctx, tenant, model, user)
}

// A job looks for whose memories lack a vector only in the tenants whose census
// shows a gap: the tenants of a finished model cost nothing but the census.
func TestReembedReadsGapsOnlyWhereThereAreSome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	// t2 already has every model B vector: embed it alone first.
	if _, err := reembed.Run(ctx, f.store, f.embB, reembed.Options{Tenant: "t2"}); err != nil {
		t.Fatal(err)
	}
	g := &gapCounter{Store: f.store}
	// The census the t2 job took last serves as the count before (CensusAge); the count
	// after is new, or it would still show t1's gap.
	rep, err := reembed.Run(ctx, g, f.embB, reembed.Options{CensusAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.read, []string{"t1"}) || rep.Memories.Embedded != f.wanted["t1"] || rep.Tenants != 2 {
		t.Fatalf("gaps read in %v, report %+v; want t1's only and its %d memories embedded", g.read, rep.Memories, f.wanted["t1"])
	}
	if r := reembed.Ratio(rep.After.Memories, modelB); r != 1 {
		t.Fatalf("coverage after the job %v (%+v), want 1: the count after must be new", r, rep.After.Memories)
	}
	g.read = nil
	if _, err := reembed.Run(ctx, g, f.embB, reembed.Options{}); err != nil || len(g.read) != 0 {
		t.Fatalf("a run with nothing to embed read gaps in %v (%v)", g.read, err)
	}
}
