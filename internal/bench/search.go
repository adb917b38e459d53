package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// SearchConfig configures RunSearch ("engram bench search").
type SearchConfig struct {
	Memories int // default 100,000
	Owners   int // default 1,000
	Queries  int // per measured path; default 500
	// Turns is the size of the turn log seeded over the owners (0: none), HeavyTurns
	// the extra turns of one heavy user (the first owner). With a turn log the search
	// reads memories and turns, context calls name a session, and the heavy user is
	// measured apart.
	Turns, HeavyTurns int
	Tenant            string // default "engram-bench"; its memories are replaced
	// Reuse skips seeding when the tenant already holds exactly Memories memories.
	Reuse bool
	// NoHNSW skips the approximate comparison (building the index takes minutes at 1M).
	NoHNSW bool
	// KeepIndex leaves the HNSW index in place afterwards (it slows inserts ~100x).
	KeepIndex bool
	Seed      uint64
	// Round numbers the repeated measurements of one seeded tenant ("bench search
	// --runs"): each round draws its own queries from the same corpus, so the rounds
	// are separate samples rather than the first one's queries again.
	Round    int
	Progress io.Writer // progress lines; nil discards
	// Explain adds the executed plans (EXPLAIN ANALYZE, BUFFERS) of the first query's
	// statements to the result.
	Explain bool
	// CPUProfile, when set, receives a CPU profile (pprof) of the measured searches and
	// context calls, seeding left out.
	CPUProfile io.Writer
	// ColdStats measures owners whose text statistics were never stored (their first
	// search since the store was created); otherwise every owner's are counted and
	// stored first, as the retriever does in the background after an owner's search.
	ColdStats bool
	// ContextTurns is the context calls' fallback to earlier unextracted turns
	// (retriever.Config.SetContextTurns: 0 turns it off).
	ContextTurns int
}

// Latency summarises one measured path.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
}

// P95Text is the p95 in ms for a table, or "–" when nothing was timed (N == 0), so a
// path a run skipped does not read as 0 ms.
func (l Latency) P95Text() string {
	if l.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", l.P95)
}

// SearchResult is what RunSearch measured.
type SearchResult struct {
	Memories     int     `json:"memories"`
	Owners       int     `json:"owners"`
	Queries      int     `json:"queries"`
	SeedSeconds  float64 `json:"seed_seconds"`
	SeedRowsPerS float64 `json:"seed_rows_per_second"`
	Turns        int     `json:"turns,omitempty"`
	HeavyTurns   int     `json:"heavy_turns,omitempty"`
	TurnSeedSecs float64 `json:"turn_seed_seconds,omitempty"`
	// StatsSeconds is how long counting and storing every owner's text statistics
	// took (none with ColdStats: every search is its owner's first).
	StatsSeconds float64 `json:"stats_seconds,omitempty"`
	ColdStats    bool    `json:"cold_stats,omitempty"`
	// Search and Context are the full read paths (embedding, RLS transaction, hybrid
	// query, rerank, retrieval record): Search over memories only, SearchTurns over
	// memories and turns (with a turn log), Context with the user's latest session.
	Search      Latency  `json:"search"`
	SearchTurns *Latency `json:"search_memories_turns,omitempty"`
	Context     Latency  `json:"context"`
	// HeavySearch and HeavyContext are the same for the heavy user.
	HeavySearch  *Latency `json:"heavy_search_memories_turns,omitempty"`
	HeavyContext *Latency `json:"heavy_context,omitempty"`
	// HeavyKeywordAgreement is the share of the full match's keyword top 10 of the
	// heavy user's turns (every row holding a query term, ranked by BM25) that the
	// search's keyword side returns in its top 10 with the stored frequent terms (a
	// large owner's frequent terms make no row a candidate alone: bm25Spec).
	HeavyKeywordAgreement float64 `json:"heavy_keyword_agreement_at_10,omitempty"`
	// ExactScan is the bare per-owner exact vector top-10, the baseline.
	ExactScan Latency `json:"exact_scan"`
	// SearchVectorRecall is recall@10 of the search's vector side against ExactScan
	// (1.0 by construction: it is an exact scan).
	SearchVectorRecall float64 `json:"search_vector_recall_at_10"`
	// HNSW is the approximate alternative: a partial HNSW index with iterative scans.
	HNSW             *Latency `json:"hnsw,omitempty"`
	HNSWRecall       float64  `json:"hnsw_recall_at_10,omitempty"`
	HNSWBuildSeconds float64  `json:"hnsw_build_seconds,omitempty"`
	// SearchUsesHNSW reports whether the planner put the HNSW index in the search
	// query's plan once it existed (it must not).
	SearchUsesHNSW bool `json:"search_uses_hnsw"`
	// Plans are the executed plans of the first query's statements (Explain).
	Plans map[string][]string `json:"plans,omitempty"`
}

