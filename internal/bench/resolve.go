package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// ResolveConfig sizes the resolver benchmark. Zero fields take the defaults.
type ResolveConfig struct {
	Owners      int // owners seeded with memories; default 1000
	PerOwner    int // memories per owner; default 1000
	Candidates  int // candidates resolved across owners; default 5000
	Concurrency int // resolving goroutines (and seeding transactions); default 8
	// LargeOwner is the size of the one large owner resolved separately; default
	// 10000, negative skips that phase. LargeCandidates are resolved for it by
	// LargeWorkers at once, as the worker handles a backlog of one owner (its
	// candidates then share transactions); defaults 500 and Concurrency (1: one at a
	// time, each in a transaction of its own).
	LargeOwner      int
	LargeCandidates int
	LargeWorkers    int
	// Tenant to seed into; default a fresh "bench-<random>", so runs never mix.
	Tenant string
	// Seed makes the synthetic facts repeatable; default 1.
	Seed uint64
	// Cleanup deletes the tenant's rows at the end.
	Cleanup bool
	// NoHNSW resolves the large owner by the exact scan only. Otherwise it is resolved
	// twice: by the exact scan, then, after the maintenance pass has given it its HNSW
	// index (it crosses the threshold), through the index; that needs the owner role's
	// pool (MaintainHNSW builds indexes).
	NoHNSW bool
	// Progress receives progress lines; nil is silent.
	Progress io.Writer
	// CPUProfile, when set, receives a CPU profile (pprof) of the resolving phases
	// (not of the seeding).
	CPUProfile io.Writer
}

