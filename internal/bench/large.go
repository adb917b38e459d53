package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// LargeConfig configures RunLarge ("engram bench large").
type LargeConfig struct {
	// OwnerMemories is the size of the large user and of the tenant's global scope,
	// each; default 100,000.
	OwnerMemories int
	// GlobalMemories is the size of the global scope when not OwnerMemories (0).
	GlobalMemories int
	// Ladder are the sizes of the owners the threshold is measured on (exact scan
	// against the owner's index); default 2,000 5,000 10,000 20,000 50,000.
	Ladder []int
	// SmallOwners owners of SmallMemories memories each stand for everyone else
	// (default 200 × 200): they must keep the exact scan.
	SmallOwners, SmallMemories int
	Queries                    int // vector-side queries per owner; default 200
	SearchQueries              int // full searches per owner (slow on large owners); default 30
	Writes                     int // memories written one a transaction to measure write rates; default 200
	EfSearch                   int // the owner indexes' ef_search; default memory.DefaultHNSWEfSearch
	M, EfConstruction          int // the owner indexes' build parameters; default memory's
	IVFThreshold               int // owner size from which its index is IVFFlat; default memory.DefaultIVFThreshold
	IVFProbes                  int // lists an IVFFlat search reads; default memory's share of its lists
	Tenant                     string
	Reuse                      bool // keep the tenant's memories when it holds exactly what would be seeded
	NoShared                   bool // skip the shared-index alternative (its build covers every row)
	// KeepIndexes, with Reuse, keeps the owner indexes an earlier run left instead of
	// dropping and rebuilding them (builds take minutes on a loaded machine); the full
	// search before the indexes is then not measured.
	KeepIndexes bool
	// SearchRounds repeats the timed searches with the owner indexes that many times,
	// their latencies pooled (default 1): on a noisy machine one round of 30–40
	// searches puts a few stalls into its p95.
	SearchRounds int
	// Runs measures the timed searches with the owner indexes that many times (default
	// 1), every owner in turn each time, as separate invocations would but without
	// their minutes of exact scans; the targets judge the median of the runs' p95s.
	Runs int
	// Explain adds the executed plans (EXPLAIN ANALYZE, BUFFERS) of the first query's
	// search of the large user and of the global scope, with the owner indexes.
	Explain  bool
	Seed     uint64
	Progress io.Writer
}

