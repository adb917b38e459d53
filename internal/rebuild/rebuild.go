// Package rebuild re-derives a tenant's memories from the turn log: it runs the stored
// turns through the extractor that is configured now (the live pipeline's own
// extraction, in-process) and the resolver (its own decisions, in-process), owner by
// owner, and replaces each owner's derived memories in one transaction under the
// owner's lock.
//
// What survives a rebuild, and why:
//   - Memories a person shaped are kept as they are: explicit ones (POST /v1/memories,
//     or one an explicit statement confirmed or rewrote), and any with a correction,
//     deprecation, rollback or restore in its history. They
//     are "kept and marked" rather than replayed on top: a correction names a memory
//     id and its exact words, and re-deriving would have to guess which new memory it
//     meant. The rebuilt candidates are resolved against them; one that would confirm,
//     update or supersede a kept memory is dropped (the person's version stands).
//   - The turns behind a memory a person shaped or hard-deleted are claimed: they are
//     read (as context for the others) but nothing derived from them is kept, and the
//     other memories drawn from them are kept as they are. A deleted memory's turns
//     come from its audit entry; for deletions older than that entry, a candidate is
//     dropped when its id is in the resolver's ledger as dropped or its content has
//     the deleted memory's hash.
//   - An erased user has no turns left, so nothing is rebuilt for them; the owner's
//     turns are read again under the lock, and a candidate whose turns are gone is
//     dropped.
//   - Memories drawn from turns the rebuild does not read (older than --since, content
//     deleted by retention, stored after the rebuild read them) are kept as they are.
//
// The replaced memories stay in history: each gets a version with change "rebuild"
// and the run id, status superseded and valid_to now. Rebuilt memories carry the run
// id in metadata (rebuild_run) and in their candidate ids. An owner whose rebuild
// yields the same memories (content, type, category, key, scope, status) is left
// untouched, which makes a second rebuild change nothing.
package rebuild

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Extractor is the live pipeline's extraction of one micro-batch
// (extractor.Pipeline.ExtractTurns).
type Extractor interface {
	ExtractTurns(ctx context.Context, turns []memory.Turn) ([]memory.Candidate, error)
}

// Resolver is the live resolver, in the caller's locked transaction
// (consolidator.Resolver.ResolveLocked).
type Resolver interface {
	ResolveLocked(ctx context.Context, tx *memory.Tx, c memory.Candidate) (consolidator.Decision, error)
}

// Config wires a Rebuilder.
type Config struct {
	Store     *memory.Store
	Extractor Extractor
	Resolver  Resolver
	// ExtractorID names the extractor (name/version/model): a run is resumed only by
	// a rebuild with the same one.
	ExtractorID string
	// BatchMax is the live pipeline's micro-batch size (extractor.Pipeline's
	// Config().BatchMax): a session's turns are extracted in runs of this many.
	BatchMax int
	// ExtractConcurrency is how many of an owner's micro-batches are extracted at once
	// (model calls overlap; the resolution stays sequential). Default 4.
	ExtractConcurrency int
	Logger             *slog.Logger
}

// Rebuilder runs rebuilds.
type Rebuilder struct {
	cfg  Config
	log  *slog.Logger
	host string
}

// New checks cfg and returns a Rebuilder.
func New(cfg Config) (*Rebuilder, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("rebuild: Store is required")
	case cfg.Extractor == nil:
		return nil, errors.New("rebuild: Extractor is required")
	case cfg.Resolver == nil:
		return nil, errors.New("rebuild: Resolver is required")
	case cfg.ExtractorID == "":
		return nil, errors.New("rebuild: ExtractorID is required")
	case cfg.BatchMax <= 0:
		return nil, errors.New("rebuild: BatchMax must be positive")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ExtractConcurrency <= 0 {
		cfg.ExtractConcurrency = 4
	}
	host, _ := os.Hostname()
	return &Rebuilder{cfg: cfg, log: cfg.Logger.With("component", "rebuild"), host: fmt.Sprintf("%s/%d", host, os.Getpid())}, nil
}