func (c ResolveConfig) withDefaults() ResolveConfig {
	if c.Owners <= 0 {
		c.Owners = 1000
	}
	if c.PerOwner <= 0 {
		c.PerOwner = 1000
	}
	if c.Candidates <= 0 {
		c.Candidates = 5000
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.LargeOwner == 0 {
		c.LargeOwner = 10000
	}
	if c.LargeCandidates <= 0 {
		c.LargeCandidates = 500
	}
	if c.LargeWorkers <= 0 {
		c.LargeWorkers = c.Concurrency
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// ResolvePhase is the measurement of one resolving phase.
type ResolvePhase struct {
	Candidates  int            `json:"candidates"`
	Concurrency int            `json:"concurrency"`
	Seconds     float64        `json:"seconds"`
	PerSecond   float64        `json:"per_second"`
	P50Ms       float64        `json:"p50_ms"`
	P95Ms       float64        `json:"p95_ms"`
	P99Ms       float64        `json:"p99_ms"`
	Decisions   map[string]int `json:"decisions"`
	Errors      int            `json:"errors"`
	// CPU is what the phase cost the machine's cores (nil where /proc cannot say).
	CPU *CPUUse `json:"cpu,omitempty"`
}

// ResolveResult is what RunResolve measured.
type ResolveResult struct {
	Tenant         string       `json:"tenant"`
	Owners         int          `json:"owners"`
	PerOwner       int          `json:"per_owner"`
	SeededRows     int          `json:"seeded_rows"`
	SeedSeconds    float64      `json:"seed_seconds"`
	SeedRowsPerSec float64      `json:"seed_rows_per_second"`
	VacuumSeconds  float64      `json:"vacuum_seconds"`
	Across         ResolvePhase `json:"across_owners"`
	LargeOwnerSize int          `json:"large_owner_size,omitempty"`
	// Large is the large owner as production resolves it: through its HNSW index, or
	// by the exact scan with NoHNSW. LargeExact is the exact scan before the index was
	// built, the baseline (absent with NoHNSW).
	Large      *ResolvePhase `json:"large_owner,omitempty"`
	LargeExact *ResolvePhase `json:"large_owner_exact,omitempty"`
	LargeIndex *ResolveIndex `json:"large_owner_index,omitempty"`
}

// ResolveIndex is the large owner's HNSW index as the benchmark had it built, and how
// near the resolver's neighbours through it come to the exact scan's.
type ResolveIndex struct {
	Threshold       int     `json:"threshold"`
	Index           string  `json:"index"`
	Vectors         int64   `json:"vectors"` // the owner's when the build started
	BuildSeconds    float64 `json:"build_seconds"`
	M               int     `json:"m"`
	EfConstruction  int     `json:"ef_construction"`
	EfSearch        int     `json:"ef_search"`          // the index's, for searches
	ResolveEfSearch int     `json:"resolver_ef_search"` // the resolver's reads'
	// RecallAt10 is the mean share of the exact scan's 10 nearest active memories that
	// the resolver's read (ResolveReads, K 10) also returned, over RecallQueries of
	// the indexed phase's candidates, of which IndexedReads went through the index.
	RecallAt10    float64 `json:"recall_at_10"`
	RecallQueries int     `json:"recall_queries"`
	IndexedReads  int     `json:"indexed_reads"`
}

// RunResolve seeds owners that already hold memories (memories, version 1,
// hash-embedder vectors and ledger rows, bulk-loaded with COPY), then resolves synthetic candidates
// — 40% new facts, 30% restatements, 15% refinements, 15% contradictions — spread
// over the owners with Concurrency workers, and measures throughput and latency per
// candidate. Then it resolves candidates for one large owner, by the exact scan and
// through the HNSW index a maintenance pass builds for it (runLargeOwner). The pool
// must have pgvector's types registered, on a migrated database, and be the owner
// role's (memory.ConnectOwner) unless NoHNSW or the large owner is skipped; use a
// scratch database, since 1,000 × 1,000 leaves a million rows unless Cleanup.
func RunResolve(ctx context.Context, pool *pgxpool.Pool, cfg ResolveConfig) (ResolveResult, error) {
	cfg = cfg.withDefaults()
	if cfg.Tenant == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		cfg.Tenant = "bench-" + hex.EncodeToString(b[:])
	}
	if err := memory.CheckTenant(cfg.Tenant); err != nil {
		return ResolveResult{}, err
	}
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		return ResolveResult{}, err
	}
	store := memory.NewStore(pool)
	res := ResolveResult{Tenant: cfg.Tenant, Owners: cfg.Owners, PerOwner: cfg.PerOwner}
	gen := benchFacts{seed: cfg.Seed}
	p := cfg.Progress

	fmt.Fprintf(p, "seeding %d owners × %d memories into tenant %s\n", cfg.Owners, cfg.PerOwner, cfg.Tenant)
	start := time.Now()
	owners := make([]benchOwner, cfg.Owners)
	for i := range owners {
		owners[i] = benchOwner{id: fmt.Sprintf("owner-%05d", i), size: cfg.PerOwner}
	}
	if cfg.LargeOwner > 0 {
		owners = append(owners, benchOwner{id: "owner-large", size: cfg.LargeOwner})
		res.LargeOwnerSize = cfg.LargeOwner
	}
	rows, err := seedOwners(ctx, store, emb, gen, cfg.Tenant, owners, cfg.Concurrency, p)
	if err != nil {
		return res, err
	}
	res.SeededRows = rows
	res.SeedSeconds = time.Since(start).Seconds()
	res.SeedRowsPerSec = float64(rows) / res.SeedSeconds
	fmt.Fprintf(p, "seeded %d memories in %.1fs (%.0f rows/s); vacuuming and analysing\n", rows, res.SeedSeconds, res.SeedRowsPerSec)
	// A steady-state database: statistics fresh (or the planner may not use the owner
	// index) and hint bits set (or the first read of every page writes it).
	vstart := time.Now()
	if err := store.VacuumAnalyzeMemories(ctx); err != nil {
		fmt.Fprintf(p, "vacuum failed (continuing): %v\n", err)
	}
	res.VacuumSeconds = time.Since(vstart).Seconds()

	r := consolidator.NewResolver(store, emb, nil, consolidator.ResolverConfig{}, nil)
	rnd := mrand.New(mrand.NewPCG(cfg.Seed, 7))
	cands := make([]memory.Candidate, cfg.Candidates)
	for i := range cands {
		o := owners[rnd.IntN(cfg.Owners)]
		cands[i] = gen.candidate(rnd, cfg.Tenant, o, i)
	}
	fmt.Fprintf(p, "resolving %d candidates across %d owners with %d workers\n", len(cands), cfg.Owners, cfg.Concurrency)
	stopProfile, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		return res, err
	}
	defer stopProfile()
	res.Across, err = runResolvePhase(ctx, r, cands, cfg.Concurrency, p)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(p, "across owners: %.0f candidates/s, p50 %.1f ms, p95 %.1f ms\n", res.Across.PerSecond, res.Across.P50Ms, res.Across.P95Ms)

	if cfg.LargeOwner > 0 {
		if err := runLargeOwner(ctx, store, r, emb, gen, rnd, cfg, owners[len(owners)-1], &res); err != nil {
			return res, err
		}
	}
	if cfg.Cleanup {
		fmt.Fprintf(p, "deleting tenant %s\n", cfg.Tenant)
		if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.DeleteTenantMemories(ctx) }); err != nil {
			return res, fmt.Errorf("deleting the bench tenant: %w", err)
		}
		if res.LargeIndex != nil {
			// The emptied owner's index goes with the next maintenance pass: run it now.
			if _, err := store.MaintainHNSW(ctx, largeIndexConfig(cfg), nil); err != nil {
				return res, fmt.Errorf("dropping the bench owner's vector index: %w", err)
			}
		}
	}
	return res, nil
}