func (c *LargeConfig) defaults() {
	if c.OwnerMemories == 0 {
		c.OwnerMemories = 100_000
	}
	if c.GlobalMemories == 0 {
		c.GlobalMemories = c.OwnerMemories
	}
	if c.Ladder == nil {
		c.Ladder = []int{2000, 5000, 10_000, 20_000, 50_000}
	}
	if c.SmallOwners == 0 {
		c.SmallOwners = 200
	}
	if c.SmallMemories == 0 {
		c.SmallMemories = 200
	}
	if c.Queries == 0 {
		c.Queries = 200
	}
	if c.SearchQueries == 0 {
		c.SearchQueries = 30
	}
	if c.SearchRounds == 0 {
		c.SearchRounds = 1
	}
	if c.Runs == 0 {
		c.Runs = 1
	}
	if c.Writes == 0 {
		c.Writes = 200
	}
	if c.EfSearch == 0 {
		c.EfSearch = memory.DefaultHNSWEfSearch
	}
	if c.Tenant == "" {
		c.Tenant = "engram-bench-large"
	}
	if c.Seed == 0 {
		c.Seed = 42
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// LargeOwner is what RunLarge measured on one owner.
type LargeOwner struct {
	Name     string       `json:"name"`
	Scope    memory.Scope `json:"scope"`
	UserID   string       `json:"user_id"`
	Memories int          `json:"memories"`
	// ExactScan is the bare exact top-10 of the owner's vectors: the baseline, and the
	// truth recall is measured against.
	ExactScan Latency `json:"exact_scan"`
	// VectorSide is the search's vector side as chosen automatically by owner size
	// (the owner's index, or the exact scan), recall@10 against ExactScan.
	VectorSide   Latency `json:"vector_side"`
	VectorRecall float64 `json:"vector_recall_at_10"`
	UsesIndex    bool    `json:"uses_index"`
	// PlanUsesIndex: the search query's plan (EXPLAIN) reads the owner's index.
	PlanUsesIndex bool `json:"plan_uses_index"`
	// Plan is the executed plan of the first query's memory statement (Explain).
	Plan []string `json:"plan,omitempty"`
	// SearchBefore and Search are the full hybrid search (retriever) before the
	// index existed and after; SearchRecall is recall@10 of its vector side.
	SearchBefore Latency `json:"search_before_index"`
	Search       Latency `json:"search"`
	SearchRecall float64 `json:"search_vector_recall_at_10"`
	// SearchRuns is each run's full search with the index (Search is the first);
	// SearchP95 is the median of their p95s (of an even count, the mean of the
	// middle two), which the target judges.
	SearchRuns []Latency `json:"search_runs"`
	SearchP95  float64   `json:"search_p95_median_ms"`
	// Shared is the alternative: one HNSW index over every vector with the owner
	// filter after it, with iterative scans (pgvector 0.8) and without.
	Shared             *Latency `json:"shared_iterative,omitempty"`
	SharedRecall       float64  `json:"shared_iterative_recall_at_10"`
	SharedStrict       *Latency `json:"shared_post_filter,omitempty"`
	SharedStrictRecall float64  `json:"shared_post_filter_recall_at_10"`
	IndexBuildSeconds  float64  `json:"index_build_seconds"`
	// Index is the owner's index as the registry has it after the build (nil: none).
	Index *memory.HNSWOwnerIndex `json:"index,omitempty"`

	queries []largeQuery
	exact   [][]uuid.UUID
	kth     []float64 // the exact 10th distance of each query
}

// WriteRate is memories written one a transaction (row, version, audit, vector).
type WriteRate struct {
	Owner    string  `json:"owner"`
	Indexed  bool    `json:"indexed"`
	Writes   int     `json:"writes"`
	PerSec   float64 `json:"per_second"`
	P95Milli float64 `json:"p95_ms"`
}

// LargeResult is what RunLarge measured.
type LargeResult struct {
	Memories     int          `json:"memories"`
	SeedSeconds  float64      `json:"seed_seconds"`
	Owners       []LargeOwner `json:"owners"`
	Threshold    int          `json:"measured_threshold"` // smallest ladder size where the index wins at recall >= 0.95; 0: none
	BuildSeconds float64      `json:"owner_index_build_seconds"`
	Writes       []WriteRate  `json:"writes"`
	// SharedBuildSeconds is the build of the one shared index over every vector.
	SharedBuildSeconds float64 `json:"shared_index_build_seconds"`
	SharedPlan         string  `json:"shared_plan_index"`
}

type largeQuery struct {
	text string
	vec  []float32
}

const sharedIndex = "engram_bench_shared_hnsw"

// RunLarge seeds one tenant with a large user, a global scope of the same size, a
// ladder of mid-sized owners and many small ones, then measures the exact scan, the
// owner indexes that MaintainHNSW builds for the owners above the threshold, the full
// search, the write rate, and one shared HNSW index with the filter after it. app is
// the application role's store (searches, writes), owner the owner role's
// (seeding, ANALYZE, index builds).
func RunLarge(ctx context.Context, app, owner *memory.Store, cfg LargeConfig) (LargeResult, error) {
	cfg.defaults()
	var res LargeResult
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		return res, err
	}
	owners := []LargeOwner{
		{Name: "large user", Scope: memory.ScopeUser, UserID: "bench-large", Memories: cfg.OwnerMemories},
		{Name: "global scope", Scope: memory.ScopeGlobal, UserID: "", Memories: cfg.GlobalMemories},
	}
	for _, n := range cfg.Ladder {
		owners = append(owners, LargeOwner{Name: fmt.Sprintf("owner of %d", n), Scope: memory.ScopeUser,
			UserID: fmt.Sprintf("bench-ladder-%07d", n), Memories: n})
	}
	owners = append(owners, LargeOwner{Name: fmt.Sprintf("small owners (%d)", cfg.SmallMemories), Scope: memory.ScopeUser,
		UserID: "bench-small-0000", Memories: cfg.SmallMemories})
	total := 0
	for _, o := range owners[:len(owners)-1] {
		total += o.Memories
	}
	total += cfg.SmallOwners * cfg.SmallMemories
	res.Memories = total
	// Row i's owner: the ranges in order, then the small owners round-robin.
	ownerOf := func(i int) (memory.Scope, string) {
		for _, o := range owners[:len(owners)-1] {
			if i < o.Memories {
				return o.Scope, o.UserID
			}
			i -= o.Memories
		}
		return memory.ScopeUser, fmt.Sprintf("bench-small-%04d", i%cfg.SmallOwners)
	}
	corpus := newBenchCorpus(cfg.Seed)

	// An earlier run's owner indexes would slow the seeding ~100x: drop them (no owner
	// is large once the threshold is out of reach). Every pass here touches the bench
	// tenant's indexes only: other tenants' (another bench's) are left as they are.
	log := slog.New(slog.NewTextHandler(cfg.Progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	have := 0
	if cfg.Reuse {
		var err error
		if have, err = existingMemories(ctx, owner, cfg.Tenant); err != nil {
			return res, err
		}
	}
	if have != total {
		if _, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 1 << 62, TextThreshold: 1 << 62, Tenants: []string{cfg.Tenant}}, log); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		start := time.Now()
		if err := seedLarge(ctx, owner, emb, cfg, total, corpus, ownerOf); err != nil {
			return res, err
		}
		res.SeedSeconds = time.Since(start).Seconds()
	} else {
		fmt.Fprintf(cfg.Progress, "reusing %d memories of tenant %s\n", have, cfg.Tenant)
	}
	kept := cfg.Reuse && cfg.KeepIndexes && have == total
	if !kept {
		if _, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 1 << 62, TextThreshold: 1 << 62, Tenants: []string{cfg.Tenant}}, log); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
	}
	fmt.Fprintf(cfg.Progress, "vacuuming and analysing\n")
	if err := owner.VacuumAnalyzeMemories(ctx); err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}

	// Queries: words of the owner's own memories plus a random one, as in bench search.
	rng := rand.New(rand.NewPCG(cfg.Seed, 17))
	start := 0
	for oi := range owners {
		o := &owners[oi]
		for range cfg.Queries {
			m := start + rng.IntN(o.Memories)
			if oi == len(owners)-1 { // the first small owner's rows: every SmallOwners-th
				m = start + rng.IntN(cfg.SmallMemories)*cfg.SmallOwners
			}
			words := strings.Fields(corpus.sentence(m))
			rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
			text := strings.Join(words[:min(len(words), 2+rng.IntN(3))], " ") + " " + corpus.word(rng.IntN(1000))
			vs, err := emb.Embed(ctx, []string{text})
			if err != nil {
				return res, err
			}
			o.queries = append(o.queries, largeQuery{text: text, vec: vs[0]})
		}
		start += o.Memories
	}

	rcfg := retriever.DefaultConfig()
	// Every seeded memory has a vector: what serve's census tells its retriever, which
	// then skips counting the owner's coverage (a million-memory owner's count takes
	// seconds, on one search in ten seconds).
	rcfg.VectorsComplete = func(model string) bool { return model == emb.Model() }
	r, err := retriever.NewRetriever(app, emb, rcfg, nil)
	if err != nil {
		return res, err
	}
	pcfg := rcfg
	pcfg.VectorMinSimilarity = -1 // the recall probe compares like for like with the plain top-10
	probe, err := retriever.NewRetriever(app, emb, pcfg, nil)
	if err != nil {
		return res, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.Run(runCtx) })
	defer func() { stop(); wg.Wait() }()

	// 1. Before any index: the exact truth, and the full search on the exact path.
	for oi := range owners {
		o := &owners[oi]
		if kept {
			// The owner indexes stay, so there is no exact path to time: its column reads "–".
			fmt.Fprintf(cfg.Progress, "%s: %d exact scans (indexes kept: no searches on the exact path)\n", o.Name, len(o.queries))
		} else {
			fmt.Fprintf(cfg.Progress, "%s: %d exact scans, %d searches (exact path)\n", o.Name, len(o.queries), cfg.SearchQueries)
		}
		var lat []time.Duration
		for _, q := range o.queries {
			t := time.Now()
			var ids []uuid.UUID
			err := app.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
				var err error
				ids, err = tx.ExactNearest(ctx, emb.Model(), o.UserID, q.vec, 10)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("bench: exact scan: %w", err)
			}
			lat = append(lat, time.Since(t))
			o.exact = append(o.exact, ids)
			d, err := largeDistances(ctx, app, cfg.Tenant, emb.Model(), q.vec, ids)
			if err != nil {
				return res, err
			}
			kth := 2.0
			if len(d) > 0 {
				kth = slices.Max(d)
			}
			o.kth = append(o.kth, kth)
		}
		o.ExactScan = summarise(lat)
		if kept {
			continue
		}
		if o.SearchBefore, err = largeSearches(ctx, r, cfg, o, 1); err != nil {
			return res, err
		}
	}

	// 2. The owner indexes, as the maintenance path builds them, for every owner from
	// the smallest ladder size up.
	threshold := slices.Min(cfg.Ladder)
	fmt.Fprintf(cfg.Progress, "building the owner indexes (owners of %d vectors and more)\n", threshold)
	// No grace for a replaced index: no other process reads this tenant.
	rep, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: threshold, EfSearch: cfg.EfSearch, M: cfg.M,
		EfConstruction: cfg.EfConstruction, IVFThreshold: cfg.IVFThreshold, IVFProbes: cfg.IVFProbes, SwapGrace: -1,
		Tenants: []string{cfg.Tenant}}, log)
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	res.BuildSeconds = rep.BuildSeconds
	for _, ix := range append(rep.Built, rep.Rebuilt...) {
		for oi := range owners {
			if owners[oi].UserID == ix.UserID {
				owners[oi].IndexBuildSeconds = ix.BuildSeconds
			}
		}
	}
	ixs, _, err := owner.HNSWIndexes(ctx)
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	for _, ix := range ixs {
		for oi := range owners {
			if ix.Tenant == cfg.Tenant && owners[oi].UserID == ix.UserID {
				owners[oi].Index = &ix
			}
		}
	}

	// 3. With them: the vector side as the search chooses it, and the full search.
	for oi := range owners {
		o := &owners[oi]
		fmt.Fprintf(cfg.Progress, "%s: %d vector sides, %d searches\n", o.Name, len(o.queries), min(len(o.queries), cfg.SearchQueries)*cfg.SearchRounds)
		var err error
		o.VectorSide, o.VectorRecall, err = o.measureNearest(ctx, app, cfg.Tenant, emb.Model(), "vector side",
			func(tx *memory.Tx, vec []float32) (ids []uuid.UUID, err error) {
				ids, o.UsesIndex, err = tx.OwnerVectorSide(ctx, emb.Model(), o.Scope, o.UserID, vec, 10)
				return ids, err
			})
		if err != nil {
			return res, err
		}
		if o.Search, err = largeSearches(ctx, r, cfg, o, cfg.SearchRounds); err != nil {
			return res, err
		}
		o.SearchRuns = []Latency{o.Search}
		hits, n := 0, 0
		for i, q := range o.queries[:min(len(o.queries), cfg.SearchQueries)] {
			side, err := probe.VectorSide(ctx, cfg.Tenant, largeRequest(*o, q.text), q.vec, 10)
			if err != nil {
				return res, fmt.Errorf("bench: %w", err)
			}
			h, err := o.hits(ctx, app, cfg.Tenant, emb.Model(), i, side)
			if err != nil {
				return res, err
			}
			hits += h
			n += len(o.exact[i])
		}
		o.SearchRecall = ratio(hits, n)
		fmt.Fprintf(cfg.Progress, "  %s: exact p95 %.2f ms; vector side p95 %.2f ms recall %.3f (index %v); search p95 %s -> %.2f ms, recall %.3f\n",
			o.Name, o.ExactScan.P95, o.VectorSide.P95, o.VectorRecall, o.UsesIndex, o.SearchBefore.P95Text(), o.Search.P95, o.SearchRecall)
	}
	// The later runs: every owner in turn, as the first run measured them.
	for run := 2; run <= cfg.Runs; run++ {
		for oi := range owners {
			o := &owners[oi]
			fmt.Fprintf(cfg.Progress, "run %d of %d: %s: %d searches\n", run, cfg.Runs, o.Name, min(len(o.queries), cfg.SearchQueries)*cfg.SearchRounds)
			l, err := largeSearches(ctx, r, cfg, o, cfg.SearchRounds)
			if err != nil {
				return res, err
			}
			o.SearchRuns = append(o.SearchRuns, l)
			fmt.Fprintf(cfg.Progress, "  %s: search p95 %.2f ms\n", o.Name, l.P95)
		}
	}
	for oi := range owners {
		owners[oi].SearchP95 = MedianP95(owners[oi].SearchRuns)
	}
	for _, o := range owners[2 : 2+len(cfg.Ladder)] {
		if o.UsesIndex && o.VectorSide.P95 < o.ExactScan.P95 && o.VectorRecall >= 0.95 {
			res.Threshold = o.Memories
			break
		}
	}
	// Which plan each owner's search runs: an owner index only above the threshold.
	for oi := range owners {
		o := &owners[oi]
		plan, err := r.ExplainMemorySearch(ctx, cfg.Tenant, largeRequest(*o, o.queries[0].text), o.queries[0].vec, 50)
		if err != nil {
			return res, fmt.Errorf("bench: explaining the search: %w", err)
		}
		o.PlanUsesIndex = slices.ContainsFunc(plan, func(l string) bool {
			return strings.Contains(l, "engram_hnsw_") || strings.Contains(l, "engram_ivf_")
		})
		if cfg.Explain && oi < 2 {
			sp, err := r.ExplainAnalyzeSearch(ctx, cfg.Tenant, largeRequest(*o, o.queries[0].text), 50)
			if err != nil {
				return res, fmt.Errorf("bench: explaining the search of %s: %w", o.Name, err)
			}
			o.Plan = sp.Memories
		}
	}

	// 4. Write rates: the large owner (indexed) and a small one (exact scan only).
	for _, w := range []struct {
		o       LargeOwner
		indexed bool
	}{{owners[0], true}, {owners[len(owners)-1], false}} {
		fmt.Fprintf(cfg.Progress, "%s: %d writes\n", w.o.Name, cfg.Writes)
		wr, err := largeWrites(ctx, app, emb, cfg, corpus, w.o)
		if err != nil {
			return res, err
		}
		wr.Indexed = w.indexed && w.o.UsesIndex
		res.Writes = append(res.Writes, wr)
	}

	// 5. The alternative: one HNSW index over every vector, the owner filter after it.
	if !cfg.NoShared {
		fmt.Fprintf(cfg.Progress, "building one shared HNSW index over all %d vectors (minutes at 1M)\n", total)
		t := time.Now()
		if err := owner.CreateVectorIndex(ctx, sharedIndex, emb.Model(), emb.Dims()); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		res.SharedBuildSeconds = time.Since(t).Seconds()
		defer func() {
			if err := owner.DropIndex(context.WithoutCancel(ctx), sharedIndex); err != nil {
				fmt.Fprintf(cfg.Progress, "dropping the shared index: %v\n", err)
			}
		}()
		if err := owner.AnalyzeMemories(ctx); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		err = app.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			plan, err := tx.ExplainSharedHNSW(ctx, emb.Model(), owners[0].UserID, owners[0].queries[0].vec, emb.Dims())
			for _, l := range plan {
				if strings.Contains(l, "Index Scan") {
					res.SharedPlan = strings.TrimSpace(l)
					break
				}
			}
			return err
		})
		if err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		for oi := range owners {
			o := &owners[oi]
			fmt.Fprintf(cfg.Progress, "%s: %d shared-index queries, twice\n", o.Name, len(o.queries))
			for _, iterative := range []bool{true, false} {
				l, recall, err := o.measureNearest(ctx, app, cfg.Tenant, emb.Model(), "shared index",
					func(tx *memory.Tx, vec []float32) ([]uuid.UUID, error) {
						return tx.SharedHNSWNearest(ctx, emb.Model(), o.Scope, o.UserID, vec, emb.Dims(), 10, cfg.EfSearch, iterative)
					})
				if err != nil {
					return res, err
				}
				if iterative {
					o.Shared, o.SharedRecall = &l, recall
				} else {
					o.SharedStrict, o.SharedStrictRecall = &l, recall
				}
			}
		}
	}
	res.Owners = owners
	return res, nil
}