// Options say what to rebuild.
type Options struct {
	Tenant string
	User   string     // empty: every user of the tenant with turns
	Since  *time.Time // only turns that occurred at or after it
	DryRun bool       // report what would change, change nothing
	// Progress, when set, is called after each owner (and once before the first).
	Progress func(Progress)
}

// Progress is where a run is.
type Progress struct {
	Owners, Done int
	User         string // the owner just done
	Turns        int    // turns read so far
	Elapsed      time.Duration
}

// ErrRunning is returned when another rebuild of the tenant holds its lock.
var ErrRunning = errors.New("another rebuild of this tenant is running")

// MemoryLine is a memory in a report: enough to read, no more.
type MemoryLine struct {
	ID       uuid.UUID       `json:"id,omitzero"`
	Type     memory.Type     `json:"type"`
	Category memory.Category `json:"category"`
	Key      string          `json:"key,omitempty"`
	Status   memory.Status   `json:"status"`
	Content  string          `json:"content"`
}

// Change is a memory the rebuild replaces by a different one of the same slot (key,
// or else the same first source turn).
type Change struct {
	From MemoryLine `json:"from"`
	To   MemoryLine `json:"to"`
}

// OwnerReport is what the rebuild did (or, in a dry run, would do) to one owner.
type OwnerReport struct {
	User       string       `json:"user_id"`
	Outcome    string       `json:"outcome"` // replaced, unchanged, empty (would-replace in a dry run)
	Turns      int          `json:"turns"`
	Before     int          `json:"memories_before"` // derived memories that a rebuild replaces
	After      int          `json:"memories_after"`  // rebuilt memories
	Kept       int          `json:"kept"`            // memories kept as they are
	Candidates int          `json:"candidates"`      // extracted from the turns
	Dropped    int          `json:"candidates_dropped"`
	Added      []MemoryLine `json:"added,omitempty"`
	Removed    []MemoryLine `json:"removed,omitempty"`
	Changed    []Change     `json:"changed,omitempty"`
	// Extracting is the time spent extracting (no lock held); Resolving the time in
	// the owner's locked transaction.
	Extracting time.Duration `json:"extracting_ns"`
	Resolving  time.Duration `json:"resolving_ns"`
}

// Report is a run's outcome.
type Report struct {
	RunID         uuid.UUID           `json:"run_id,omitzero"`
	Tenant        string              `json:"tenant"`
	User          string              `json:"user_id,omitempty"`
	Since         *time.Time          `json:"since,omitempty"`
	DryRun        bool                `json:"dry_run"`
	Resumed       bool                `json:"resumed"`
	Status        string              `json:"status"`
	Extractor     string              `json:"extractor"`
	Owners        int                 `json:"owners"`
	OwnersSkipped int                 `json:"owners_skipped"` // done by the run this one resumed
	Replaced      int                 `json:"owners_replaced"`
	Unchanged     int                 `json:"owners_unchanged"`
	Turns         int                 `json:"turns"`
	Candidates    int                 `json:"candidates"`
	Dropped       int                 `json:"candidates_dropped"`
	Before        int                 `json:"memories_before"`
	After         int                 `json:"memories_after"`
	Kept          int                 `json:"memories_kept"`
	Extracting    time.Duration       `json:"extracting_ns"`
	Resolving     time.Duration       `json:"resolving_ns"`
	Started       time.Time           `json:"started_at"`
	Elapsed       time.Duration       `json:"elapsed_ns"`
	TurnsPerSec   float64             `json:"turns_per_second"`
	OwnerReports  []OwnerReport       `json:"owners_detail"`
	Errors        []map[string]string `json:"errors,omitempty"`
}

