package consolidator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/engramhq/engram/memory"
)

// ErrRunInProgress is returned by Run when another consolidation run (in this or any
// other process) holds the run lock. Runs fail fast rather than queue: the nightly
// schedule fires in every replica, and exactly one of them should do the work.
var ErrRunInProgress = errors.New("another consolidation run is in progress")

// Counts are what a run (or one owner) did, per action. They are stored as jsonb in
// consolidation_runs.counts and consolidation_progress.counts.
type Counts struct {
	Episodes     int `json:"episodes"`     // unconsolidated episodes examined
	Clusters     int `json:"clusters"`     // clusters of at least MinCluster episodes
	Distilled    int `json:"distilled"`    // distilled candidates that added a memory
	Merged       int `json:"merged"`       // ... that confirmed, updated or superseded one
	Noop         int `json:"noop"`         // ... the resolver (or the LLM) found nothing new in
	Replayed     int `json:"replayed"`     // ... already in the ledger (a resumed run)
	Consolidated int `json:"consolidated"` // source episodes marked consolidated
	Expired      int `json:"expired"`      // TTL passed
	Decayed      int `json:"decayed"`      // importance decayed
	Archived     int `json:"archived"`     // unused for ArchiveAfter
	Capped       int `json:"capped"`       // archived to keep the owner under MaxPerOwner
	TurnsPurged  int `json:"turns_purged"` // raw turns whose content retention deleted
}

func (c *Counts) add(o Counts) {
	c.Episodes += o.Episodes
	c.Clusters += o.Clusters
	c.Distilled += o.Distilled
	c.Merged += o.Merged
	c.Noop += o.Noop
	c.Replayed += o.Replayed
	c.Consolidated += o.Consolidated
	c.Expired += o.Expired
	c.Decayed += o.Decayed
	c.Archived += o.Archived
	c.Capped += o.Capped
	c.TurnsPurged += o.TurnsPurged
}

// RunError is one owner's failure; the run goes on with the other owners, ends
// "failed", and the next run (within NightlyConfig.ResumeWithin) retries only what
// failed.
type RunError struct {
	Tenant string `json:"tenant,omitempty"`
	UserID string `json:"user_id,omitempty"`
	Error  string `json:"error"`
}

// RunReport is the outcome of one run.
type RunReport struct {
	RunID         int64      `json:"run_id"`
	Resumes       int64      `json:"resumes,omitempty"` // the interrupted/failed run this one finished
	Status        string     `json:"status"`
	DryRun        bool       `json:"dry_run"`
	Tenant        string     `json:"tenant,omitempty"`
	User          string     `json:"user,omitempty"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    time.Time  `json:"finished_at"`
	Owners        int        `json:"owners"`         // owners this run had to process
	OwnersDone    int        `json:"owners_done"`    // ... and finished
	OwnersSkipped int        `json:"owners_skipped"` // done already by the run it resumes
	Counts        Counts     `json:"counts"`
	LLMCalls      int        `json:"llm_calls"`
	Errors        []RunError `json:"errors,omitempty"`
}

// Duration is how long the run took.
func (r RunReport) Duration() time.Duration { return r.FinishedAt.Sub(r.StartedAt) }

// acquireRunLock takes the run lock, or fails with ErrRunInProgress.
func (c *Consolidator) acquireRunLock(ctx context.Context) (*memory.RunLock, error) {
	lock, ok, err := c.store.TryRunLock(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrRunInProgress
	}
	return lock, nil
}

// startRun closes stale runs, decides whether this run resumes an earlier one, and
// records it.
func (c *Consolidator) startRun(ctx context.Context, lock *memory.RunLock, opts RunOptions) (id, resumes, root int64, err error) {
	host, _ := os.Hostname()
	return lock.StartRun(ctx, memory.RunStart{Tenant: opts.Tenant, User: opts.User, DryRun: opts.DryRun,
		ResumeWithin: c.cfg.ResumeWithin, Host: fmt.Sprintf("%s/%d", host, os.Getpid())})
}

// owner is one (tenant, user_id) the run visits.
type owner struct {
	Tenant string
	UserID string
}

func (o owner) String() string {
	if o.UserID == "" {
		return o.Tenant + "/(agent and global)"
	}
	return o.Tenant + "/" + o.UserID
}

// listOwners returns the owners the run must visit (registry order, filtered) and how
// many the chain's earlier runs finished already.
func listOwners(ctx context.Context, lock *memory.RunLock, root int64, opts RunOptions) ([]owner, int, error) {
	rs, skipped, err := lock.OwnersToConsolidate(ctx, root, opts.Tenant, opts.User)
	if err != nil {
		return nil, 0, err
	}
	out := make([]owner, len(rs))
	for i, o := range rs {
		out[i] = owner(o)
	}
	return out, skipped, nil
}

// finishRun stores the final state of a run (even when ctx was cancelled).
func (c *Consolidator) finishRun(ctx context.Context, rep RunReport) error {
	errs := rep.Errors
	if errs == nil {
		errs = []RunError{}
	}
	return c.store.FinishRun(ctx, memory.RunEnd{ID: rep.RunID, Status: rep.Status, Owners: rep.Owners,
		OwnersDone: rep.OwnersDone, OwnersSkipped: rep.OwnersSkipped, Counts: rep.Counts, LLMCalls: rep.LLMCalls,
		Errors: errs})
}

// RunRecord is one row of consolidation_runs.
type RunRecord struct {
	ID            int64      `json:"id"`
	Resumes       *int64     `json:"resumes,omitempty"`
	RootID        int64      `json:"root_id"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	Status        string     `json:"status"`
	Tenant        string     `json:"tenant,omitempty"`
	User          string     `json:"user,omitempty"`
	DryRun        bool       `json:"dry_run"`
	Owners        int        `json:"owners"`
	OwnersDone    int        `json:"owners_done"`
	OwnersSkipped int        `json:"owners_skipped"`
	Counts        Counts     `json:"counts"`
	LLMCalls      int        `json:"llm_calls"`
	Errors        []RunError `json:"errors,omitempty"`
	Host          string     `json:"host,omitempty"`
}

// Runs lists the most recent runs, newest first.
func (c *Consolidator) Runs(ctx context.Context, limit int) ([]RunRecord, error) {
	if limit <= 0 {
		limit = 20
	}
	recs, err := c.store.ConsolidationRuns(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]RunRecord, len(recs))
	for i, r := range recs {
		x := RunRecord{ID: r.ID, Resumes: r.Resumes, RootID: r.RootID, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
			Status: r.Status, Tenant: r.Tenant, User: r.User, DryRun: r.DryRun, Owners: r.Owners,
			OwnersDone: r.OwnersDone, OwnersSkipped: r.OwnersSkipped, LLMCalls: r.LLMCalls, Host: r.Host}
		if err := json.Unmarshal(r.Counts, &x.Counts); err != nil {
			return nil, fmt.Errorf("listing consolidation runs: the counts of run %d: %w", r.ID, err)
		}
		if err := json.Unmarshal(r.Errors, &x.Errors); err != nil {
			return nil, fmt.Errorf("listing consolidation runs: the errors of run %d: %w", r.ID, err)
		}
		out[i] = x
	}
	return out, nil
}