// hits counts the results of query i among its true top 10. The hashing embedder's
// vectors tie often (memories with the same words), and the exact scan breaks ties by
// id, so a result counts when it is no farther than the exact 10th: any of the tied
// memories is as right as the one the scan listed.
// measureNearest times nearest, one transaction per query of o, and its recall@10
// against the exact neighbours.
func (o *LargeOwner) measureNearest(ctx context.Context, app *memory.Store, tenant, model, what string,
	nearest func(tx *memory.Tx, vec []float32) ([]uuid.UUID, error)) (Latency, float64, error) {
	var lat []time.Duration
	hits, n := 0, 0
	for i, q := range o.queries {
		t := time.Now()
		var ids []uuid.UUID
		err := app.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var err error
			ids, err = nearest(tx, q.vec)
			return err
		})
		if err != nil {
			return Latency{}, 0, fmt.Errorf("bench: %s: %w", what, err)
		}
		lat = append(lat, time.Since(t))
		h, err := o.hits(ctx, app, tenant, model, i, ids)
		if err != nil {
			return Latency{}, 0, err
		}
		hits += h
		n += len(o.exact[i])
	}
	return summarise(lat), ratio(hits, n), nil
}

func (o *LargeOwner) hits(ctx context.Context, app *memory.Store, tenant, model string, i int, got []uuid.UUID) (int, error) {
	got = got[:min(len(got), 10)]
	d, err := largeDistances(ctx, app, tenant, model, o.queries[i].vec, got)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, x := range d {
		if x <= o.kth[i]+1e-6 {
			n++
		}
	}
	return min(n, len(o.exact[i])), nil
}