// Run rebuilds opts.Tenant's memories. At most one rebuild per tenant runs at a
// time: a second one fails at once with ErrRunning. A run that was interrupted (or
// failed) is resumed by the next one with the same filters and extractor, which
// skips the owners it finished. When ctx ends, the owner in progress is rolled back
// and the run is recorded as interrupted.
func (r *Rebuilder) Run(ctx context.Context, opts Options) (Report, error) {
	rep := Report{Tenant: opts.Tenant, User: opts.User, Since: opts.Since, DryRun: opts.DryRun,
		Extractor: r.cfg.ExtractorID, Started: time.Now()}
	if err := memory.CheckTenant(opts.Tenant); err != nil {
		return rep, fmt.Errorf("rebuild: --tenant: %w", err)
	}
	if opts.User != "" && !memory.ValidID(opts.User, memory.MaxIDLength) {
		return rep, fmt.Errorf("rebuild: --user %q: want 1-128 characters of [A-Za-z0-9._:@-]", opts.User)
	}
	release, ok, err := r.cfg.Store.TryLock(ctx, "engram-rebuild/"+opts.Tenant)
	if err != nil {
		return rep, fmt.Errorf("rebuild: %w", err)
	}
	if !ok {
		return rep, r.runningError(ctx, opts.Tenant)
	}
	defer release()

	var users []string
	var deleted map[string]memory.DeletedMemories
	var run memory.RebuildRun
	var done map[string]bool
	err = r.cfg.Store.InTx(ctx, opts.Tenant, func(tx *memory.Tx) error {
		var err error
		if opts.User != "" {
			users = []string{opts.User}
		} else if users, err = tx.TurnOwners(ctx, opts.Since); err != nil {
			return err
		}
		if deleted, err = tx.DeletedMemoriesByUser(ctx); err != nil {
			return err
		}
		if opts.DryRun {
			return nil
		}
		var found bool
		if run, found, err = tx.UnfinishedRebuildRun(ctx, opts.User, opts.Since, r.cfg.ExtractorID); err != nil {
			return err
		}
		if found {
			rep.Resumed = true
			if done, err = tx.RebuildOwnersDone(ctx, run.ID); err != nil {
				return err
			}
			run.Status, run.Host, run.OwnersTotal = "running", r.host, len(users)
			return tx.UpdateRebuildRun(ctx, run)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("making a run id: %w", err)
		}
		run = memory.RebuildRun{ID: id, UserFilter: opts.User, Since: opts.Since, Extractor: r.cfg.ExtractorID,
			Host: r.host, OwnersTotal: len(users), Counts: map[string]int{}}
		return tx.CreateRebuildRun(ctx, run)
	})
	if err != nil {
		return rep, fmt.Errorf("rebuild: starting: %w", err)
	}
	rep.RunID = run.ID
	if run.Counts == nil {
		run.Counts = map[string]int{}
	}
	rep.Owners = len(users)
	progress := func(user string, n int) {
		if opts.Progress != nil {
			opts.Progress(Progress{Owners: len(users), Done: n, User: user, Turns: rep.Turns, Elapsed: time.Since(rep.Started)})
		}
	}
	progress("", 0)
	n, finished := 0, 0 // owners seen; owners done (in this run or the one it resumes)
	for _, user := range users {
		if ctx.Err() != nil {
			break
		}
		if done[user] {
			rep.OwnersSkipped++
			n++
			finished++
			progress(user, n)
			continue
		}
		or, err := r.owner(ctx, opts, run.ID, user, deleted[user])
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.log.Warn("owner not rebuilt", "tenant", opts.Tenant, "user", user, "err", err)
			rep.Errors = append(rep.Errors, map[string]string{"user_id": user, "error": err.Error()})
			n++
			progress(user, n)
			continue
		}
		rep.add(or)
		n++
		finished++
		progress(user, n)
	}
	rep.Elapsed = time.Since(rep.Started)
	if s := rep.Elapsed.Seconds(); s > 0 {
		rep.TurnsPerSec = float64(rep.Turns) / s
	}
	switch {
	case ctx.Err() != nil:
		rep.Status = "interrupted"
	case len(rep.Errors) > 0:
		rep.Status = "failed"
	default:
		rep.Status = "completed"
	}
	if opts.DryRun {
		rep.RunID = uuid.Nil
		if ctx.Err() != nil {
			return rep, fmt.Errorf("rebuild: dry run interrupted: %w", ctx.Err())
		}
		return rep, nil
	}
	// The run record is written even when ctx has ended, so the next run resumes it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	run.Status, run.OwnersDone, run.Errors = rep.Status, finished, rep.Errors
	for k, v := range map[string]int{"turns": rep.Turns, "candidates": rep.Candidates, "replaced": rep.Replaced,
		"unchanged": rep.Unchanged, "before": rep.Before, "after": rep.After, "kept": rep.Kept, "dropped": rep.Dropped} {
		run.Counts[k] += v
	}
	if err := r.cfg.Store.InTx(fctx, opts.Tenant, func(tx *memory.Tx) error { return tx.UpdateRebuildRun(fctx, run) }); err != nil {
		return rep, fmt.Errorf("rebuild: recording the end of run %s: %w", run.ID, err)
	}
	switch rep.Status {
	case "interrupted":
		return rep, fmt.Errorf("rebuild: run %s interrupted after %d of %d owners (run it again to resume): %w",
			run.ID, finished, len(users), ctx.Err())
	case "failed":
		return rep, fmt.Errorf("rebuild: run %s: %d owners failed (run it again to retry them)", run.ID, len(rep.Errors))
	}
	return rep, nil
}