func (c *SearchConfig) defaults() {
	if c.Memories == 0 {
		c.Memories = 100_000
	}
	if c.Owners == 0 {
		c.Owners = 1000
	}
	if c.Queries == 0 {
		c.Queries = 500
	}
	if c.Tenant == "" {
		c.Tenant = "engram-bench"
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Seed == 0 {
		c.Seed = 42
	}
}

const (
	benchHNSWIndex = "engram_bench_hnsw"
	hnswDims       = 384 // the hashing embedder's default dimensions
)

// RunSearch seeds a tenant with synthetic memories embedded by the local hashing
// embedder and measures search and context latency next to an exact-scan baseline
// and, unless disabled, a partial HNSW index with iterative scans.
func RunSearch(ctx context.Context, pool *pgxpool.Pool, cfg SearchConfig) (SearchResult, error) {
	cfg.defaults()
	if cfg.Owners < 1 || cfg.Memories < cfg.Owners {
		return SearchResult{}, fmt.Errorf("bench: need at least one memory per owner (memories %d, owners %d)", cfg.Memories, cfg.Owners)
	}
	res := SearchResult{Memories: cfg.Memories, Owners: cfg.Owners, Queries: cfg.Queries}
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		return res, err
	}
	store := memory.NewStore(pool)
	corpus := newBenchCorpus(cfg.Seed)
	texts := make([]string, cfg.Memories)
	for i := range texts {
		texts[i] = corpus.sentence(i)
	}
	owner := func(i int) string { return fmt.Sprintf("bench-user-%05d", i%cfg.Owners) }

	have := 0
	if cfg.Reuse {
		var err error
		if have, err = existingMemories(ctx, store, cfg.Tenant); err != nil {
			return res, err
		}
	}
	if have != cfg.Memories {
		start := time.Now()
		if err := seedSearch(ctx, store, emb, cfg, texts, owner); err != nil {
			return res, err
		}
		res.SeedSeconds = time.Since(start).Seconds()
		res.SeedRowsPerS = float64(cfg.Memories) / res.SeedSeconds
	} else {
		fmt.Fprintf(cfg.Progress, "reusing %d memories of tenant %s\n", have, cfg.Tenant)
	}
	if err := store.AnalyzeMemories(ctx); err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	res.Turns, res.HeavyTurns = cfg.Turns, cfg.HeavyTurns
	if cfg.Turns > 0 || cfg.HeavyTurns > 0 {
		haveTurns := -1
		if cfg.Reuse {
			err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
				var err error
				haveTurns, err = tx.CountTurns(ctx)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("bench: counting existing turns: %w", err)
			}
		}
		if haveTurns != cfg.Turns+cfg.HeavyTurns {
			start := time.Now()
			if err := seedTurns(ctx, store, cfg, corpus, owner); err != nil {
				return res, err
			}
			res.TurnSeedSecs = time.Since(start).Seconds()
		} else {
			fmt.Fprintf(cfg.Progress, "reusing %d turns of tenant %s\n", haveTurns, cfg.Tenant)
		}
		if err := store.AnalyzeTurns(ctx); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
	}

	res.ColdStats = cfg.ColdStats
	if err := storeTextStats(ctx, store, cfg, owner, &res); err != nil {
		return res, err
	}

	rcfg := retriever.DefaultConfig()
	// Every seeded memory has a vector in the embedder's model (CopyMemories writes
	// them together): the steady state engram serve learns from its periodic count
	// (internal/reembed's tracker), in which a search skips the per-owner coverage count.
	rcfg.VectorsComplete = func(model string) bool { return model == emb.Model() }
	rcfg.SetContextTurns(cfg.ContextTurns)
	r, err := retriever.NewRetriever(store, emb, rcfg, nil)
	if err != nil {
		return res, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = r.Run(runCtx) }()
	defer func() { stop(); wg.Wait() }()

	rng := rand.New(rand.NewPCG(cfg.Seed, 99+uint64(cfg.Round)))
	type q struct {
		user, text string
		vec        []float32
	}
	// A query is a few words of one of the owner's memories and one word of the
	// corpus; pick chooses the memory.
	makeQueries := func(pick func() int) ([]q, error) {
		qs := make([]q, cfg.Queries)
		for i := range qs {
			m := pick()
			words := strings.Fields(texts[m])
			rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
			text := strings.Join(words[:min(len(words), 2+rng.IntN(3))], " ") + " " + corpus.word(rng.IntN(1000))
			vs, err := emb.Embed(ctx, []string{text})
			if err != nil {
				return nil, err
			}
			qs[i] = q{user: owner(m), text: text, vec: vs[0]}
		}
		return qs, nil
	}
	qs, err := makeQueries(func() int { return rng.IntN(cfg.Memories) })
	if err != nil {
		return res, err
	}

	if cfg.Explain {
		res.Plans = map[string][]string{}
		sp, err := r.ExplainAnalyzeSearch(ctx, cfg.Tenant, retriever.SearchRequest{Query: qs[0].text, UserID: qs[0].user},
			max(rcfg.Candidates, 2*rcfg.DefaultTopK))
		if err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		res.Plans["search memories"] = sp.Memories
		if cfg.Turns > 0 || cfg.HeavyTurns > 0 {
			tp, err := r.ExplainAnalyzeSearch(ctx, cfg.Tenant, retriever.SearchRequest{Query: qs[0].text, UserID: owner(0),
				Layers: []string{retriever.LayerTurns}}, rcfg.Candidates)
			if err != nil {
				return res, fmt.Errorf("bench: %w", err)
			}
			res.Plans["search turns (heavy user)"] = tp.Turns
		}
		cp, err := r.ExplainAnalyzeSearch(ctx, cfg.Tenant, retriever.SearchRequest{Query: qs[0].text, UserID: qs[0].user},
			rcfg.ContextCandidates)
		if err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		res.Plans["context memories"] = cp.Memories
	}
	stopProfile, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		return res, err
	}
	defer stopProfile()
	fmt.Fprintf(cfg.Progress, "measuring %d searches\n", cfg.Queries)
	lat := make([]time.Duration, 0, cfg.Queries)
	for _, x := range qs {
		t := time.Now()
		if _, err := r.Search(ctx, cfg.Tenant, retriever.SearchRequest{Query: x.text, UserID: x.user}); err != nil {
			return res, fmt.Errorf("bench: search: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	res.Search = summarise(lat)

	withTurns := cfg.Turns > 0 || cfg.HeavyTurns > 0
	searchTurns := func(qs []q) (Latency, error) {
		lat := make([]time.Duration, 0, len(qs))
		for _, x := range qs {
			t := time.Now()
			if _, err := r.Search(ctx, cfg.Tenant, retriever.SearchRequest{Query: x.text, UserID: x.user,
				Layers: []string{retriever.LayerMemories, retriever.LayerTurns}}); err != nil {
				return Latency{}, fmt.Errorf("bench: search: %w", err)
			}
			lat = append(lat, time.Since(t))
		}
		return summarise(lat), nil
	}
	contexts := func(qs []q) (Latency, error) {
		lat := make([]time.Duration, 0, len(qs))
		for _, x := range qs {
			req := retriever.ContextRequest{UserID: x.user, Query: x.text}
			if withTurns {
				req.SessionID = latestSession(x.user)
			}
			t := time.Now()
			if _, err := r.Context(ctx, cfg.Tenant, req); err != nil {
				return Latency{}, fmt.Errorf("bench: context: %w", err)
			}
			lat = append(lat, time.Since(t))
		}
		return summarise(lat), nil
	}
	if withTurns {
		fmt.Fprintf(cfg.Progress, "measuring %d searches over memories and turns\n", cfg.Queries)
		l, err := searchTurns(qs)
		if err != nil {
			return res, err
		}
		res.SearchTurns = &l
	}
	fmt.Fprintf(cfg.Progress, "measuring %d context calls\n", cfg.Queries)
	if res.Context, err = contexts(qs); err != nil {
		return res, err
	}
	var heavyTexts []string
	if cfg.HeavyTurns > 0 {
		perOwner := cfg.Memories / cfg.Owners
		hq, err := makeQueries(func() int { return rng.IntN(perOwner) * cfg.Owners })
		if err != nil {
			return res, err
		}
		for _, x := range hq {
			heavyTexts = append(heavyTexts, x.text)
		}
		fmt.Fprintf(cfg.Progress, "measuring %d searches and context calls of the heavy user\n", cfg.Queries)
		hs, err := searchTurns(hq)
		if err != nil {
			return res, err
		}
		hc, err := contexts(hq)
		if err != nil {
			return res, err
		}
		res.HeavySearch, res.HeavyContext = &hs, &hc
	}
	stopProfile()
	if cfg.HeavyTurns > 0 {
		fmt.Fprintf(cfg.Progress, "comparing the heavy user's keyword top 10 with the full match\n")
		var err error
		if res.HeavyKeywordAgreement, err = keywordAgreement(ctx, store, cfg.Tenant, owner(0), heavyTexts); err != nil {
			return res, err
		}
	}

	// The recall probe reads the search's vector side without its similarity floor, so
	// it is compared like for like with the plain top-10.
	pcfg := rcfg
	pcfg.VectorMinSimilarity = -1
	probe, err := retriever.NewRetriever(store, emb, pcfg, nil)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(cfg.Progress, "measuring %d exact scans\n", cfg.Queries)
	exact := make([][]uuid.UUID, len(qs))
	lat = lat[:0]
	hits, total := 0, 0
	for i, x := range qs {
		t := time.Now()
		exact[i], err = exactTopK(ctx, store, cfg.Tenant, x.user, x.vec)
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t))
		// The search's own vector side, for its recall.
		side, err := probe.VectorSide(ctx, cfg.Tenant, probeRequest(x.text, x.user), x.vec, 10)
		if err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		hits += overlap(exact[i], side)
		total += len(exact[i])
	}
	res.ExactScan = summarise(lat)
	if total > 0 {
		res.SearchVectorRecall = float64(hits) / float64(total)
	}

	if cfg.NoHNSW {
		return res, nil
	}
	fmt.Fprintf(cfg.Progress, "building the partial HNSW index (this takes a while)\n")
	t := time.Now()
	if err := store.CreateVectorIndex(ctx, benchHNSWIndex, llm.HashModel, hnswDims); err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	res.HNSWBuildSeconds = time.Since(t).Seconds()
	if !cfg.KeepIndex {
		defer func() {
			if err := store.DropIndex(context.WithoutCancel(ctx), benchHNSWIndex); err != nil {
				fmt.Fprintf(cfg.Progress, "dropping the HNSW index: %v\n", err)
			}
		}()
	}
	// Does the search query stay on its exact plan now that an HNSW index exists?
	plan, err := r.ExplainMemorySearch(ctx, cfg.Tenant, probeRequest(qs[0].text, qs[0].user), qs[0].vec, 50)
	if err != nil {
		return res, fmt.Errorf("bench: explaining the search: %w", err)
	}
	for _, l := range plan {
		if strings.Contains(l, benchHNSWIndex) {
			res.SearchUsesHNSW = true
		}
	}
	// The HNSW path forbids the exact sort for its transaction (memory.Tx.HNSWNearest):
	// otherwise the planner may sort the owner's rows exactly through its B-tree.
	fmt.Fprintf(cfg.Progress, "measuring %d HNSW searches\n", cfg.Queries)
	lat = lat[:0]
	hits, total = 0, 0
	for i, x := range qs {
		t := time.Now()
		got, err := hnswTopK(ctx, store, cfg.Tenant, x.user, x.vec)
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t))
		hits += overlap(exact[i], got)
		total += len(exact[i])
	}
	h := summarise(lat)
	res.HNSW = &h
	if total > 0 {
		res.HNSWRecall = float64(hits) / float64(total)
	}
	return res, nil
}