// largeDistances is the cosine distance of each memory's vector to vec.
func largeDistances(ctx context.Context, app *memory.Store, tenant, model string, vec []float32, ids []uuid.UUID) ([]float64, error) {
	var vs map[uuid.UUID][]float32
	err := app.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		vs, err = tx.MemoryVectors(ctx, model, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: reading result vectors: %w", err)
	}
	out := make([]float64, 0, len(ids))
	for _, id := range ids {
		if v, ok := vs[id]; ok {
			out = append(out, 1-float64(llm.Cosine(vec, v)))
		}
	}
	return out, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func largeRequest(o LargeOwner, text string) retriever.SearchRequest {
	req := retriever.SearchRequest{Query: text, UserID: o.UserID, Scope: o.Scope, TopK: 10}
	if o.Scope == memory.ScopeGlobal {
		req.UserID = ""
	}
	return req
}

// largeWarmUps is how many untimed searches come before an owner's timed ones: a
// connection plans each search statement once (PreferGenericPlans; 24–44 ms for a
// million-memory owner's keyword statement on this machine, session 30) and a search
// runs on two, so the first searches would put that one-off cost into the p95 of the
// steady state. The progress output shows them.
const largeWarmUps = 2

// largeSearches runs the first SearchQueries of the owner's queries through the full
// search, rounds times, after largeWarmUps untimed ones (queries the timed ones do not
// use, where the owner has any).
func largeSearches(ctx context.Context, r *retriever.Retriever, cfg LargeConfig, o *LargeOwner, rounds int) (Latency, error) {
	timed := o.queries[:min(len(o.queries), cfg.SearchQueries)]
	warm := o.queries[len(timed):]
	if len(warm) == 0 {
		warm = timed
	}
	search := func(q largeQuery) (time.Duration, error) {
		t := time.Now()
		if _, err := r.Search(ctx, cfg.Tenant, largeRequest(*o, q.text)); err != nil {
			return 0, fmt.Errorf("bench: search of %s: %w", o.Name, err)
		}
		return time.Since(t), nil
	}
	var took []string
	for _, q := range warm[:min(len(warm), largeWarmUps)] {
		d, err := search(q)
		if err != nil {
			return Latency{}, err
		}
		took = append(took, fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000))
	}
	fmt.Fprintf(cfg.Progress, "  %s: untimed warm-up searches %s\n", o.Name, strings.Join(took, ", "))
	var lat []time.Duration
	for range rounds {
		for _, q := range timed {
			d, err := search(q)
			if err != nil {
				return Latency{}, err
			}
			lat = append(lat, d)
		}
	}
	return summarise(lat), nil
}