// largeIndexConfig is production's index configuration, with the threshold lowered to
// the large owner's size when that is smaller, so that it crosses it, for the bench
// tenant alone (the database's other tenants keep their indexes as they are).
func largeIndexConfig(cfg ResolveConfig) memory.HNSWConfig {
	return memory.HNSWConfig{Threshold: min(memory.DefaultHNSWThreshold, cfg.LargeOwner),
		M: memory.DefaultHNSWM, EfConstruction: memory.DefaultHNSWEfConstruction, Tenants: []string{cfg.Tenant}}
}

// recallQueries is how many of the indexed phase's candidates measure the recall.
const recallQueries = 100

// runLargeOwner resolves candidates for the one large owner, LargeWorkers at once: by
// the exact scan, then (unless NoHNSW) through the HNSW index a maintenance pass builds
// for it, with the recall of the resolver's neighbours through it.
func runLargeOwner(ctx context.Context, store *memory.Store, r *consolidator.Resolver, emb *llm.HashEmbedder, gen benchFacts,
	rnd *mrand.Rand, cfg ResolveConfig, large benchOwner, res *ResolveResult) error {
	p := cfg.Progress
	next := cfg.Candidates
	phase := func(what string) (*ResolvePhase, []memory.Candidate, error) {
		lc := make([]memory.Candidate, cfg.LargeCandidates)
		for i := range lc {
			lc[i] = gen.candidate(rnd, cfg.Tenant, large, next+i)
		}
		next += len(lc)
		fmt.Fprintf(p, "resolving %d candidates for one owner holding %d memories (%s)\n", len(lc), cfg.LargeOwner, what)
		ph, err := runResolvePhase(ctx, r, lc, cfg.LargeWorkers, p)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(p, "large owner (%s): %.0f candidates/s, p50 %.1f ms, p95 %.1f ms\n", what, ph.PerSecond, ph.P50Ms, ph.P95Ms)
		return &ph, lc, nil
	}
	if cfg.NoHNSW {
		var err error
		res.Large, _, err = phase("exact scan")
		return err
	}
	var err error
	if res.LargeExact, _, err = phase("exact scan"); err != nil {
		return err
	}
	hcfg := largeIndexConfig(cfg)
	fmt.Fprintf(p, "maintenance pass: owners of %d vectors and more get an HNSW index\n", hcfg.Threshold)
	rep, err := store.MaintainHNSW(ctx, hcfg, nil)
	if err != nil {
		return fmt.Errorf("bench: building the large owner's vector index (--no-hnsw skips it): %w", err)
	}
	ix := slices.IndexFunc(rep.Built, func(ix memory.HNSWOwnerIndex) bool {
		return ix.Tenant == cfg.Tenant && ix.UserID == large.id
	})
	if ix < 0 {
		return fmt.Errorf("bench: the maintenance pass built no index for the large owner (%+v)", rep)
	}
	b := rep.Built[ix]
	res.LargeIndex = &ResolveIndex{Threshold: hcfg.Threshold, Index: b.Name, Vectors: b.Rows, BuildSeconds: b.BuildSeconds,
		M: b.M, EfConstruction: b.EfConstruction, EfSearch: b.EfSearch, ResolveEfSearch: b.ResolveEfSearch()}
	fmt.Fprintf(p, "built %s for %d vectors in %.1f s\n", b.Name, b.Rows, b.BuildSeconds)
	ph, lc, err := phase("owner index")
	if err != nil {
		return err
	}
	res.Large = ph
	return measureResolveRecall(ctx, store, emb, cfg.Tenant, large.id, lc[:min(recallQueries, len(lc))], res.LargeIndex)
}

