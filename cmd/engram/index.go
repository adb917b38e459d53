package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/engramhq/engram/memory"
)

const indexUsage = `Usage: engram index [maintain] [flags]
       engram index list [--json]

Very large owners (a user, or a tenant's global scope, with more than
ENGRAM_HNSW_THRESHOLD vectors of one model) get a partial HNSW index of their
own, which their searches and the resolver use (iterative scans, re-ranked by
exact distance); every other owner keeps the exact scan. Each new index (and
one built before this was measured) is measured on sample queries against the
exact scan: below ENGRAM_INDEX_RECALL_TARGET an HNSW build is built once more,
and what still falls short reads more of its index (up to twice ef_search or
probes); "list" shows the recall measured. Owners below 50,000 vectors get a
lighter graph (m 16, ef_construction 64), and the configured one when they grow
past it. From
ENGRAM_IVF_THRESHOLD vectors on the owner's index is IVFFlat instead (one list
a 500 vectors; a search reads one list in 50, at least 40, then the fewest lists,
down to 10, whose sample still reaches the recall target), rebuilt when the
owner doubles. Owners of 100,000 memories and more also get a full-text index
of their own (their keyword side reads it instead of every owner's one).
"maintain" (the default) builds the missing ones (CREATE INDEX CONCURRENTLY:
writes go on), replaces those whose owner crossed the IVFFlat threshold or
outgrew its lists, and drops those of owners that shrank below half the
threshold, once; serve does the same every ENGRAM_HNSW_INTERVAL when it has the
owner role's URL. Each pass also reads the IVFFlat indexes into shared buffers
(pg_prewarm, where the database has it: their scans never keep them there).
"list" shows them, the full-text indexes too.
Runs as the owner role (ENGRAM_MIGRATE_DATABASE_URL): the application role owns
nothing and cannot create an index.
`

func runIndex(ctx context.Context, env *Env, args []string) error {
	// The subcommand may stand among the flags (index --json list): no flag of index
	// takes a word as its value, so the first "maintain" or "list" is it.
	sub := "maintain"
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "maintain" || a == "list" {
			sub, args = a, append(append([]string{}, args[:i]...), args[i+1:]...)
			break
		}
	}
	fs := usageFlagSet("engram index "+sub, indexUsage, env.Stderr)
	cfg := env.Config.hnswConfig()
	if sub == "maintain" {
		fs.IntVar(&cfg.Threshold, "threshold", cfg.Threshold, "owner size from which an owner gets an index (ENGRAM_HNSW_THRESHOLD)")
		fs.IntVar(&cfg.EfSearch, "ef-search", cfg.EfSearch, "hnsw.ef_search of new indexes (ENGRAM_HNSW_EF_SEARCH)")
		fs.IntVar(&cfg.IVFThreshold, "ivf-threshold", cfg.IVFThreshold, "owner size from which its index is IVFFlat instead of HNSW (ENGRAM_IVF_THRESHOLD)")
		fs.Float64Var(&cfg.RecallTarget, "recall-target", cfg.RecallTarget, "recall@10 a new or unmeasured index must reach on sample queries; 0: the default 0.95, negative: not measured (ENGRAM_INDEX_RECALL_TARGET)")
	}
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err // --help is flag.ErrHelp, which run treats as success
	}
	if cfg.Threshold < 2 {
		return usagef("index: --threshold must be at least 2, got %d", cfg.Threshold)
	}
	if cfg.IVFThreshold < 2 {
		return usagef("index: --ivf-threshold must be at least 2, got %d", cfg.IVFThreshold)
	}
	if !(cfg.RecallTarget <= 1) { // NaN too
		return usagef("index: --recall-target must be at most 1, got %g", cfg.RecallTarget)
	}
	if cfg.EfSearch < 1 || cfg.EfSearch > 1000 {
		return usagef("index: --ef-search must be in [1, 1000], got %d", cfg.EfSearch)
	}
	app := env.newApp()
	defer app.Close()
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	pool, err := app.openOwnerPool(ctx)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	owner := memory.NewStore(pool)
	if sub == "list" {
		ixs, sizes, err := owner.HNSWIndexes(ctx)
		if err != nil {
			return err
		}
		texts, err := owner.TextIndexes(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			// One array: the vector indexes' rows, then the full-text indexes' (kind "text").
			type row struct {
				Kind string `json:"kind"`
				memory.HNSWOwnerIndex
				Bytes int64 `json:"bytes"`
			}
			type textRow struct {
				Kind string `json:"kind"`
				memory.TextIndex
			}
			out := make([]any, 0, len(ixs)+len(texts))
			for i := range ixs {
				out = append(out, row{"vector", ixs[i], sizes[i]})
			}
			for _, t := range texts {
				out = append(out, textRow{"text", t})
			}
			return writeJSON(env.Stdout, out)
		}
		tw := newTabWriter(env.Stdout, false)
		fmt.Fprintln(tw, "TENANT\tOWNER\tMODEL\tDIMS\tSTATE\tROWS AT BUILD\tMETHOD\tSEARCH\tRECALL@10\tMB\tINDEX")
		for i, ix := range ixs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%.1f\t%s\n", ix.Tenant, ownerLabel(ix.UserID), ix.Model, ix.Dims, ix.State, ix.Rows,
				ix.Method, ix.Reads(), ix.RecallText(), float64(sizes[i])/(1<<20), ix.Name)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(texts) == 0 {
			return nil
		}
		fmt.Fprintln(env.Stdout, "\nowners' full-text indexes:")
		tw = newTabWriter(env.Stdout, false)
		fmt.Fprintln(tw, "TENANT\tOWNER\tVALID\tMB\tINDEX")
		for _, t := range texts {
			user := ownerLabel(t.UserID)
			if t.Tenant == "" { // every memory of its owner deleted; the next pass drops it
				t.Tenant, user = "(unknown)", "(unknown)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%v\t%.1f\t%s\n", t.Tenant, user, t.Valid, float64(t.Bytes)/(1<<20), t.Name)
		}
		return tw.Flush()
	}
	rep, err := owner.MaintainHNSW(ctx, cfg, env.Logger)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, rep)
	}
	printHNSWReport(env.Stdout, rep)
	return nil
}

