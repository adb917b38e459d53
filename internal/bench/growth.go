package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
)

// GrowthConfig configures RunGrowth: the cost-of-growth table (issue 17 item 7).
type GrowthConfig struct {
	// Sizes are the memory counts measured, each in a tenant of its own
	// ("growth-<size>"), with PerOwner memories per owner, so the work grows in
	// owners as a service's does.
	Sizes    []int
	PerOwner int
	Queries  int // measured searches and context calls per size (in-process and over HTTP)
	// ResolveCandidates are resolved per size (bench resolve over a tenant of the same
	// shape, seeded apart and deleted afterwards).
	ResolveCandidates int
	Reuse             bool // keep a size's tenant when it already holds the memories
	// DatabaseURL (the application role), Binary and WorkDir are for the engram serve
	// process whose resident set is measured.
	DatabaseURL, Binary, WorkDir string
	Progress                     io.Writer
	Logger                       *slog.Logger
}

// GrowthRow is one size of the table.
type GrowthRow struct {
	Memories int     `json:"memories"`
	Owners   int     `json:"owners"`
	Search   Latency `json:"search"`  // in-process, as bench search
	Context  Latency `json:"context"` // in-process, as bench search
	// ServeSearch and ServeContext are the same calls over HTTP to engram serve.
	ServeSearch  Latency `json:"serve_search"`
	ServeContext Latency `json:"serve_context"`
	// ServeRSS is engram serve's resident set after the calls; ServePeakRSS its peak.
	ServeRSS     int64   `json:"serve_rss_bytes"`
	ServePeakRSS int64   `json:"serve_peak_rss_bytes"`
	ResolvePerS  float64 `json:"resolve_per_s"`
	ResolveP95   float64 `json:"resolve_p95_ms"`
}

// GrowthResult is what RunGrowth measured.
type GrowthResult struct {
	PerOwner int         `json:"per_owner"`
	Queries  int         `json:"queries"`
	Rows     []GrowthRow `json:"rows"`
}

// RunGrowth measures, for each size, search and context latency (in-process and
// through engram serve), the resolver's rate and engram serve's resident set, so an
// operator can see how cost grows with the work.
func RunGrowth(ctx context.Context, pool *pgxpool.Pool, cfg GrowthConfig) (GrowthResult, error) {
	if cfg.PerOwner <= 0 {
		cfg.PerOwner = 1000
	}
	if cfg.Queries <= 0 {
		cfg.Queries = 200
	}
	if cfg.ResolveCandidates <= 0 {
		cfg.ResolveCandidates = 2000
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	res := GrowthResult{PerOwner: cfg.PerOwner, Queries: cfg.Queries}
	ns, natsURL, err := startRunNATS(ctx, "growth", cfg.WorkDir)
	if err != nil {
		return res, err
	}
	defer ns.Shutdown()
	for _, size := range cfg.Sizes {
		owners := max(1, size/cfg.PerOwner)
		row := GrowthRow{Memories: size, Owners: owners}
		tenant := fmt.Sprintf("growth-%d", size)
		fmt.Fprintf(cfg.Progress, "growth: %d memories over %d owners (tenant %s)\n", size, owners, tenant)
		scfg := SearchConfig{Memories: size, Owners: owners, Queries: cfg.Queries,
			Tenant: tenant, Reuse: cfg.Reuse, NoHNSW: true, Turns: 0, HeavyTurns: 0, Progress: cfg.Progress}
		if _, err := RunSearch(ctx, pool, scfg); err != nil { // seeds, or warms a reused tenant's pages
			return res, fmt.Errorf("growth at %d: %w", size, err)
		}
		fmt.Fprintf(cfg.Progress, "growth: measuring on a warm cache\n")
		scfg.Reuse = true
		sr, err := RunSearch(ctx, pool, scfg)
		if err != nil {
			return res, fmt.Errorf("growth at %d: %w", size, err)
		}
		row.Search, row.Context = sr.Search, sr.Context
		if err := growthServe(ctx, cfg, natsURL, tenant, owners, &row); err != nil {
			return res, fmt.Errorf("growth at %d: %w", size, err)
		}
		fmt.Fprintf(cfg.Progress, "growth: resolving %d candidates over %d owners × %d memories\n", cfg.ResolveCandidates, owners, cfg.PerOwner)
		rr, err := RunResolve(ctx, pool, ResolveConfig{Owners: owners, PerOwner: cfg.PerOwner, Candidates: cfg.ResolveCandidates,
			LargeOwner: -1, Cleanup: true, Tenant: fmt.Sprintf("growth-r-%d", size), Progress: cfg.Progress})
		if err != nil {
			return res, fmt.Errorf("growth at %d: %w", size, err)
		}
		row.ResolvePerS, row.ResolveP95 = rr.Across.PerSecond, rr.Across.P95Ms
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// growthServe starts engram serve (API only) on the database, sends cfg.Queries
// searches and context calls for the tenant's owners over HTTP, and records their
// latency and the process's resident set.
func growthServe(ctx context.Context, cfg GrowthConfig, natsURL, tenant string, owners int, row *GrowthRow) error {
	tok, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	dir := filepath.Join(cfg.WorkDir, tenant)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	api := &process{name: "api", bin: cfg.Binary, args: []string{"serve", "--workers=false", "--http-addr", addr},
		env: []string{"ENGRAM_DATABASE_URL=" + cfg.DatabaseURL, "ENGRAM_NATS_URL=" + natsURL,
			"ENGRAM_TOKENS=" + tenant + "=" + httpapi.HashToken(tok), "ENGRAM_CONSOLIDATE_CRON=off",
			"ENGRAM_LOG_LEVEL=warn", "ENGRAM_REEMBED=off", "ENGRAM_DATA_DIR=" + dir},
		log: filepath.Join(dir, "api.log"),
		onExit: func(p *process, err error) {
			cfg.Logger.Warn("growth: a process exited", "process", p.name, "err", err)
		}}
	if err := api.start(); err != nil {
		return err
	}
	defer api.stop()
	if err := waitHealthy(ctx, "http://"+addr+"/healthz", time.Minute); err != nil {
		return fmt.Errorf("the API did not come up (see %s): %w", api.log, err)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	c := client.New("http://"+addr, tok, client.WithHTTPClient(hc))
	corpus := newBenchCorpus(42)
	rng := rand.New(rand.NewPCG(7, uint64(owners)))
	var search, contexts []time.Duration
	fmt.Fprintf(cfg.Progress, "growth: %d searches and %d context calls through engram serve\n", cfg.Queries, cfg.Queries)
	for i := range cfg.Queries {
		user := fmt.Sprintf("bench-user-%05d", rng.IntN(owners))
		words := make([]string, 3)
		for j := range words {
			words[j] = corpus.word(rng.IntN(1000))
		}
		q := strings.Join(words, " ")
		t := time.Now()
		if _, err := c.Search(ctx, client.SearchRequest{Query: q, UserID: user}); err != nil {
			return fmt.Errorf("search %d through serve: %w", i, err)
		}
		search = append(search, time.Since(t))
		t = time.Now()
		if _, err := c.Context(ctx, client.ContextRequest{Query: q, UserID: user}); err != nil {
			return fmt.Errorf("context %d through serve: %w", i, err)
		}
		contexts = append(contexts, time.Since(t))
	}
	row.ServeSearch, row.ServeContext = summarise(search), summarise(contexts)
	api.mu.Lock()
	pid := api.cmd.Process.Pid
	api.mu.Unlock()
	row.ServeRSS, row.ServePeakRSS = vmRSS(pid), vmHWM(pid) // the peak only grows: read last, it is the run's
	return nil
}