// MedianP95 is the median of the runs' p95s (Median).
func MedianP95(runs []Latency) float64 {
	xs := make([]float64, len(runs))
	for i, l := range runs {
		xs[i] = l.P95
	}
	return Median(xs)
}

// Median is the median of xs (of an even count, the mean of the middle two); 0 for
// none. xs is sorted in place.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	slices.Sort(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

// largeWrites writes cfg.Writes memories to the owner, one a transaction through the
// store's change path (row, version, audit, vector), then deletes them (after the
// timing) so the tenant again holds exactly what was seeded and --reuse can keep it.
func largeWrites(ctx context.Context, app *memory.Store, emb llm.Embedder, cfg LargeConfig, corpus benchCorpus, o LargeOwner) (WriteRate, error) {
	wr := WriteRate{Owner: o.Name, Writes: cfg.Writes}
	texts := make([]string, cfg.Writes)
	for i := range texts {
		texts[i] = corpus.sentence(10_000_000 + i)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return wr, err
	}
	var lat []time.Duration
	ids := make([]uuid.UUID, 0, len(texts))
	start := time.Now()
	for i, text := range texts {
		t := time.Now()
		err := app.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			m, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: o.UserID, Scope: o.Scope, Type: memory.Semantic,
				Category: memory.CatFact, Content: text, Importance: 0.5, Confidence: 0.8, ValidFrom: time.Now(),
				Source: memory.SourceUser, Model: emb.Model(), Embeddings: []memory.Embedding{{Model: emb.Model(), Vector: vecs[i]}},
				Actor: "bench", Module: "bench"})
			ids = append(ids, m.ID)
			return err
		})
		if err != nil {
			return wr, fmt.Errorf("bench: writing to %s: %w", o.Name, err)
		}
		lat = append(lat, time.Since(t))
	}
	wr.PerSec = float64(cfg.Writes) / time.Since(start).Seconds()
	wr.P95Milli = summarise(lat).P95
	err = app.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
		for _, id := range ids {
			if _, err := tx.DeleteMemory(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wr, fmt.Errorf("bench: deleting the writes to %s: %w", o.Name, err)
	}
	return wr, nil
}