func printHNSWReport(w io.Writer, rep memory.HNSWReport) {
	if rep.Busy {
		fmt.Fprintln(w, "another process is maintaining the vector indexes; nothing done")
		return
	}
	for _, ix := range rep.Built {
		fmt.Fprintf(w, "built %s for tenant %s owner %q (%d vectors) in %.1f s; recall@10 %s at %s\n", ix.Name, ix.Tenant, ix.UserID,
			ix.Rows, ix.BuildSeconds, ix.RecallText(), ix.Reads())
	}
	for _, ix := range rep.Rebuilt {
		fmt.Fprintf(w, "rebuilt the index of tenant %s owner %q (%d vectors) as %s %s in %.1f s; recall@10 %s at %s\n", ix.Tenant,
			ix.UserID, ix.Rows, ix.Method, ix.Name, ix.BuildSeconds, ix.RecallText(), ix.Reads())
	}
	for _, ix := range rep.Measured {
		fmt.Fprintf(w, "measured %s of tenant %s owner %q: recall@10 %s at %s\n", ix.Name, ix.Tenant, ix.UserID, ix.RecallText(), ix.Reads())
	}
	if rep.RecallRebuilds > 0 {
		fmt.Fprintf(w, "%d new index(es) fell short of the recall target and were built again\n", rep.RecallRebuilds)
	}
	for _, ix := range rep.Dropped {
		fmt.Fprintf(w, "dropped %s of tenant %s owner %q\n", ix.Name, ix.Tenant, ix.UserID)
	}
	fmt.Fprintf(w, "%d built, %d rebuilt, %d dropped, %d kept\n", len(rep.Built), len(rep.Rebuilt), len(rep.Dropped), rep.Kept)
	if rep.Failed > 0 {
		fmt.Fprintf(w, "%d failed (logged; the next pass tries again)\n", rep.Failed)
	}
	if rep.PrewarmedBlocks > 0 {
		fmt.Fprintf(w, "IVFFlat indexes read into shared buffers: %d blocks (%.0f MB)\n", rep.PrewarmedBlocks,
			float64(rep.PrewarmedBlocks)*8192/(1<<20))
	}
	t := rep.Text
	fmt.Fprintf(w, "owners' full-text indexes: %d built (%.1f s), %d dropped, %d kept\n", t.Built, t.BuildSeconds, t.Dropped, t.Kept)
	if t.Failed > 0 {
		fmt.Fprintf(w, "%d full-text index builds failed (logged; the next pass tries again)\n", t.Failed)
	}
}

// runHNSW keeps the large owners' vector indexes up every ENGRAM_HNSW_INTERVAL until
// ctx ends (one maintainer at a time across processes: an advisory lock). It needs
// the owner role, which can create indexes: without ENGRAM_MIGRATE_DATABASE_URL it
// says so and leaves it to `engram index`. It returns once its goroutine has stopped.
func (a *App) runHNSW(ctx context.Context) (stop func()) {
	if a.Config.HNSWInterval <= 0 {
		return func() {}
	}
	if a.migrateURL() == "" {
		a.Logger.Info("large owners' vector indexes are not maintained by this process (no owner role URL): " +
			"set ENGRAM_MIGRATE_DATABASE_URL or run `engram index` from a maintenance job")
		return func() {}
	}
	pool, err := memory.ConnectOwner(ctx, a.migrateURL(), 2)
	if err != nil {
		a.Logger.Warn("large owners' vector indexes are not maintained: the owner role's pool did not open", "error", err)
		return func() {}
	}
	owner := memory.NewStore(pool)
	cfg := a.Config.hnswConfig()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer pool.Close()
		for {
			rep, err := owner.MaintainHNSW(ctx, cfg, a.Logger)
			switch {
			case ctx.Err() != nil:
				return // shutting down: a build cut short is redone on the next pass
			case err != nil:
				a.Logger.Warn("maintaining large owners' vector indexes failed; tried again later", "error", err)
			case len(rep.Built)+len(rep.Rebuilt)+len(rep.Dropped)+len(rep.Measured)+rep.Failed > 0:
				// Each index's measured recall is logged by the pass itself.
				a.Logger.Info("large owners' vector indexes", "built", len(rep.Built), "rebuilt", len(rep.Rebuilt),
					"dropped", len(rep.Dropped), "kept", rep.Kept, "measured", len(rep.Measured),
					"recall_rebuilds", rep.RecallRebuilds, "failed", rep.Failed)
			}
			if t := rep.Text; err == nil && t.Built+t.Dropped+t.Failed > 0 {
				a.Logger.Info("large owners' full-text indexes", "built", t.Built, "dropped", t.Dropped, "kept", t.Kept,
					"failed", t.Failed)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(a.Config.HNSWInterval):
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// ownerLabel is how `engram index list` names an owner: its user id, or "(global)"
// for the tenant's global scope ("").
func ownerLabel(userID string) string {
	if userID == "" {
		return "(global)"
	}
	return userID
}