// probeRequest is the search whose candidate query the probes read: the owner's
// active memories, top 10.
func probeRequest(text, user string) retriever.SearchRequest {
	return retriever.SearchRequest{Query: text, UserID: user, Scope: memory.ScopeUser, TopK: 10}
}

// exactTopK is the bare per-owner exact vector top-10, the baseline.
func exactTopK(ctx context.Context, store *memory.Store, tenant, user string, vec []float32) ([]uuid.UUID, error) {
	var out []uuid.UUID
	err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		out, err = tx.ExactNearest(ctx, llm.HashModel, user, vec, 10)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: top-k query: %w", err)
	}
	return out, nil
}

// hnswTopK is the top-10 through the partial HNSW index, iterative relaxed-order
// scans with ef_search 40.
func hnswTopK(ctx context.Context, store *memory.Store, tenant, user string, vec []float32) ([]uuid.UUID, error) {
	var out []uuid.UUID
	err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		out, err = tx.HNSWNearest(ctx, llm.HashModel, user, vec, hnswDims, 10, 40)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: top-k query: %w", err)
	}
	return out, nil
}

func overlap(want, got []uuid.UUID) int {
	n := 0
	for _, w := range want {
		if slices.Contains(got, w) {
			n++
		}
	}
	return n
}

func summarise(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	pct := func(p float64) float64 {
		i := int(p*float64(len(s))+0.5) - 1
		i = max(0, min(i, len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return Latency{N: len(s), P50: pct(0.50), P95: pct(0.95), P99: pct(0.99)}
}

// seedSearch replaces the tenant's memories with cfg.Memories synthetic ones, bulk-loaded
// in tenant-scoped transactions of 5,000.
func seedSearch(ctx context.Context, store *memory.Store, emb llm.Embedder, cfg SearchConfig, texts []string, owner func(int) string) error {
	fmt.Fprintf(cfg.Progress, "removing earlier memories of tenant %s\n", cfg.Tenant)
	if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.DeleteTenantMemories(ctx) }); err != nil {
		return fmt.Errorf("bench: clearing tenant %s: %w", cfg.Tenant, err)
	}
	const batch = 5000
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	types := []memory.Type{memory.Semantic, memory.Episodic, memory.Procedural}
	cats := []memory.Category{memory.CatPreference, memory.CatFact, memory.CatConstraint, memory.CatEvent,
		memory.CatSkill, memory.CatDecision, memory.CatProfile, memory.CatGoal}
	now := time.Now().UTC()
	start := time.Now()
	for lo := 0; lo < len(texts); lo += batch {
		hi := min(lo+batch, len(texts))
		vecs, err := embedParallel(ctx, emb, texts[lo:hi])
		if err != nil {
			return fmt.Errorf("bench: embedding: %w", err)
		}
		ms := make([]memory.BulkMemory, 0, hi-lo)
		for i := lo; i < hi; i++ {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			at := now.Add(-time.Duration(rng.IntN(365*24)) * time.Hour)
			ms = append(ms, memory.BulkMemory{ID: id, UserID: owner(i), Type: types[rng.IntN(len(types))],
				Category: cats[rng.IntN(len(cats))], Content: texts[i],
				Importance: float64(float32(rng.Float64())), Confidence: float64(float32(0.5 + rng.Float64()/2)),
				ValidFrom: at, RecordedAt: at, Source: memory.SourceUser, Embedding: vecs[i-lo]})
		}
		err = store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: emb.Dims()})
		})
		if err != nil {
			return fmt.Errorf("bench: seeding rows %d-%d: %w", lo, hi, err)
		}
		if (hi/batch)%10 == 0 || hi == len(texts) {
			el := time.Since(start).Seconds()
			fmt.Fprintf(cfg.Progress, "seeded %d/%d memories (%.0f/s)\n", hi, len(texts), float64(hi)/el)
		}
	}
	return nil
}

