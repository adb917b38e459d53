package consolidator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// NightlyConfig tunes the nightly consolidation. Zero fields take the defaults of
// DefaultNightlyConfig; a negative duration or count switches that step off.
type NightlyConfig struct {
	// ClusterSim is the average cosine an episode must have with a cluster's members
	// (average linkage) to join it. Default 0.25, measured with the local hash
	// embedder (engram-hash-v1) on the bilingual set of TestClusterThreshold: an
	// episode's average cosine to the rest of its group is at least 0.30, an
	// unrelated episode's to any group at most 0.20. A dense embedding model needs its
	// own value: its cosines sit higher.
	ClusterSim float64
	// MinCluster is the smallest cluster distilled into a semantic memory. Default 3.
	MinCluster int
	// MaxEpisodes bounds the episodes of one owner clustered per run (the newest);
	// clustering is O(n·clusters). Default 2000.
	MaxEpisodes int
	// SourceImportanceFactor down-weights distilled source episodes. Default 0.5.
	SourceImportanceFactor float64

	// DecayAfter: active memories unused for longer lose importance. A memory's last
	// use is the latest of its last access (retrieval), confirmation and update.
	// Default 30 days.
	DecayAfter time.Duration
	// DecayFactor multiplies their importance once per decay. Default 0.9.
	DecayFactor float64
	// DecayFloor is the importance decay never goes below. Default 0.1.
	DecayFloor float64
	// DecayInterval is the least time between two decays of one owner, so extra runs
	// (a manual run, a second replica's schedule) do not decay twice. Default 20h;
	// negative: decay on every run.
	DecayInterval time.Duration
	// ArchiveAfter: active memories unused for longer are archived. Default 90 days.
	ArchiveAfter time.Duration
	// MaxPerOwner caps an owner's active memories; the lowest-valued beyond it are
	// archived. Value is importance × confidence × 1/(1 + days unused/30). Default 10000.
	MaxPerOwner int
	// TurnRetention: raw turns older than this lose their content (ids and hashes
	// stay). Default 365 days.
	TurnRetention time.Duration

	// Concurrency is how many owners are processed at once. Default 2.
	Concurrency int
	// ResumeWithin: a run started less than this after an interrupted or failed run
	// with the same filters finishes that run's work instead of starting afresh.
	// Default 12h (shorter than the nightly period, so the next night starts anew).
	ResumeWithin time.Duration
	// Actor is recorded on versions and audit entries. Default "consolidator".
	Actor string
}

// DefaultNightlyConfig returns the defaults (see NightlyConfig).
func DefaultNightlyConfig() NightlyConfig {
	const day = 24 * time.Hour
	return NightlyConfig{
		ClusterSim:             0.25,
		MinCluster:             3,
		MaxEpisodes:            2000,
		SourceImportanceFactor: 0.5,
		DecayAfter:             30 * day,
		DecayFactor:            0.9,
		DecayFloor:             0.1,
		DecayInterval:          20 * time.Hour,
		ArchiveAfter:           90 * day,
		MaxPerOwner:            10000,
		TurnRetention:          365 * day,
		Concurrency:            2,
		ResumeWithin:           12 * time.Hour,
		Actor:                  "consolidator",
	}
}

func (c NightlyConfig) withDefaults() NightlyConfig {
	d := DefaultNightlyConfig()
	f := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	i := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	dur := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	f(&c.ClusterSim, d.ClusterSim)
	i(&c.MinCluster, d.MinCluster)
	i(&c.MaxEpisodes, d.MaxEpisodes)
	f(&c.SourceImportanceFactor, d.SourceImportanceFactor)
	dur(&c.DecayAfter, d.DecayAfter)
	f(&c.DecayFactor, d.DecayFactor)
	f(&c.DecayFloor, d.DecayFloor)
	dur(&c.DecayInterval, d.DecayInterval)
	dur(&c.ArchiveAfter, d.ArchiveAfter)
	i(&c.MaxPerOwner, d.MaxPerOwner)
	dur(&c.TurnRetention, d.TurnRetention)
	i(&c.Concurrency, d.Concurrency)
	dur(&c.ResumeWithin, d.ResumeWithin)
	if c.Concurrency < 1 {
		c.Concurrency = 1
	}
	if c.MinCluster < 2 {
		c.MinCluster = 2
	}
	if c.Actor == "" {
		c.Actor = d.Actor
	}
	return c
}