func (rep *Report) add(or OwnerReport) {
	switch or.Outcome {
	case "replaced", "would-replace":
		rep.Replaced++
	default:
		rep.Unchanged++
	}
	rep.Turns += or.Turns
	rep.Before += or.Before
	rep.After += or.After
	rep.Kept += or.Kept
	rep.Dropped += or.Dropped
	rep.Candidates += or.Candidates
	rep.Extracting += or.Extracting
	rep.Resolving += or.Resolving
	rep.OwnerReports = append(rep.OwnerReports, or)
}

// runningError names the run that holds the tenant's lock.
func (r *Rebuilder) runningError(ctx context.Context, tenant string) error {
	var runs []memory.RebuildRun
	_ = r.cfg.Store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		runs, err = tx.LatestRebuildRuns(ctx, 5)
		return err
	})
	for _, run := range runs {
		if run.Status == "running" {
			return fmt.Errorf("rebuild of tenant %s: %w (run %s, started %s on %s); wait for it or stop it first",
				tenant, ErrRunning, run.ID, run.StartedAt.UTC().Format(time.RFC3339), run.Host)
		}
	}
	return fmt.Errorf("rebuild of tenant %s: %w (a dry run, which keeps no record); wait for it to finish", tenant, ErrRunning)
}

// batches cuts an owner's turns into the live pipeline's micro-batches: each session's
// turns in order, BatchMax at a time, the batches ordered by when their last turn
// occurred (when the live pipeline would have flushed them). Turns whose content
// retention deleted are left out, as they were never extracted.
func (r *Rebuilder) batches(turns []memory.Turn) [][]memory.Turn {
	type sess struct {
		turns []memory.Turn
		last  []int
	}
	bySession := map[string]*sess{}
	var order []string
	pos := map[string]int{}
	for i, t := range turns {
		if t.Deleted || strings.TrimSpace(t.Content) == "" && t.Tool == nil {
			continue
		}
		pos[t.TurnID] = i
		s, ok := bySession[t.SessionID]
		if !ok {
			s = &sess{}
			bySession[t.SessionID] = s
			order = append(order, t.SessionID)
		}
		s.turns = append(s.turns, t)
	}
	var out [][]memory.Turn
	for _, id := range order {
		st := bySession[id].turns
		for len(st) > 0 {
			k := min(len(st), r.cfg.BatchMax)
			out = append(out, st[:k:k])
			st = st[k:]
		}
	}
	slices.SortStableFunc(out, func(a, b []memory.Turn) int {
		return cmp.Compare(pos[a[len(a)-1].TurnID], pos[b[len(b)-1].TurnID])
	})
	return out
}

