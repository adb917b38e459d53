// Package reembed rolls a new embedding model in: it embeds every memory (and, when
// asked, every turn) that lacks a vector in that model, so a model change needs no
// re-extraction. `engram reembed` runs it once; `engram serve` runs it in the
// background for the configured model.
//
// The job's resume state is the data itself: what lacks a vector in the model. A
// finished owner has nothing left to read, so a rerun after a crash or Ctrl-C costs
// a census of the memories (and a look for whose rows lack a vector in the tenants
// with a gap) and redoes nothing, and a second run embeds nothing. Each
// batch is written in its own transaction as soon as it is embedded.
package reembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// Embedder is the model to embed with.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Defaults of Options.
const (
	DefaultBatchSize = 64
	// DefaultMaxBatchChars keeps one request well inside the input limits of hosted
	// endpoints (OpenAI: 300k tokens a request) even when memories are long.
	DefaultMaxBatchChars = 100_000
	defaultOutageWait    = 5 * time.Second
	maxOutageWait        = time.Minute
)

// Kinds of rows a job embeds.
const (
	KindMemories = "memories"
	KindTurns    = "turns"
)

// Options select what to embed and how.
type Options struct {
	Tenant string  // empty: every tenant
	User   *string // nil: every owner; "" is a tenant's pool of agent and global memories
	Turns  bool    // also embed turns
	DryRun bool    // count what lacks a vector, embed nothing
	// BatchSize is how many texts go in one embedding call (default 64), cut further
	// so their text stays under MaxBatchChars (default 100,000 characters).
	BatchSize, MaxBatchChars int
	// Wait makes the job wait while another job holds the re-embedding lock; without
	// it the job returns at once with Report.Skipped.
	Wait bool
	// OutageWait is the first pause after the model stayed unavailable through the
	// client's own retries (default 5s, doubling to a minute): an outage waits, it
	// does not end the job.
	OutageWait time.Duration
	// Progress, when set, is called after each batch and once per kind at the start.
	Progress func(Progress)
	Logger   *slog.Logger
	// Pace spreads the count of every tenant's memories before and after the job
	// (memory.Pace; zero: the background pace, which pauses between batches).
	Pace memory.Pace
	// CensusAge reuses, for the count before the job, a census of memories taken
	// within it (serve's background job, right after the coverage tracker's count).
	// The count after the job is always new.
	CensusAge time.Duration
}

// Progress is how far a job is.
type Progress struct {
	Kind         string // KindMemories or KindTurns
	Tenant, User string // the owner being embedded
	Done, Total  int64  // rows of all kinds handled, and to handle
}

// Counts is what a job found and did for one kind.
type Counts struct {
	Missing  int64 `json:"missing"`  // lacking a vector when the job started
	Embedded int64 `json:"embedded"` // vectors written
	// Changed were edited or deleted while being embedded (their writer embeds the new
	// content, or nothing is left to embed).
	Changed int64 `json:"changed"`
	// Failed were refused by the model (a permanent error for that text); they keep
	// lacking a vector and are logged.
	Failed int64 `json:"failed"`
}

// Report is the outcome of a job.
type Report struct {
	Model   string `json:"model"`
	DryRun  bool   `json:"dry_run"`
	Skipped bool   `json:"skipped,omitempty"` // another job held the lock
	Tenants int    `json:"tenants"`
	Owners  int    `json:"owners"` // owners with something to embed
	// Memories and Turns (with Options.Turns) say what was found and done.
	Memories Counts  `json:"memories"`
	Turns    *Counts `json:"turns,omitempty"`
	// Coverage of every model, before and after.
	Before Coverages `json:"before"`
	After  Coverages `json:"after"`
}

// Coverages are the memories' and (with Options.Turns) the turns' coverage.
type Coverages struct {
	Memories memory.Coverage  `json:"memories"`
	Turns    *memory.Coverage `json:"turns,omitempty"`
}