// turnsPerSession is the length of a seeded session.
const turnsPerSession = 40

// latestSession is the id of the last session seedTurns wrote for user (its sessions
// are numbered from 0; 1,000 turns make 25).
func latestSession(user string) string { return user + "-s-last" }

// seedTurns replaces the tenant's turn log with cfg.Turns turns spread over the owners
// and cfg.HeavyTurns more of the first owner (the heavy user), in sessions of
// turnsPerSession alternating user and assistant turns, an hour apart, the last
// session of each user named by latestSession; COPY in transactions of 10,000.
func seedTurns(ctx context.Context, store *memory.Store, cfg SearchConfig, corpus benchCorpus, owner func(int) string) error {
	fmt.Fprintf(cfg.Progress, "removing earlier turns of tenant %s\n", cfg.Tenant)
	if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.DeleteTenantTurns(ctx) }); err != nil {
		return fmt.Errorf("bench: clearing the turns of tenant %s: %w", cfg.Tenant, err)
	}
	// Turn i of the log belongs to owner i mod Owners, as its k-th turn; the heavy
	// user's turns follow. Each user's turn count is known, so its last session is.
	total := cfg.Turns + cfg.HeavyTurns
	count := func(o int) int {
		n := cfg.Turns / cfg.Owners
		if o < cfg.Turns%cfg.Owners {
			n++
		}
		if o == 0 {
			n += cfg.HeavyTurns
		}
		return n
	}
	const batch = 10_000
	start := time.Now()
	base := time.Now().UTC().Add(-24 * 365 * time.Hour)
	roles := [2]memory.Role{memory.RoleUser, memory.RoleAssistant}
	for lo := 0; lo < total; lo += batch {
		hi := min(lo+batch, total)
		ts := make([]memory.BulkTurn, 0, hi-lo)
		for i := lo; i < hi; i++ {
			o, k := i%cfg.Owners, i/cfg.Owners
			if i >= cfg.Turns {
				o, k = 0, cfg.Turns/cfg.Owners+(i-cfg.Turns)
				if cfg.Turns%cfg.Owners > 0 {
					k++
				}
			}
			user := owner(o)
			session := fmt.Sprintf("%s-s-%d", user, k/turnsPerSession)
			if k/turnsPerSession == (count(o)-1)/turnsPerSession {
				session = latestSession(user)
			}
			ts = append(ts, memory.BulkTurn{TurnID: fmt.Sprintf("bt-%d", i), UserID: user, SessionID: session,
				Role: roles[k%2], Content: corpus.sentence(cfg.Memories + i),
				OccurredAt: base.Add(time.Duration(k) * time.Hour / 8)})
		}
		err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.CopyTurns(ctx, ts) })
		if err != nil {
			return fmt.Errorf("bench: seeding turns %d-%d: %w", lo, hi, err)
		}
		if (hi/batch)%10 == 0 || hi == total {
			el := time.Since(start).Seconds()
			fmt.Fprintf(cfg.Progress, "seeded %d/%d turns (%.0f/s)\n", hi, total, float64(hi)/el)
		}
	}
	return nil
}