// measureResolveRecall compares the resolver's 10 nearest (ResolveReads) with the
// exact scan's (Nearest) for the candidates' texts.
func measureResolveRecall(ctx context.Context, store *memory.Store, emb *llm.HashEmbedder, tenant, user string,
	cands []memory.Candidate, ix *ResolveIndex) error {
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Content
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	var sum float64
	for _, vec := range vecs {
		q := memory.NearestQuery{UserID: user, Model: emb.Model(), Vector: vec, K: 10}
		var rd memory.ResolveRead
		var exact []memory.Neighbour
		err := store.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var err error
			if rd, err = tx.ResolveReads(ctx, memory.ResolveQuery{Nearest: q}); err != nil {
				return err
			}
			exact, err = tx.Nearest(ctx, q)
			return err
		})
		if err != nil {
			return fmt.Errorf("bench: measuring the recall of the resolver's neighbours: %w", err)
		}
		if rd.Index != "" {
			ix.IndexedReads++
		}
		got := map[uuid.UUID]bool{}
		for _, n := range rd.Nearest {
			got[n.Memory.ID] = true
		}
		hits := 0
		for _, n := range exact {
			if got[n.Memory.ID] {
				hits++
			}
		}
		if len(exact) > 0 {
			sum += float64(hits) / float64(len(exact))
		}
	}
	ix.RecallQueries = len(vecs)
	if len(vecs) > 0 {
		ix.RecallAt10 = sum / float64(len(vecs))
	}
	return nil
}

type benchOwner struct {
	id   string
	size int
}

// seedOwners bulk-loads owners' memories (memory.Tx.CopyMemories), version 1, ledger row and
// vectors included, in transactions of about 10,000 rows.
func seedOwners(ctx context.Context, store *memory.Store, emb *llm.HashEmbedder, gen benchFacts, tenant string,
	owners []benchOwner, workers int, p io.Writer) (int, error) {
	const batchRows = 10000
	type batch struct{ owners []benchOwner }
	var batches []batch
	var cur batch
	n := 0
	for _, o := range owners {
		cur.owners = append(cur.owners, o)
		n += o.size
		if n >= batchRows {
			batches = append(batches, cur)
			cur, n = batch{}, 0
		}
	}
	if len(cur.owners) > 0 {
		batches = append(batches, cur)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan batch)
	var wg sync.WaitGroup
	var seeded, ownersDone atomic.Int64
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				rows, err := seedBatch(ctx, store, emb, gen, tenant, b.owners)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				total := seeded.Add(int64(rows))
				done := ownersDone.Add(int64(len(b.owners)))
				fmt.Fprintf(p, "  seeded %d/%d owners, %d memories (%.0f rows/s)\n", done, len(owners), total,
					float64(total)/time.Since(start).Seconds())
			}
		}()
	}
feed:
	for _, b := range batches {
		select {
		case work <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return int(seeded.Load()), firstErr
	}
	return int(seeded.Load()), ctx.Err()
}

func seedBatch(ctx context.Context, store *memory.Store, emb *llm.HashEmbedder, gen benchFacts, tenant string, owners []benchOwner) (int, error) {
	var ms []memory.BulkMemory
	var texts []string
	vf := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, o := range owners {
		for j := range o.size {
			f := gen.fact(o.id, j)
			id, err := uuid.NewV7()
			if err != nil {
				return 0, err
			}
			ms = append(ms, memory.BulkMemory{ID: id, UserID: o.id, Type: memory.Semantic, Category: memory.CatPreference,
				Key: f.key, Content: f.content, Importance: 0.5, Confidence: 0.8, ValidFrom: vf,
				Source: memory.SourceUser, Extractor: "bench", ExtractorVersion: "1"})
			texts = append(texts, f.content)
		}
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	for i := range ms {
		ms[i].Embedding = vecs[i]
	}
	err = store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: emb.Dims(), VersionActor: "bench",
			LedgerPrefix: "bench-seed-"})
	})
	if err != nil {
		return 0, err
	}
	return len(ms), nil
}

