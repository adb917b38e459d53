package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/engramhq/engram/internal/reembed"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

const reembedSynopsis = `reembed [--model NAME] [--tenant T] [--user U] [--turns] [--dry-run] [--json] [--batch N]

Embeds every active, pending and archived memory (and with --turns every turn) that
lacks a vector in the model, so search uses the vector side for all of them; no
re-extraction. The model defaults to the configured one (ENGRAM_EMBED_MODEL, or
engram-hash-v1 without ENGRAM_EMBED_BASE_URL); another name is requested from the
same endpoint. Safe to interrupt and rerun: what lacks a vector is the progress, so
finished owners are not redone, and a second run embeds nothing.`

func runReembed(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "reembed", reembedSynopsis)
	model := fs.String("model", "", "embedding model to fill in (default: the configured one)")
	tenant := fs.String("tenant", "", "only this tenant (default: every tenant)")
	user := fs.String("user", "", "only this user (with --tenant; default: every owner)")
	turns := fs.Bool("turns", false, "also embed the turns (searched by vector with ENGRAM_EMBED_TURNS)")
	dryRun := fs.Bool("dry-run", false, "count what lacks a vector; embed nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	batch := fs.Int("batch", reembed.DefaultBatchSize, "texts per embedding request")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	var userSel *string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "user" {
			userSel = user
		}
	})
	if userSel != nil && *tenant == "" {
		return usagef("--user needs --tenant")
	}
	if err := checkTenantFlag(*tenant, false); err != nil {
		return err
	}
	if *batch < 1 || *batch > 2048 {
		return usagef("--batch %d: want 1 to 2048", *batch)
	}
	app := env.newApp()
	defer app.Close()
	emb, err := app.embedderFor(*model, *batch)
	if err != nil {
		return err
	}
	if err := app.openDB(ctx, true); err != nil {
		return err
	}
	// An operator's run counts at full speed; serve's background job at the background pace.
	opts := reembed.Options{Tenant: *tenant, User: userSel, Turns: *turns, DryRun: *dryRun, BatchSize: *batch, Logger: app.Logger,
		Pace: memory.Pace{Duty: 1}}
	prog := newReembedProgress(env.Stderr, *asJSON)
	opts.Progress = prog.update
	rep, err := reembed.Run(ctx, app.Store, emb, opts)
	if err == nil && rep.Skipped {
		fmt.Fprintln(env.Stderr, "engram reembed: another re-embedding job is running (engram serve re-embeds in the background); waiting for it")
		opts.Wait = true
		rep, err = reembed.Run(ctx, app.Store, emb, opts)
	}
	prog.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted after %d of %d: what is embedded is stored; run again to continue", prog.done, prog.total)
		}
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, rep)
	}
	printReembed(env.Stdout, rep)
	return nil
}

// embedderFor is the configured embedder, or the same endpoint's model name, sending
// batch texts a request.
func (a *App) embedderFor(model string, batch int) (llm.Embedder, error) {
	if a.Config.EmbedBaseURL == "" {
		emb, err := a.embedder()
		if err == nil && model != "" && model != emb.Model() {
			return nil, usagef("--model %s: without ENGRAM_EMBED_BASE_URL the only model is %s", model, emb.Model())
		}
		return emb, err
	}
	cfg := llm.EmbedConfig{BaseURL: a.Config.EmbedBaseURL, APIKey: a.Config.EmbedAPIKey, Model: a.Config.EmbedModel,
		Dims: a.Config.EmbedDims, BatchSize: batch}
	if model != "" && model != cfg.Model {
		cfg.Model, cfg.Dims = model, 0 // another model: its dimensions are learnt
	}
	return llm.NewOpenAIEmbedder(cfg, a.Logger)
}

func printReembed(w io.Writer, rep reembed.Report) {
	fmt.Fprintf(w, "model %s: %d tenants, %d owners with something to embed\n", rep.Model, rep.Tenants, rep.Owners)
	line := func(kind string, c reembed.Counts) {
		if rep.DryRun {
			fmt.Fprintf(w, "%s: %d lack a vector in %s (dry run: nothing embedded)\n", kind, c.Missing, rep.Model)
			return
		}
		fmt.Fprintf(w, "%s: %d lacked a vector in %s; embedded %d, changed meanwhile %d, refused by the model %d\n",
			kind, c.Missing, rep.Model, c.Embedded, c.Changed, c.Failed)
	}
	line("memories", rep.Memories)
	if rep.Turns != nil {
		line("turns", *rep.Turns)
	}
	cov := func(label string, c memory.Coverage) {
		models := c.Models
		if c.For(rep.Model) == 0 {
			models = append(models, memory.ModelCoverage{Model: rep.Model})
		}
		parts := make([]string, 0, len(models))
		for _, m := range models {
			pct := 100.0
			if c.Total > 0 {
				pct = 100 * float64(m.WithVector) / float64(c.Total)
			}
			parts = append(parts, fmt.Sprintf("%s %d/%d (%.1f%%)", m.Model, m.WithVector, c.Total, pct))
		}
		fmt.Fprintf(w, "%-22s %s\n", label+":", strings.Join(parts, ", "))
	}
	cov("coverage before", rep.Before.Memories)
	if !rep.DryRun {
		cov("coverage after", rep.After.Memories)
	}
	if rep.Before.Turns != nil {
		cov("turn coverage before", *rep.Before.Turns)
		if !rep.DryRun {
			cov("turn coverage after", *rep.After.Turns)
		}
	}
}

// reembedProgress shows a job's progress: a bar on a terminal, a line every few
// seconds otherwise, nothing with --json unless stderr is a terminal.
type reembedProgress struct {
	w           io.Writer
	bar         *progressbar.ProgressBar
	lines       bool
	last        time.Time
	done, total int64
}

func newReembedProgress(w io.Writer, asJSON bool) *reembedProgress {
	p := &reembedProgress{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("re-embedding"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("texts"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	} else {
		p.lines = !asJSON
	}
	return p
}

func (p *reembedProgress) update(pr reembed.Progress) {
	p.done, p.total = pr.Done, pr.Total
	if p.bar != nil {
		if p.bar.GetMax64() != pr.Total {
			p.bar.ChangeMax64(pr.Total)
		}
		p.bar.Describe("re-embedding " + pr.Kind)
		_ = p.bar.Set64(pr.Done)
		return
	}
	if p.lines && (time.Since(p.last) >= 2*time.Second || pr.Done == pr.Total) && pr.Total > 0 {
		p.last = time.Now()
		fmt.Fprintf(p.w, "reembed: %s %d/%d (%.0f%%)\n", pr.Kind, pr.Done, pr.Total, 100*float64(pr.Done)/float64(pr.Total))
	}
}

func (p *reembedProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