func embedParallel(ctx context.Context, emb llm.Embedder, texts []string) ([][]float32, error) {
	const workers = 2
	out := make([][]float32, len(texts))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	chunk := (len(texts) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(texts))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			vs, err := emb.Embed(ctx, texts[lo:hi])
			if err != nil {
				errs[w] = err
				return
			}
			copy(out[lo:hi], vs)
		}(w, lo, hi)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// benchCorpus makes deterministic synthetic memories: topical pseudo-words so owners'
// memories cluster, a share of Chinese sentences, and order-number identifiers.
type benchCorpus struct {
	seed      uint64
	syllables []string
}

func newBenchCorpus(seed uint64) benchCorpus {
	return benchCorpus{seed: seed, syllables: strings.Fields("ka lo mi ra ten vor shi pel dun zo bra qui fen tal gor nis")}
}

const benchHan = "会议咖啡旅行预算孩子学校医院项目部署数据订单快递周末爬山音乐电影朋友家庭工作公司城市天气早餐晚饭运动跑步书籍"

func (c benchCorpus) word(i int) string {
	r := rand.New(rand.NewPCG(c.seed, uint64(i)))
	var b strings.Builder
	for j := 0; j < 2+r.IntN(2); j++ {
		b.WriteString(c.syllables[r.IntN(len(c.syllables))])
	}
	return b.String()
}