// Store is what a job reads and writes.
type Store interface {
	MetricTenants(ctx context.Context) ([]string, error)
	MemoryCoverage(ctx context.Context, tenant string, user *string) (memory.Coverage, error)
	TurnCoverage(ctx context.Context, tenant string, user *string) (memory.Coverage, error)
	RecentCensus(ctx context.Context, maxAge time.Duration, pace memory.Pace) (memory.Census, error)
	AllTurnCoverage(ctx context.Context) (map[string]memory.Coverage, error)
	MemoryGaps(ctx context.Context, tenant, model string, user *string) ([]memory.OwnerGap, error)
	TurnGaps(ctx context.Context, tenant, model string, user *string) ([]memory.OwnerGap, error)
	InTx(ctx context.Context, tenant string, fn func(*memory.Tx) error) error
	ReembedLock(ctx context.Context, wait bool) (*memory.ReembedLock, bool, error)
}

// Run embeds what lacks a vector in emb's model.
func Run(ctx context.Context, store Store, emb Embedder, opts Options) (Report, error) {
	opts = opts.withDefaults()
	rep := Report{Model: emb.Model(), DryRun: opts.DryRun}
	if opts.Tenant != "" {
		if err := memory.CheckTenant(opts.Tenant); err != nil {
			return rep, fmt.Errorf("re-embedding: tenant: %w", err)
		}
	}
	if !opts.DryRun {
		lock, ok, err := store.ReembedLock(ctx, opts.Wait)
		if err != nil {
			return rep, err
		}
		if !ok {
			rep.Skipped = true
			return rep, nil
		}
		defer lock.Release(ctx)
	}
	tenants := []string{opts.Tenant}
	if opts.Tenant == "" {
		var err error
		if tenants, err = store.MetricTenants(ctx); err != nil {
			return rep, err
		}
	}
	rep.Tenants = len(tenants)
	before, byTenant, err := tenantCoverage(ctx, store, tenants, opts)
	if err != nil {
		return rep, err
	}
	rep.Before = before
	j := &job{store: store, emb: emb, opts: opts, model: emb.Model()}
	kinds := []string{KindMemories}
	if opts.Turns {
		kinds = append(kinds, KindTurns)
		rep.Turns = &Counts{}
	}
	gaps := map[string]map[string][]memory.OwnerGap{} // kind → tenant → owners
	owners := map[string]bool{}
	for _, kind := range kinds {
		gaps[kind] = map[string][]memory.OwnerGap{}
		for _, t := range tenants {
			if c := byTenant[kind][t]; c.Total <= c.For(j.model) {
				continue // nothing of the tenant lacks a vector: no need to look for whose
			}
			g, err := j.gaps(ctx, kind, t)
			if err != nil {
				return rep, err
			}
			gaps[kind][t] = g
			for _, o := range g {
				j.counts(&rep, kind).Missing += o.Missing
				j.total += o.Missing
				owners[t+"\x00"+o.UserID] = true
			}
		}
	}
	rep.Owners = len(owners)
	if opts.DryRun {
		rep.After = rep.Before
		return rep, nil
	}
	opts.Logger.Info("re-embedding", "model", j.model, "tenants", len(tenants), "owners", rep.Owners, "missing", j.total)
	for _, kind := range kinds {
		j.report(kind, "", "")
		for _, t := range tenants {
			for _, o := range gaps[kind][t] {
				if err := j.owner(ctx, kind, t, o.UserID, j.counts(&rep, kind)); err != nil {
					return rep, err
				}
			}
		}
	}
	fresh := opts
	fresh.CensusAge = 0
	if rep.After, err = coverage(ctx, store, tenants, fresh); err != nil {
		return rep, err
	}
	opts.Logger.Info("re-embedded", "model", j.model, "memories", rep.Memories.Embedded, "failed", rep.Memories.Failed,
		"coverage", Ratio(rep.After.Memories, j.model))
	return rep, nil
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxBatchChars <= 0 {
		o.MaxBatchChars = DefaultMaxBatchChars
	}
	if o.OutageWait <= 0 {
		o.OutageWait = defaultOutageWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Ratio is the share of c's rows with a vector in model; 1 when there are none.
func Ratio(c memory.Coverage, model string) float64 {
	if c.Total == 0 {
		return 1
	}
	return float64(c.For(model)) / float64(c.Total)
}

// coverage sums the tenants' coverage per model.
func coverage(ctx context.Context, store Store, tenants []string, opts Options) (Coverages, error) {
	c, _, err := tenantCoverage(ctx, store, tenants, opts)
	return c, err
}

// tenantCoverage is coverage with each tenant's part by kind (KindMemories, KindTurns;
// a tenant without rows of a kind is absent from its map). Tenants nil is every tenant.
func tenantCoverage(ctx context.Context, store Store, tenants []string, opts Options) (Coverages, map[string]map[string]memory.Coverage, error) {
	var out Coverages
	sum := func(into *memory.Coverage, c memory.Coverage) {
		into.Total += c.Total
		for _, m := range c.Models {
			found := false
			for i := range into.Models {
				if into.Models[i].Model == m.Model {
					into.Models[i].WithVector += m.WithVector
					found = true
				}
			}
			if !found {
				into.Models = append(into.Models, m)
			}
		}
	}
	kinds := []string{KindMemories}
	if opts.Turns {
		out.Turns = &memory.Coverage{}
		kinds = append(kinds, KindTurns)
	}
	by := map[string]map[string]memory.Coverage{}
	for _, kind := range kinds {
		var err error
		if by[kind], err = kindCoverage(ctx, store, kind, tenants, opts); err != nil {
			return out, nil, err
		}
		into := &out.Memories
		if kind == KindTurns {
			into = out.Turns
		}
		if tenants == nil {
			for _, c := range by[kind] {
				sum(into, c)
			}
		}
		for _, t := range tenants {
			sum(into, by[kind][t])
		}
	}
	if out.Memories.Models == nil {
		out.Memories.Models = []memory.ModelCoverage{}
	}
	memory.SortModels(out.Memories.Models)
	if out.Turns != nil {
		memory.SortModels(out.Turns.Models)
	}
	return out, by, nil
}

// kindCoverage counts each of tenants' rows of kind: every tenant's at once (memories:
// the store's census; turns: one statement) when the job is not narrowed to a user or
// a tenant (a transaction per tenant cost seconds of both cores with tens of thousands
// of tenants), otherwise tenant by tenant.
func kindCoverage(ctx context.Context, store Store, kind string, tenants []string, opts Options) (map[string]memory.Coverage, error) {
	if opts.User == nil && (tenants == nil || len(tenants) > 1) {
		if kind == KindTurns {
			return store.AllTurnCoverage(ctx)
		}
		c, err := store.RecentCensus(ctx, opts.CensusAge, opts.Pace)
		if err != nil {
			return nil, err
		}
		return c.Coverage(), nil
	}
	out := make(map[string]memory.Coverage, len(tenants))
	for _, t := range tenants {
		var c memory.Coverage
		var err error
		if kind == KindTurns {
			c, err = store.TurnCoverage(ctx, t, opts.User)
		} else {
			c, err = store.MemoryCoverage(ctx, t, opts.User)
		}
		if err != nil {
			return nil, err
		}
		out[t] = c
	}
	return out, nil
}

type job struct {
	store       Store
	emb         Embedder
	opts        Options
	model       string
	done, total int64
	accepted    bool // the model has embedded a text in this job
}

func (j *job) counts(rep *Report, kind string) *Counts {
	if kind == KindTurns {
		return rep.Turns
	}
	return &rep.Memories
}

func (j *job) gaps(ctx context.Context, kind, tenant string) ([]memory.OwnerGap, error) {
	if kind == KindTurns {
		return j.store.TurnGaps(ctx, tenant, j.model, j.opts.User)
	}
	return j.store.MemoryGaps(ctx, tenant, j.model, j.opts.User)
}

func (j *job) report(kind, tenant, user string) {
	if j.opts.Progress != nil {
		j.opts.Progress(Progress{Kind: kind, Tenant: tenant, User: user, Done: j.done, Total: j.total})
	}
}

// owner embeds one owner's rows of kind, a keyset page at a time.
func (j *job) owner(ctx context.Context, kind, tenant, user string, c *Counts) error {
	after := ""
	if kind == KindMemories {
		after = uuid.Nil.String()
	}
	for {
		var page []memory.TextToEmbed
		err := j.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var err error
			if kind == KindTurns {
				page, err = tx.TurnsLackingVector(ctx, user, j.model, after, j.opts.BatchSize)
			} else {
				page, err = tx.MemoriesLackingVector(ctx, user, j.model, uuid.MustParse(after), j.opts.BatchSize)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("re-embedding %s of %s/%s: %w", kind, tenant, user, err)
		}
		if len(page) == 0 {
			return nil
		}
		page = cut(page, j.opts.MaxBatchChars)
		after = page[len(page)-1].ID
		vecs, err := j.embed(ctx, page)
		if err != nil {
			return fmt.Errorf("re-embedding %s of %s/%s: %w", kind, tenant, user, err)
		}
		if err := j.write(ctx, kind, tenant, page, vecs, c); err != nil {
			return fmt.Errorf("re-embedding %s of %s/%s: %w", kind, tenant, user, err)
		}
		j.done += int64(len(page))
		j.report(kind, tenant, user)
	}
}

// cut keeps the first texts of page whose total length stays under maxChars (at
// least one).
func cut(page []memory.TextToEmbed, maxChars int) []memory.TextToEmbed {
	n := 0
	for i, t := range page {
		n += len(t.Text)
		if n > maxChars && i > 0 {
			return page[:i]
		}
	}
	return page
}

// embed returns one vector per text; nil for a text the model refused. A model that
// stays unavailable through the client's retries is waited for. A refusal ends the
// job when nothing shows the model accepts other texts (a wrong key or model name
// refuses everything); otherwise the refused text is logged and left without vector.
func (j *job) embed(ctx context.Context, page []memory.TextToEmbed) ([][]float32, error) {
	texts := make([]string, len(page))
	for i, t := range page {
		texts[i] = t.Text
	}
	vecs, err := j.embedWaiting(ctx, texts)
	switch {
	case err == nil:
		j.accepted = true
		return vecs, nil
	case !errors.Is(err, llm.ErrPermanent):
		return nil, err
	case len(page) == 1 && !j.accepted:
		return nil, err
	case len(page) == 1:
		j.opts.Logger.Warn("the model refused a text; it keeps lacking a vector", "id", page[0].ID, "model", j.model, "error", err)
		return [][]float32{nil}, nil
	}
	// One text of the batch may be refused (too long, say): embed them one by one, so
	// the others still get their vectors.
	out := make([][]float32, len(page))
	var first error
	for i, t := range page {
		v, err := j.embedWaiting(ctx, []string{t.Text})
		switch {
		case err == nil:
			j.accepted = true
			out[i] = v[0]
		case !errors.Is(err, llm.ErrPermanent):
			return nil, err
		default:
			if first == nil {
				first = err
			}
			j.opts.Logger.Warn("the model refused a text; it keeps lacking a vector", "id", t.ID, "model", j.model, "error", err)
		}
	}
	if !j.accepted {
		return nil, first
	}
	return out, nil
}

func (j *job) embedWaiting(ctx context.Context, texts []string) ([][]float32, error) {
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(j.opts.OutageWait),
		backoff.WithMaxInterval(maxOutageWait), backoff.WithMaxElapsedTime(0))
	for {
		vecs, err := j.emb.Embed(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("%w: %d vectors for %d texts", llm.ErrPermanent, len(vecs), len(texts))
		}
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !llm.IsRetryable(err) {
			return nil, fmt.Errorf("embedding with %s: %w", j.model, err)
		}
		wait := b.NextBackOff()
		j.opts.Logger.Warn("the embedding model is unavailable; waiting", "model", j.model, "wait", wait, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// write stores a page's vectors in one transaction of the tenant.
func (j *job) write(ctx context.Context, kind, tenant string, page []memory.TextToEmbed, vecs [][]float32, c *Counts) error {
	var embedded, changed, failed int64
	err := j.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		embedded, changed, failed = 0, 0, 0
		for i, t := range page {
			if len(vecs[i]) == 0 {
				failed++
				continue
			}
			e := memory.Embedding{Model: j.model, Vector: vecs[i]}
			var written bool
			var err error
			if kind == KindTurns {
				written, err = tx.AddMissingTurnEmbedding(ctx, t.ID, t.Text, e)
			} else {
				written, err = tx.AddMissingEmbedding(ctx, uuid.MustParse(t.ID), t.Text, e)
			}
			if err != nil {
				return err
			}
			if written {
				embedded++
			} else {
				changed++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.Embedded += embedded
	c.Changed += changed
	c.Failed += failed
	return nil
}