func runResolvePhase(ctx context.Context, r *consolidator.Resolver, cands []memory.Candidate, workers int, p io.Writer) (ResolvePhase, error) {
	ph := ResolvePhase{Candidates: len(cands), Concurrency: workers, Decisions: map[string]int{}}
	lat := make([]time.Duration, len(cands))
	kinds := make([]consolidator.DecisionKind, len(cands))
	errs := make([]error, len(cands))
	var next, done atomic.Int64
	var wg sync.WaitGroup
	cpu0, cpuOK := sampleCPU()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cands) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				// The worker's path: one owner's candidates handled at once share a
				// transaction (consolidator.ResolveQueued).
				d, err := r.ResolveQueued(ctx, cands[i])
				lat[i], kinds[i], errs[i] = time.Since(t0), d.Kind, err
				if n := done.Add(1); n%1000 == 0 {
					fmt.Fprintf(p, "  %d/%d resolved (%.0f/s)\n", n, len(cands), float64(n)/time.Since(start).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	ph.CPU = cpuSince(cpu0, cpuOK)
	if err := ctx.Err(); err != nil {
		return ph, err
	}
	var firstErr error
	for i, err := range errs {
		if err != nil {
			ph.Errors++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ph.Decisions[string(kinds[i])]++
	}
	if ph.Errors > len(cands)/100 {
		return ph, fmt.Errorf("%d of %d candidates failed, first: %w", ph.Errors, len(cands), firstErr)
	}
	slices.Sort(lat)
	pct := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(lat)))) - 1
		return float64(lat[max(i, 0)].Microseconds()) / 1000
	}
	ph.Seconds = elapsed.Seconds()
	ph.PerSecond = float64(len(cands)) / ph.Seconds
	ph.P50Ms, ph.P95Ms, ph.P99Ms = pct(0.50), pct(0.95), pct(0.99)
	return ph, nil
}

// benchFacts generates repeatable synthetic memories in English and Chinese, with
// the restatements, refinements and contradictions the candidates need.
type benchFacts struct{ seed uint64 }

type benchFact struct {
	content, negated, refined, key string
}