func (c benchCorpus) sentence(i int) string {
	r := rand.New(rand.NewPCG(c.seed^0x5eed, uint64(i)))
	topic := r.IntN(50)
	if r.IntN(5) == 0 {
		han := []rune(benchHan)
		var b strings.Builder
		b.WriteString("用户")
		for j := 0; j < 4+r.IntN(4); j++ {
			k := (topic*2 + r.IntN(12)) % (len(han) - 1)
			b.WriteRune(han[k])
			b.WriteRune(han[k+1])
		}
		return b.String()
	}
	words := make([]string, 0, 12)
	for j := 0; j < 6+r.IntN(6); j++ {
		words = append(words, c.word(topic*20+r.IntN(20)))
	}
	if r.IntN(10) == 0 {
		words = append(words, fmt.Sprintf("ORD-2024-%05d", r.IntN(100000)))
	}
	return "The user " + strings.Join(words, " ")
}

// storeTextStats counts and stores the text statistics of every owner's memories and
// turns, the state the retriever's background refresher keeps (an owner searched
// before), or with ColdStats removes them all (every owner's first search).
func storeTextStats(ctx context.Context, store *memory.Store, cfg SearchConfig, owner func(int) string, res *SearchResult) error {
	if cfg.ColdStats {
		fmt.Fprintf(cfg.Progress, "removing the stored text statistics: every search is its owner's first\n")
		if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.ClearTextStats(ctx) }); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		return nil
	}
	fmt.Fprintf(cfg.Progress, "counting and storing the text statistics of %d owners\n", cfg.Owners)
	start := time.Now()
	now := time.Now().UTC()
	layers := []string{memory.StatsMemories}
	if cfg.Turns > 0 || cfg.HeavyTurns > 0 {
		layers = append(layers, memory.StatsTurns)
	}
	for i := range cfg.Owners {
		err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			for _, l := range layers {
				if _, err := tx.RefreshTextStats(ctx, memory.StatsKey{Layer: l, Scope: memory.ScopeUser, Subject: owner(i)}, now, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bench: storing text statistics: %w", err)
		}
		if (i+1)%200 == 0 {
			fmt.Fprintf(cfg.Progress, "  stored the statistics of %d/%d owners\n", i+1, cfg.Owners)
		}
	}
	res.StatsSeconds = time.Since(start).Seconds()
	fmt.Fprintf(cfg.Progress, "stored the text statistics in %.1f s\n", res.StatsSeconds)
	return nil
}