// Consolidator runs the nightly consolidation: per owner, distil clusters of
// episodes into semantic memories (through the resolver), then forget (TTL, decay,
// archive, caps, turn retention). One run at a time across all processes.
type Consolidator struct {
	store    *memory.Store
	resolver *Resolver
	emb      Embedder
	chat     *llm.ChatClient
	cfg      NightlyConfig
	log      *slog.Logger

	// afterOwner, when set (tests), is called after each owner finished.
	afterOwner func(owner)
}

// NewConsolidator makes a consolidator. resolver must use the same embedding model as
// emb (distillation reads the stored vectors of that model); chat may be nil (offline
// distillation); a nil logger discards.
func NewConsolidator(store *memory.Store, resolver *Resolver, emb Embedder, chat *llm.ChatClient, cfg NightlyConfig, logger *slog.Logger) *Consolidator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Consolidator{store: store, resolver: resolver, emb: emb, chat: chat, cfg: cfg.withDefaults(),
		log: logger.With("component", "nightly")}
}

// RunOptions narrow a run. Zero values: every tenant and owner, for real.
type RunOptions struct {
	Tenant string // only this tenant
	User   string // only this user (requires Tenant)
	// DryRun reports what a run would do and changes nothing: forgetting runs in
	// transactions that are rolled back, and clusters are counted, not distilled (no
	// LLM calls). The run is recorded with dry_run = true and is never resumed.
	DryRun bool
	// Progress, if set, receives one line per owner and a closing line.
	Progress io.Writer
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// Run runs one consolidation over the owners opts selects. It fails fast with
// ErrRunInProgress when another run holds the lock. An owner's failure is recorded
// and the run goes on (status "failed" at the end; the next run retries those
// owners); a cancelled ctx stops the run with status "interrupted".
//
// Resumability: an owner's forgetting and its consolidation_progress row commit in one
// transaction, so a restarted run (see NightlyConfig.ResumeWithin) skips exactly the
// owners that finished. Distillation before it is idempotent on its own: candidate ids
// are derived from the source memory ids, the resolver's ledger turns a repeated
// candidate into a no-op, and marking the sources consolidated only touches those not
// yet marked.
func (c *Consolidator) Run(ctx context.Context, opts RunOptions) (RunReport, error) {
	if opts.Tenant != "" {
		if err := memory.CheckTenant(opts.Tenant); err != nil {
			return RunReport{}, fmt.Errorf("consolidation run: %w", err)
		}
	}
	if opts.User != "" && opts.Tenant == "" {
		return RunReport{}, fmt.Errorf("consolidation run: a user filter needs a tenant")
	}
	lock, err := c.acquireRunLock(ctx)
	if err != nil {
		return RunReport{}, err
	}
	defer lock.Release(ctx)

	rep := RunReport{Status: memory.RunRunning, DryRun: opts.DryRun, Tenant: opts.Tenant, User: opts.User, StartedAt: time.Now().UTC()}
	var root int64
	rep.RunID, rep.Resumes, root, err = c.startRun(ctx, lock, opts)
	if err != nil {
		return rep, err
	}
	owners, skipped, err := listOwners(ctx, lock, root, opts)
	if err != nil {
		rep.Status, rep.FinishedAt = memory.RunFailed, time.Now().UTC()
		rep.Errors = append(rep.Errors, RunError{Error: err.Error()})
		return rep, errors.Join(err, c.finishRun(ctx, rep))
	}
	rep.Owners, rep.OwnersSkipped = len(owners), skipped
	log := c.log.With("run", rep.RunID)
	log.Info("consolidation run started", "owners", len(owners), "skipped", skipped, "resumes", rep.Resumes,
		"dry_run", opts.DryRun, "tenant", opts.Tenant, "user", opts.User)
	if rep.Resumes != 0 {
		progressf(opts.Progress, "run %d resumes run %d: %d owners already done\n", rep.RunID, rep.Resumes, skipped)
	}

	var mu sync.Mutex // guards rep while workers run
	work := make(chan owner)
	var wg sync.WaitGroup
	for range min(c.cfg.Concurrency, max(len(owners), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				cnt, calls, err := c.processOwner(ctx, rep.RunID, root, o, opts.DryRun)
				mu.Lock()
				rep.LLMCalls += calls
				rep.Counts.add(cnt)
				switch {
				case err == nil:
					rep.OwnersDone++
					progressf(opts.Progress, "[%d/%d] %s: %s\n", rep.OwnersDone, rep.Owners, o, cnt.summary())
				case ctx.Err() != nil:
					// Interrupted mid-owner: its transaction rolled back; a resumed run redoes it.
				default:
					log.Warn("consolidating an owner failed", "tenant", o.Tenant, "user", o.UserID, "err", err)
					rep.Errors = append(rep.Errors, RunError{Tenant: o.Tenant, UserID: o.UserID, Error: err.Error()})
					progressf(opts.Progress, "[failed] %s: %v\n", o, err)
				}
				mu.Unlock()
				if err == nil && c.afterOwner != nil {
					c.afterOwner(o)
				}
			}
		}()
	}
feed:
	for _, o := range owners {
		select {
		case work <- o:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()

	rep.FinishedAt = time.Now().UTC()
	var runErr error
	switch {
	case ctx.Err() != nil:
		rep.Status = memory.RunInterrupted
		runErr = fmt.Errorf("consolidation run %d interrupted after %d of %d owners: %w", rep.RunID, rep.OwnersDone, rep.Owners, ctx.Err())
	case len(rep.Errors) > 0:
		rep.Status = memory.RunFailed
		runErr = fmt.Errorf("consolidation run %d: %d of %d owners failed (first: %s: %s)", rep.RunID, len(rep.Errors),
			rep.Owners, owner{rep.Errors[0].Tenant, rep.Errors[0].UserID}, rep.Errors[0].Error)
	default:
		rep.Status = memory.RunCompleted
	}
	if err := c.finishRun(ctx, rep); err != nil {
		runErr = errors.Join(runErr, err)
	}
	log.Info("consolidation run finished", "status", rep.Status, "owners_done", rep.OwnersDone,
		"duration", rep.Duration().Round(time.Millisecond), "llm_calls", rep.LLMCalls, "errors", len(rep.Errors))
	progressf(opts.Progress, "run %d %s in %s: %d/%d owners, %s\n", rep.RunID, rep.Status,
		rep.Duration().Round(time.Millisecond), rep.OwnersDone, rep.Owners, rep.Counts.summary())
	return rep, runErr
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

func (c Counts) summary() string {
	return fmt.Sprintf("%d clusters, %d distilled, %d merged, %d consolidated, %d expired, %d decayed, %d archived, %d capped, %d turns purged",
		c.Clusters, c.Distilled, c.Merged, c.Consolidated, c.Expired, c.Decayed, c.Archived, c.Capped, c.TurnsPurged)
}

// processOwner distils the owner's episodes, then forgets, recording the owner done
// in the forgetting transaction.
func (c *Consolidator) processOwner(ctx context.Context, runID, root int64, o owner, dryRun bool) (Counts, int, error) {
	var cnt Counts
	calls := 0
	if o.UserID != "" {
		// Agent and global pools (user_id '') are shared: no per-user pattern to distil.
		dc, n, err := c.distil(ctx, o, dryRun)
		cnt.add(dc)
		calls += n
		if err != nil {
			return cnt, calls, fmt.Errorf("distilling: %w", err)
		}
	}
	fc, err := c.forget(ctx, runID, root, o, cnt, dryRun)
	cnt.add(fc)
	if err != nil {
		return cnt, calls, fmt.Errorf("forgetting: %w", err)
	}
	return cnt, calls, nil
}