var (
	benchFoodsEN  = []string{"sushi", "ramen", "tacos", "pizza", "dumplings", "pho", "curry", "paella", "falafel", "kimchi", "bagels", "risotto", "goulash", "ceviche", "croissants", "hummus", "noodles", "steak", "oysters", "tofu"}
	benchSportsEN = []string{"tennis", "squash", "chess", "football", "badminton", "golf", "basketball", "volleyball", "table tennis", "cricket", "rugby", "hockey", "baseball", "climbing", "rowing"}
	benchDaysEN   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	benchToolsEN  = []string{"Vim", "Excel", "Notion", "Figma", "Jupyter", "Slack", "Trello", "Emacs", "Photoshop", "Obsidian", "Postman", "Docker", "Terraform", "Grafana", "Tableau", "Zoom", "Anki", "Lightroom", "Blender", "Logic Pro"}
	benchTasksEN  = []string{"budgeting", "note taking", "design reviews", "data analysis", "team updates", "sprint planning", "photo editing", "language study", "infrastructure", "dashboards", "podcast editing", "3D modelling", "recipes", "travel plans", "reading lists", "invoices", "code reviews", "interviews", "research", "journaling"}
	benchCitiesEN = []string{"Lisbon", "Osaka", "Denver", "Nairobi", "Krakow", "Hanoi", "Montreal", "Seville", "Bergen", "Busan", "Tbilisi", "Cusco", "Perth", "Valencia", "Tallinn", "Zurich", "Kyoto", "Austin", "Porto", "Dublin", "Quito", "Riga", "Sapporo", "Malaga", "Oslo"}
	benchRelsEN   = []string{"sister", "brother", "manager", "landlord", "dentist", "mentor", "cousin", "neighbour", "accountant", "coach"}
	benchNamesEN  = []string{"Alice", "Bob", "Chen", "Diego", "Emma", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Marta", "Nils", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq"}
	benchFoodsZH  = []string{"火锅", "烤鸭", "小笼包", "麻辣烫", "凉皮", "螺蛳粉", "煎饼", "肠粉", "烧麦", "酸菜鱼", "羊肉串", "糖醋排骨", "红烧肉", "担担面", "热干面", "臭豆腐", "生煎", "馄饨", "卤肉饭", "米线"}
	benchPlacesZH = []string{"图书馆", "健身房", "游泳馆", "菜市场", "咖啡馆", "公园", "书店", "电影院", "博物馆", "画室", "琴房", "球馆", "茶馆", "花市", "夜市"}
	benchDaysZH   = []string{"一", "二", "三", "四", "五", "六", "日"}
	benchToolsZH  = []string{"飞书", "钉钉", "石墨文档", "印象笔记", "剪映", "企业微信", "腾讯会议", "语雀", "幕布", "滴答清单"}
	benchTasksZH  = []string{"记账", "写周报", "做笔记", "剪视频", "开会", "排日程", "写方案", "整理照片", "背单词", "做预算"}
	benchCitiesZH = []string{"成都", "西安", "厦门", "青岛", "昆明", "南京", "武汉", "长沙", "苏州", "大连", "哈尔滨", "贵阳", "桂林", "洛阳", "拉萨"}
	benchRelsZH   = []string{"表姐", "舅舅", "导师", "室友", "房东", "同桌", "教练", "邻居", "师傅", "发小"}
	benchNamesZH  = []string{"王芳", "李强", "张敏", "刘洋", "陈静", "杨帆", "赵磊", "黄丽", "周杰", "吴婷", "徐明", "孙悦", "马超", "朱琳", "胡斌"}
	benchTimesZH  = []string{"上午", "下午", "晚上", "周末", "午休时"}
	benchTimesEN  = []string{"morning", "afternoon", "evening", "weekend", "lunch break"}
)

func pick[T any](r *mrand.Rand, s []T) T { return s[r.IntN(len(s))] }