// startCPUProfile starts a CPU profile into w (none when w is nil) and returns what
// stops it; stopping twice is harmless.
func startCPUProfile(w io.Writer) (stop func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	if err := pprof.StartCPUProfile(w); err != nil {
		return nil, fmt.Errorf("bench: starting the CPU profile: %w", err)
	}
	return pprof.StopCPUProfile, nil
}

// keywordAgreement is the share of the full match's keyword top 10 over user's turns
// that the keyword side with the stored statistics (as a search reads them) returns
// in its top 10, over texts.
func keywordAgreement(ctx context.Context, store *memory.Store, tenant, user string, texts []string) (float64, error) {
	found, total := 0, 0
	err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		stored, ok, err := tx.ReadTextStats(ctx, memory.StatsKey{Layer: memory.StatsTurns, Scope: memory.ScopeUser, Subject: user})
		if err != nil || !ok {
			return err
		}
		top := func(q string, stats memory.TextStats) (map[string]bool, error) {
			hits, _, err := tx.TurnCandidates(ctx, memory.TurnSearch{Query: q, UserID: user, Keyword: true, Limit: 10, Stats: &stats})
			out := map[string]bool{}
			for _, h := range hits {
				if h.KeywordRank > 0 {
					out[h.TurnID] = true
				}
			}
			return out, err
		}
		full := stored.Stats
		full.Frequent = nil
		for _, text := range texts {
			want, err := top(text, full)
			if err != nil {
				return err
			}
			got, err := top(text, stored.Stats)
			if err != nil {
				return err
			}
			for id := range want {
				total++
				if got[id] {
					found++
				}
			}
		}
		return nil
	})
	if err != nil || total == 0 {
		return 0, err
	}
	return float64(found) / float64(total), nil
}
