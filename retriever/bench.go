package retriever

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// BenchConfig configures RunBench ("engram bench search").
type BenchConfig struct {
	Memories int    // default 100,000
	Owners   int    // default 1,000
	Queries  int    // per measured path; default 500
	Tenant   string // default "engram-bench"; its memories are replaced
	// Reuse skips seeding when the tenant already holds exactly Memories memories.
	Reuse bool
	// NoHNSW skips the approximate comparison (building the index takes minutes at 1M).
	NoHNSW bool
	// KeepIndex leaves the HNSW index in place afterwards (it slows inserts ~100x).
	KeepIndex bool
	Seed      uint64
	Progress  io.Writer // progress lines; nil discards
}

// Latency summarises one measured path.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
}

// BenchResult is what RunBench measured.
type BenchResult struct {
	Memories     int     `json:"memories"`
	Owners       int     `json:"owners"`
	Queries      int     `json:"queries"`
	SeedSeconds  float64 `json:"seed_seconds"`
	SeedRowsPerS float64 `json:"seed_rows_per_second"`
	// Search and Context are the full read paths (embedding, RLS transaction, hybrid
	// query, rerank, retrieval record).
	Search  Latency `json:"search"`
	Context Latency `json:"context"`
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
}

func (c *BenchConfig) defaults() {
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

const benchHNSWIndex = "engram_bench_hnsw"

// RunBench seeds a tenant with synthetic memories embedded by the local hashing
// embedder and measures search and context latency next to an exact-scan baseline
// and, unless disabled, a partial HNSW index with iterative scans.
func RunBench(ctx context.Context, pool *pgxpool.Pool, cfg BenchConfig) (BenchResult, error) {
	cfg.defaults()
	if cfg.Owners < 1 || cfg.Memories < cfg.Owners {
		return BenchResult{}, fmt.Errorf("bench: need at least one memory per owner (memories %d, owners %d)", cfg.Memories, cfg.Owners)
	}
	res := BenchResult{Memories: cfg.Memories, Owners: cfg.Owners, Queries: cfg.Queries}
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
		err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			return tx.Raw().QueryRow(ctx, `SELECT count(*) FROM memories WHERE tenant = $1`, cfg.Tenant).Scan(&have)
		})
		if err != nil {
			return res, fmt.Errorf("bench: counting existing memories: %w", err)
		}
	}
	if have != cfg.Memories {
		start := time.Now()
		if err := benchSeed(ctx, store, emb, cfg, texts, owner); err != nil {
			return res, err
		}
		res.SeedSeconds = time.Since(start).Seconds()
		res.SeedRowsPerS = float64(cfg.Memories) / res.SeedSeconds
	} else {
		fmt.Fprintf(cfg.Progress, "reusing %d memories of tenant %s\n", have, cfg.Tenant)
	}
	for _, tbl := range []string{"memories", "memory_embeddings"} {
		if _, err := pool.Exec(ctx, "ANALYZE "+tbl); err != nil {
			return res, fmt.Errorf("bench: analyzing %s: %w", tbl, err)
		}
	}

	rcfg := DefaultConfig()
	r, err := NewRetriever(store, emb, rcfg, nil)
	if err != nil {
		return res, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = r.Run(runCtx) }()
	defer func() { stop(); wg.Wait() }()

	rng := rand.New(rand.NewPCG(cfg.Seed, 99))
	type q struct {
		user, text string
		vec        []float32
	}
	qs := make([]q, cfg.Queries)
	for i := range qs {
		m := rng.IntN(cfg.Memories)
		words := strings.Fields(texts[m])
		rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
		text := strings.Join(words[:min(len(words), 2+rng.IntN(3))], " ") + " " + corpus.word(rng.IntN(1000))
		vs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return res, err
		}
		qs[i] = q{user: owner(m), text: text, vec: vs[0]}
	}

	fmt.Fprintf(cfg.Progress, "measuring %d searches\n", cfg.Queries)
	lat := make([]time.Duration, 0, cfg.Queries)
	for _, x := range qs {
		t := time.Now()
		if _, err := r.Search(ctx, cfg.Tenant, SearchRequest{Query: x.text, UserID: x.user}); err != nil {
			return res, fmt.Errorf("bench: search: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	res.Search = summarise(lat)

	fmt.Fprintf(cfg.Progress, "measuring %d context calls\n", cfg.Queries)
	lat = lat[:0]
	for _, x := range qs {
		t := time.Now()
		if _, err := r.Context(ctx, cfg.Tenant, ContextRequest{UserID: x.user, Query: x.text}); err != nil {
			return res, fmt.Errorf("bench: context: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	res.Context = summarise(lat)

	// The recall probe reads the search's vector side without its similarity floor, so
	// it is compared like for like with the plain top-10.
	pcfg := rcfg
	pcfg.VectorMinSimilarity = -1
	probe, err := NewRetriever(store, emb, pcfg, nil)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(cfg.Progress, "measuring %d exact scans\n", cfg.Queries)
	exact := make([][]uuid.UUID, len(qs))
	lat = lat[:0]
	hits, total := 0, 0
	for i, x := range qs {
		t := time.Now()
		exact[i], err = benchTopK(ctx, store, cfg.Tenant, `SELECT memory_id FROM memory_embeddings
			WHERE tenant = $1 AND model = $2 AND user_id = $3 ORDER BY embedding <=> $4, memory_id LIMIT 10`, x.user, x.vec, "")
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t))
		// The search's own vector side, for its recall.
		qq := query{SearchRequest: SearchRequest{Query: x.text, UserID: x.user, Scope: memory.ScopeUser, TopK: 10},
			statuses: []string{"active"}, memories: true, now: time.Now().UTC()}
		side, err := benchVectorSide(ctx, store, probe, cfg.Tenant, qq, x.vec)
		if err != nil {
			return res, err
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
	if _, err := pool.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+benchHNSWIndex+` ON memory_embeddings
		USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE model = 'engram-hash-v1'`); err != nil {
		return res, fmt.Errorf("bench: building the HNSW index: %w", err)
	}
	res.HNSWBuildSeconds = time.Since(t).Seconds()
	if !cfg.KeepIndex {
		defer func() {
			if _, err := pool.Exec(context.WithoutCancel(ctx), `DROP INDEX IF EXISTS `+benchHNSWIndex); err != nil {
				fmt.Fprintf(cfg.Progress, "dropping the HNSW index: %v\n", err)
			}
		}()
	}
	// Does the search query stay on its exact plan now that an HNSW index exists?
	err = store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
		qq := query{SearchRequest: SearchRequest{Query: qs[0].text, UserID: qs[0].user, Scope: memory.ScopeUser, TopK: 10},
			statuses: []string{"active"}, memories: true, now: time.Now().UTC()}
		plan, err := tx.ExplainMemoryCandidates(ctx, r.memorySearch(qq, qs[0].vec, 50))
		if err != nil {
			return err
		}
		for _, l := range plan {
			if strings.Contains(l, benchHNSWIndex) {
				res.SearchUsesHNSW = true
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("bench: explaining the search: %w", err)
	}
	// With the owner's B-tree available the planner may sort the owner's rows exactly
	// instead; forbidding the sort leaves the HNSW index as the only ordered path.
	const hnswSetup = `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
		set_config('hnsw.ef_search', '40', true), set_config('enable_sort', 'off', true)`
	fmt.Fprintf(cfg.Progress, "measuring %d HNSW searches\n", cfg.Queries)
	lat = lat[:0]
	hits, total = 0, 0
	for i, x := range qs {
		t := time.Now()
		got, err := benchTopK(ctx, store, cfg.Tenant, `SELECT memory_id FROM memory_embeddings
			WHERE tenant = $1 AND model = $2 AND user_id = $3
			ORDER BY embedding::vector(384) <=> $4::vector(384) LIMIT 10`, x.user, x.vec,
			hnswSetup)
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

func benchVectorSide(ctx context.Context, store *memory.Store, r *Retriever, tenant string, q query, vec []float32) ([]uuid.UUID, error) {
	var out []uuid.UUID
	err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		hits, err := tx.MemoryCandidates(ctx, r.memorySearch(q, vec, 10))
		if err != nil {
			return err
		}
		type hit struct {
			id   uuid.UUID
			rank int64
		}
		var hs []hit
		for _, h := range hits {
			if h.VectorRank != 0 {
				hs = append(hs, hit{h.Memory.ID, h.VectorRank})
			}
		}
		slices.SortFunc(hs, func(a, b hit) int { return int(a.rank - b.rank) })
		for _, h := range hs {
			out = append(out, h.id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bench: the search's vector side: %w", err)
	}
	return out, nil
}

func benchTopK(ctx context.Context, store *memory.Store, tenant, sql, user string, vec []float32, setup string) ([]uuid.UUID, error) {
	var out []uuid.UUID
	err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		if setup != "" {
			if _, err := tx.Raw().Exec(ctx, setup); err != nil {
				return err
			}
		}
		rows, err := tx.Raw().Query(ctx, sql, tenant, llm.HashModel, user, pgvector.NewVector(vec))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
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

// benchSeed replaces the tenant's memories with cfg.Memories synthetic ones. COPY
// cannot write to a table under row-level security, so each batch is copied into a
// temporary table and moved with INSERT ... SELECT, inside a transaction with the
// tenant set, so the policy still checks every row.
func benchSeed(ctx context.Context, store *memory.Store, emb llm.Embedder, cfg BenchConfig, texts []string, owner func(int) string) error {
	fmt.Fprintf(cfg.Progress, "removing earlier memories of tenant %s\n", cfg.Tenant)
	if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
		for _, sql := range []string{`DELETE FROM memories WHERE tenant = $1`, `DELETE FROM retrievals WHERE tenant = $1`} {
			if _, err := tx.Raw().Exec(ctx, sql, cfg.Tenant); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("bench: clearing tenant %s: %w", cfg.Tenant, err)
	}
	const batch = 5000
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	types := []string{"semantic", "episodic", "procedural"}
	cats := []string{"preference", "fact", "constraint", "event", "skill", "decision", "profile", "goal"}
	now := time.Now().UTC()
	start := time.Now()
	for lo := 0; lo < len(texts); lo += batch {
		hi := min(lo+batch, len(texts))
		vecs, err := embedParallel(ctx, emb, texts[lo:hi])
		if err != nil {
			return fmt.Errorf("bench: embedding: %w", err)
		}
		mrows := make([][]any, 0, hi-lo)
		erows := make([][]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			at := now.Add(-time.Duration(rng.IntN(365*24)) * time.Hour)
			mrows = append(mrows, []any{id, owner(i), types[rng.IntN(len(types))], cats[rng.IntN(len(cats))], texts[i],
				memory.SearchText(texts[i]), float32(rng.Float64()), float32(0.5 + rng.Float64()/2), at})
			erows = append(erows, []any{id, owner(i), pgvector.NewVector(vecs[i-lo])})
		}
		err = store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			t := tx.Raw()
			if _, err := t.Exec(ctx, `CREATE TEMP TABLE bench_m (id uuid, user_id text, type text, category text,
				content text, search_text text, importance real, confidence real, at timestamptz) ON COMMIT DROP;
				CREATE TEMP TABLE bench_e (id uuid, user_id text, embedding vector) ON COMMIT DROP`); err != nil {
				return err
			}
			if _, err := t.CopyFrom(ctx, pgx.Identifier{"bench_m"}, []string{"id", "user_id", "type", "category",
				"content", "search_text", "importance", "confidence", "at"}, pgx.CopyFromRows(mrows)); err != nil {
				return err
			}
			if _, err := t.CopyFrom(ctx, pgx.Identifier{"bench_e"}, []string{"id", "user_id", "embedding"},
				pgx.CopyFromRows(erows)); err != nil {
				return err
			}
			if _, err := t.Exec(ctx, `INSERT INTO memories (tenant, id, user_id, scope, type, category, content,
				search_text, importance, confidence, status, valid_from, recorded_at, updated_at, last_confirmed_at, source)
				SELECT $1, id, user_id, 'user', type, category, content, search_text, importance, confidence, 'active',
					at, at, at, at, 'user' FROM bench_m`, cfg.Tenant); err != nil {
				return err
			}
			_, err := t.Exec(ctx, `INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding)
				SELECT $1, id, $2, $3, user_id, embedding FROM bench_e`, cfg.Tenant, emb.Model(), emb.Dims())
			return err
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