// fact is the j-th memory of an owner, the same every time. Each template combines
// three slots (1,500–10,000 combinations), so an owner's facts rarely repeat; 30%
// carry a key unique to the fact, so keyed candidates exercise the key lookup.
func (g benchFacts) fact(owner string, j int) benchFact {
	h := uint64(0)
	for _, c := range owner {
		h = h*131 + uint64(c)
	}
	r := mrand.New(mrand.NewPCG(g.seed^h, uint64(j)))
	idx := func(n int) int { return r.IntN(n) }
	var f benchFact
	t := r.IntN(10)
	var a, b, c int
	switch t {
	case 0:
		a, b, c = idx(len(benchFoodsEN)), idx(len(benchCitiesEN)), idx(len(benchNamesEN))
		base := fmt.Sprintf("orders %s when visiting %s with %s", benchFoodsEN[a], benchCitiesEN[b], benchNamesEN[c])
		f = benchFact{"The user " + base + ".", "The user no longer " + base + ".",
			"The user " + base + ", usually at lunch on " + pick(r, benchDaysEN) + "s.", ""}
	case 1:
		a, b, c = idx(len(benchSportsEN)), idx(len(benchNamesEN)), idx(len(benchDaysEN))
		base := fmt.Sprintf("plays %s with %s on %ss", benchSportsEN[a], benchNamesEN[b], benchDaysEN[c])
		f = benchFact{"The user " + base + ".", "The user no longer " + base + ".",
			"The user " + base + " at the club in " + pick(r, benchCitiesEN) + ".", ""}
	case 2:
		a, b, c = idx(len(benchToolsEN)), idx(len(benchTasksEN)), idx(len(benchTimesEN))
		base := fmt.Sprintf("uses %s for %s in the %s", benchToolsEN[a], benchTasksEN[b], benchTimesEN[c])
		f = benchFact{"The user " + base + ".", "The user no longer " + base + ".",
			"The user " + base + ", sharing the results with " + pick(r, benchNamesEN) + ".", ""}
	case 3:
		a, b, c = idx(len(benchCitiesEN)), idx(len(benchDaysEN)), idx(len(benchNamesEN))
		base := fmt.Sprintf("flies to %s every other %s to see %s", benchCitiesEN[a], benchDaysEN[b], benchNamesEN[c])
		f = benchFact{"The user " + base + ".", "The user no longer " + base + ".",
			"The user " + base + ", staying at a small hotel near the old town.", ""}
	case 4:
		a, b, c = idx(len(benchRelsEN)), idx(len(benchNamesEN)), idx(len(benchCitiesEN))
		who := fmt.Sprintf("The user's %s %s", benchRelsEN[a], benchNamesEN[b])
		f = benchFact{who + " lives in " + benchCitiesEN[c] + ".", who + " no longer lives in " + benchCitiesEN[c] + ".",
			who + " lives in " + benchCitiesEN[c] + " and works as a " + pick(r, benchTasksEN) + " consultant.", ""}
	case 5:
		a, b, c = idx(len(benchNamesZH)), idx(len(benchCitiesZH)), idx(len(benchFoodsZH))
		base := "和" + benchNamesZH[a] + "在" + benchCitiesZH[b] + "吃" + benchFoodsZH[c]
		f = benchFact{"用户喜欢" + base, "用户不再喜欢" + base + "了", "用户喜欢" + base + "，一般是周" + pick(r, benchDaysZH) + "晚上去", ""}
	case 6:
		a, b, c = idx(len(benchDaysZH)), idx(len(benchNamesZH)), idx(len(benchPlacesZH))
		base := "每周" + benchDaysZH[a] + "和" + benchNamesZH[b] + "去" + benchPlacesZH[c]
		f = benchFact{"用户" + base, "用户不再" + base + "了", "用户" + base + "，一般待两个小时左右", ""}
	case 7:
		a, b, c = idx(len(benchNamesZH)), idx(len(benchToolsZH)), idx(len(benchTasksZH))
		base := "和" + benchNamesZH[a] + "用" + benchToolsZH[b] + benchTasksZH[c]
		f = benchFact{"用户" + base, "用户不再" + base + "了", "用户" + base + "，主要在" + pick(r, benchTimesZH) + "用", ""}
	case 8:
		a, b, c = idx(len(benchRelsZH)), idx(len(benchNamesZH)), idx(len(benchCitiesZH))
		who := "用户的" + benchRelsZH[a] + benchNamesZH[b]
		f = benchFact{who + "住在" + benchCitiesZH[c], who + "不住在" + benchCitiesZH[c] + "了", who + "住在" + benchCitiesZH[c] + "，在一所中学当老师", ""}
	default:
		a, b, c = idx(len(benchDaysZH)), idx(len(benchCitiesZH)), idx(len(benchNamesZH))
		base := "每周" + benchDaysZH[a] + "去" + benchCitiesZH[b] + "见" + benchNamesZH[c]
		f = benchFact{"用户" + base, "用户不再" + base + "了", "用户" + base + "，住在公司附近的酒店", ""}
	}
	if r.IntN(10) < 3 {
		f.key = fmt.Sprintf("bench.%d.%d.%d.%d", t, a, b, c)
	}
	return f
}

// candidate makes the i-th candidate for owner o: a new fact (40%), a restatement
// (30%), a refinement (15%) or a contradiction (15%) of one of its memories.
func (g benchFacts) candidate(r *mrand.Rand, tenant string, o benchOwner, i int) memory.Candidate {
	c := memory.Candidate{
		ID: fmt.Sprintf("bench-%s-%d", o.id, i), Tenant: tenant, UserID: o.id, Scope: memory.ScopeUser,
		Type: memory.Semantic, Category: memory.CatPreference, Importance: 0.5, Confidence: 0.8,
		Source: memory.SourceUser, Trusted: true, SourceTurnIDs: []string{fmt.Sprintf("turn-%d", i)},
		ValidFrom: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
		Extractor: "bench", ExtractorVersion: "1",
	}
	x := r.Float64()
	if x < 0.4 {
		f := g.fact(o.id, o.size+r.IntN(1<<20))
		c.Content, c.Key = f.content, f.key
		return c
	}
	f := g.fact(o.id, r.IntN(o.size))
	c.Key = f.key
	switch {
	case x < 0.7:
		c.Content = f.content
	case x < 0.85:
		c.Content = f.refined
	default:
		c.Content = f.negated
	}
	return c
}