// seedLarge replaces the tenant's memories with total synthetic ones, COPYed in
// tenant-scoped transactions of 5,000.
func seedLarge(ctx context.Context, store *memory.Store, emb llm.Embedder, cfg LargeConfig, total int, corpus benchCorpus,
	ownerOf func(int) (memory.Scope, string)) error {
	fmt.Fprintf(cfg.Progress, "removing earlier memories of tenant %s\n", cfg.Tenant)
	if err := store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error { return tx.DeleteTenantMemories(ctx) }); err != nil {
		return fmt.Errorf("bench: clearing tenant %s: %w", cfg.Tenant, err)
	}
	const batch = 5000
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	now := time.Now().UTC()
	start := time.Now()
	for lo := 0; lo < total; lo += batch {
		hi := min(lo+batch, total)
		texts := make([]string, hi-lo)
		for i := range texts {
			texts[i] = corpus.sentence(lo + i)
		}
		vecs, err := embedParallel(ctx, emb, texts)
		if err != nil {
			return fmt.Errorf("bench: embedding: %w", err)
		}
		ms := make([]memory.BulkMemory, 0, hi-lo)
		for i := lo; i < hi; i++ {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			scope, user := ownerOf(i)
			at := now.Add(-time.Duration(rng.IntN(365*24)) * time.Hour)
			ms = append(ms, memory.BulkMemory{ID: id, UserID: user, Scope: scope, Type: memory.Semantic,
				Category: memory.CatFact, Content: texts[i-lo], Importance: 0.5, Confidence: 0.8,
				ValidFrom: at, RecordedAt: at, Source: memory.SourceUser, Embedding: vecs[i-lo]})
		}
		err = store.InTx(ctx, cfg.Tenant, func(tx *memory.Tx) error {
			return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: emb.Model(), Dims: emb.Dims()})
		})
		if err != nil {
			return fmt.Errorf("bench: seeding rows %d-%d: %w", lo, hi, err)
		}
		if (hi/batch)%20 == 0 || hi == total {
			fmt.Fprintf(cfg.Progress, "seeded %d/%d memories (%.0f/s)\n", hi, total, float64(hi)/time.Since(start).Seconds())
		}
	}
	return nil
}