// owner rebuilds one owner: extraction first, without any lock (it may call a model
// for a while), then the replacement in one transaction under the owner's lock.
func (r *Rebuilder) owner(ctx context.Context, opts Options, runID uuid.UUID, user string, deleted memory.DeletedMemories) (OwnerReport, error) {
	or := OwnerReport{User: user}
	var turns []memory.Turn
	err := r.cfg.Store.InTx(ctx, opts.Tenant, func(tx *memory.Tx) error {
		var err error
		turns, err = tx.OwnerTurns(ctx, user, opts.Since)
		return err
	})
	if err != nil {
		return or, err
	}
	read := map[string]bool{}
	var cands []memory.Candidate
	start := time.Now()
	// Batches are extracted concurrently (each reads only stored turns: its window
	// does not depend on another batch's result) and their candidates are taken in
	// batch order, as the resolver would have seen them.
	batches := r.batches(turns)
	results := make([][]memory.Candidate, len(batches))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.ExtractConcurrency)
	for i, b := range batches {
		for _, t := range b {
			read[t.TurnID] = true
		}
		g.Go(func() error {
			cs, err := r.cfg.Extractor.ExtractTurns(gctx, b)
			if err != nil {
				return fmt.Errorf("extracting session %s of %s: %w", b[0].SessionID, user, err)
			}
			results[i] = cs
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return or, err
	}
	for _, cs := range results {
		cands = append(cands, cs...)
	}
	extracting := time.Since(start)
	start = time.Now()
	err = r.cfg.Store.InTx(ctx, opts.Tenant, func(tx *memory.Tx) error {
		or = OwnerReport{User: user, Turns: len(read)} // a retried transaction starts over
		if err := tx.LockOwner(ctx, memory.Owner{UserID: user, Scope: memory.ScopeUser}.LockKey()); err != nil {
			return err
		}
		live, err := tx.LiveTurnIDs(ctx, user)
		if err != nil {
			return err
		}
		mems, err := tx.OwnerMemories(ctx, user)
		if err != nil {
			return err
		}
		plan := classify(mems, read, live, deleted)
		or.Kept = len(plan.kept)
		keep, err := r.filter(ctx, tx, cands, plan, live, deleted)
		if err != nil {
			return err
		}
		or.Candidates, or.Dropped = len(cands), len(cands)-len(keep)
		if len(live) == 0 && len(plan.replace) == 0 {
			// Erased meanwhile (or never had content): nothing to do, nothing to record.
			or.Outcome = "empty"
			return nil
		}
		var rebuilt []memory.Memory
		changed, err := tx.Savepoint(ctx, func(tx *memory.Tx) (bool, error) {
			for _, m := range plan.replace {
				st := memory.StatusSuperseded
				if _, err := tx.Apply(ctx, m.ID, memory.Update{Change: memory.ChangeRebuild, Status: &st,
					Actor: "rebuild", Module: "rebuild", Reason: "replaced by rebuild " + runID.String()}); err != nil {
					return false, fmt.Errorf("retiring memory %s: %w", m.ID, err)
				}
			}
			made := map[uuid.UUID]bool{}
			var ids []uuid.UUID
			for _, c := range keep {
				c.ID = "rebuild_" + runID.String() + "_" + c.ID
				c.Metadata = withRun(c.Metadata, runID)
				var d consolidator.Decision
				applied, err := tx.Savepoint(ctx, func(tx *memory.Tx) (bool, error) {
					var err error
					d, err = r.cfg.Resolver.ResolveLocked(ctx, tx, c)
					if err != nil {
						return false, err
					}
					// A kept memory stays as a person (or an unread turn) left it.
					return !plan.keptIDs[d.MemoryID], nil
				})
				if err != nil {
					// Only a malformed candidate is dropped; anything else (an embedding
					// endpoint refusing every call, say) fails the owner, which keeps its
					// memories, rather than replacing them with fewer.
					if streams.IsPermanent(err) && errors.Is(err, memory.ErrInvalid) {
						r.log.Warn("candidate cannot be resolved; dropped", "tenant", opts.Tenant, "user", user, "err", err)
						or.Dropped++
						continue
					}
					return false, err
				}
				if !applied {
					or.Dropped++
					continue
				}
				if d.MemoryID != uuid.Nil && !made[d.MemoryID] {
					made[d.MemoryID] = true
					ids = append(ids, d.MemoryID)
				}
			}
			for _, id := range ids {
				m, err := tx.Get(ctx, id)
				if err != nil {
					return false, err
				}
				rebuilt = append(rebuilt, m)
			}
			old := make([]memory.Memory, len(plan.replace))
			for i, m := range plan.replace {
				old[i] = m.Memory
			}
			diff(&or, old, rebuilt)
			return !opts.DryRun && (len(or.Added) > 0 || len(or.Removed) > 0 || len(or.Changed) > 0), nil
		})
		if err != nil {
			return err
		}
		or.Before, or.After = len(plan.replace), len(rebuilt)
		switch {
		case changed:
			or.Outcome = "replaced"
		case opts.DryRun && (len(or.Added) > 0 || len(or.Removed) > 0 || len(or.Changed) > 0):
			or.Outcome = "would-replace"
		default:
			or.Outcome = "unchanged"
		}
		if opts.DryRun {
			return nil
		}
		return tx.MarkRebuildOwner(ctx, runID, user, or.Outcome, map[string]int{"turns": or.Turns,
			"before": or.Before, "after": or.After, "kept": or.Kept, "dropped": or.Dropped})
	})
	if err != nil {
		return or, fmt.Errorf("rebuilding %s: %w", user, err)
	}
	or.Extracting, or.Resolving = extracting, time.Since(start)
	if or.Outcome == "unchanged" {
		or.Added, or.Removed, or.Changed = nil, nil, nil
	}
	return or, nil
}

func withRun(meta map[string]any, runID uuid.UUID) map[string]any {
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["rebuild_run"] = runID.String()
	return out
}

// ownerPlan is an owner's memories sorted by what the rebuild does with them.
type ownerPlan struct {
	replace []memory.OwnerMemory
	kept    []memory.OwnerMemory
	keptIDs map[uuid.UUID]bool
	claimed map[string]bool // turns nothing may be derived from again
}

// classify decides which memories the rebuild replaces: those drawn only from turns
// it read, by no person's hand, from no claimed turn. Memories an earlier rebuild
// replaced are history and take no part.
func classify(mems []memory.OwnerMemory, read, live map[string]bool, deleted memory.DeletedMemories) ownerPlan {
	p := ownerPlan{keptIDs: map[uuid.UUID]bool{}, claimed: map[string]bool{}}
	for id := range deleted.TurnIDs {
		p.claimed[id] = true
	}
	for _, m := range mems {
		if m.ByHand {
			for _, t := range m.TurnIDs {
				p.claimed[t] = true
			}
		}
	}
	for _, m := range mems {
		if m.LastChange == memory.ChangeRebuild && m.Status == memory.StatusSuperseded {
			continue
		}
		derived := !m.ByHand && len(m.TurnIDs) > 0 &&
			(m.Source == memory.SourceUser || m.Source == memory.SourceAssistant || m.Source == memory.SourceTool)
		for _, t := range m.TurnIDs {
			if !read[t] || !live[t] || p.claimed[t] {
				derived = false
			}
		}
		if derived {
			p.replace = append(p.replace, m)
			continue
		}
		p.kept = append(p.kept, m)
		p.keptIDs[m.ID] = true
	}
	return p
}

// filter drops the candidates that must not be resolved: from a turn that is gone or
// claimed, or restating a hard-deleted memory (by ledger entry or content hash).
func (r *Rebuilder) filter(ctx context.Context, tx *memory.Tx, cands []memory.Candidate, p ownerPlan,
	live map[string]bool, deleted memory.DeletedMemories) ([]memory.Candidate, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	dropped, err := tx.DroppedCandidates(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []memory.Candidate
	for _, c := range cands {
		ok := !dropped[c.ID] && !deleted.ContentHashes[fmt.Sprintf("%x", memory.ContentHash(c.Content))]
		for _, t := range c.SourceTurnIDs {
			if !live[t] || p.claimed[t] {
				ok = false
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}
