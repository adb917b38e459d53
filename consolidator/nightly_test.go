package consolidator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// nightlyEnv is a store with a resolver and a consolidator on the hash embedder.
type nightlyEnv struct {
	t     *testing.T
	ctx   context.Context
	store *memory.Store
	pool  *pgxpool.Pool // the store's, for test set-up SQL (pgtest.Exec, pgtest.Count)
	emb   *llm.HashEmbedder
	res   *Resolver
	c     *Consolidator
}

func newNightlyEnv(t *testing.T, chat *llm.ChatClient, cfg NightlyConfig) *nightlyEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	res := NewResolver(s, emb, nil, ResolverConfig{}, nil)
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 1
	}
	return &nightlyEnv{t: t, ctx: ctx, store: s, pool: pool, emb: emb, res: res, c: NewConsolidator(s, res, emb, chat, cfg, nil)}
}

// seed stores a turn and an episodic memory made from it, as the extractor and the
// resolver would, with its hash embedding.
func (e *nightlyEnv) seed(tenant, user, content string, at time.Time) uuid.UUID {
	e.t.Helper()
	return pgtest.SeedEpisode(e.t, e.ctx, e.store, e.emb, tenant, user, content, at)
}

// exec runs SQL in a tenant transaction.
func (e *nightlyEnv) exec(tenant, sql string, args ...any) {
	e.t.Helper()
	pgtest.Exec(e.t, e.pool, tenant, sql, args...)
}

// count runs a count query in a tenant transaction.
func (e *nightlyEnv) count(tenant, sql string, args ...any) int {
	e.t.Helper()
	return pgtest.Count(e.t, e.pool, tenant, sql, args...)
}

// inTenant runs fn in a transaction of tenant on the test pool (row-level security
// applies), for set-up and assertions no store method offers.
func (e *nightlyEnv) inTenant(tenant string, fn func(pgx.Tx) error) {
	e.t.Helper()
	err := pgx.BeginFunc(e.ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(e.ctx, "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// semantic returns the owner's distilled memories.
func (e *nightlyEnv) semantic(tenant, user string) []memory.Detail {
	e.t.Helper()
	var ids []uuid.UUID
	e.inTenant(tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(e.ctx, `SELECT id FROM memories WHERE user_id = $1 AND source = 'consolidation' ORDER BY id`, user)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	var out []memory.Detail
	for _, id := range ids {
		d, err := e.store.Detail(e.ctx, tenant, id)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func (e *nightlyEnv) run(opts RunOptions) RunReport {
	e.t.Helper()
	rep, err := e.c.Run(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("run: %v (report %+v)", err, rep)
	}
	return rep
}

var paymentEpisodes = []string{
	"昨天支付失败，因为余额不足",
	"今天支付失败，因为接口超时",
	"上午支付失败，提示网络错误",
	"晚上支付失败，因为验证码过期",
	"周末支付失败，银行卡被冻结",
}

var otherEpisodes = []string{"用户周末去爬山", "用户买了一台新电脑"}

// seedPayments seeds the five payment failures (one day apart from 2026-01-03) and two
// unrelated episodes; it returns the payment memory ids.
func (e *nightlyEnv) seedPayments(tenant, user string) []uuid.UUID {
	day := time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC)
	var ids []uuid.UUID
	for i, c := range paymentEpisodes {
		ids = append(ids, e.seed(tenant, user, c, day.AddDate(0, 0, 4*i)))
	}
	for i, c := range otherEpisodes {
		e.seed(tenant, user, c, day.AddDate(0, 0, 2*i+1))
	}
	return ids
}

// checkDistilled asserts one semantic memory with lineage to every source memory and
// each source's turn, and sources marked consolidated and down-weighted.
func (e *nightlyEnv) checkDistilled(tenant, user string, sources []uuid.UUID) memory.Detail {
	e.t.Helper()
	ds := e.semantic(tenant, user)
	if len(ds) != 1 {
		e.t.Fatalf("%d distilled memories for %s, want 1", len(ds), user)
	}
	d := ds[0]
	if d.Memory.Type != memory.Semantic || d.Memory.Status != memory.StatusActive || d.Memory.Source != memory.SourceConsolidation {
		e.t.Fatalf("distilled memory %+v", d.Memory)
	}
	mems, turns := map[string]bool{}, map[string]bool{}
	for _, l := range d.Lineage {
		if l.Kind == memory.LineageMemory {
			mems[l.SourceID] = true
		} else {
			turns[l.SourceID] = true
		}
	}
	for _, id := range sources {
		if !mems[id.String()] {
			e.t.Errorf("lineage lacks source memory %s", id)
		}
	}
	if len(mems) != len(sources) {
		e.t.Errorf("lineage has %d source memories, want %d", len(mems), len(sources))
	}
	wantTurns := e.count(tenant, `SELECT count(DISTINCT source_id) FROM memory_lineage
		WHERE source_kind = 'turn' AND memory_id = ANY($1)`, sources)
	if len(turns) != wantTurns || wantTurns != len(sources) {
		e.t.Errorf("lineage has %d turns, sources have %d, want %d", len(turns), wantTurns, len(sources))
	}
	for _, id := range sources {
		var src memory.Detail
		err := e.store.InTx(e.ctx, tenant, func(tx *memory.Tx) error {
			var err error
			src, err = tx.Detail(e.ctx, id)
			return err
		})
		if err != nil {
			e.t.Fatal(err)
		}
		last := src.Versions[len(src.Versions)-1]
		if src.Memory.ConsolidatedAt == nil || src.Memory.Status != memory.StatusActive ||
			last.Change != memory.ChangeConsolidate || !strings.Contains(last.Reason, d.Memory.ID.String()) {
			e.t.Errorf("source %s: consolidated %v, status %s, last version %+v", id, src.Memory.ConsolidatedAt, src.Memory.Status, last)
		}
		if src.Memory.Importance < 0.299 || src.Memory.Importance > 0.301 {
			e.t.Errorf("source %s importance %.3f, want 0.6 × 0.5", id, src.Memory.Importance)
		}
	}
	return d
}

func fakeChat(t *testing.T, fake *fakeopenai.Server) *llm.ChatClient {
	t.Helper()
	chat, err := llm.NewChat(llm.ChatConfig{BaseURL: fake.URL(), Model: "distiller", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

func TestDistilWithLLM(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	const rule = "用户的支付经常失败，原因多样（余额不足、接口超时、网络错误等）"
	fake.QueueChat(fakeopenai.Reply{Content: `{"content":"` + rule + `","category":"fact","key":"payment.failures","importance":0.7}`})
	e := newNightlyEnv(t, fakeChat(t, fake), NightlyConfig{})
	sources := e.seedPayments("acme", "u1")

	rep := e.run(RunOptions{})
	if rep.Status != memory.RunCompleted || rep.Counts.Clusters != 1 || rep.Counts.Distilled != 1 || rep.Counts.Consolidated != 5 || rep.LLMCalls != 1 {
		t.Fatalf("report %+v", rep)
	}
	if n := fake.ChatCalls(); n != 1 {
		t.Fatalf("%d chat calls, want 1", n)
	}
	req := fake.ChatRequests()[0]
	for _, c := range paymentEpisodes {
		if !strings.Contains(req.Messages[len(req.Messages)-1].Content, c) {
			t.Errorf("prompt lacks episode %q", c)
		}
	}
	d := e.checkDistilled("acme", "u1", sources)
	if d.Memory.Content != rule || d.Memory.Category != memory.CatFact || d.Memory.Key != "payment.failures" ||
		math.Abs(d.Memory.Importance-0.7) > 1e-6 || d.Memory.Model != "distiller" {
		t.Fatalf("distilled %+v", d.Memory)
	}

	// Nothing new: no cluster, no call, no memory.
	rep = e.run(RunOptions{})
	if rep.Counts.Clusters != 0 || rep.Counts.Distilled != 0 || fake.ChatCalls() != 1 || len(e.semantic("acme", "u1")) != 1 {
		t.Fatalf("second run %+v, %d calls", rep, fake.ChatCalls())
	}
}

func TestDistilOffline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		episodes []string
		prefix   string
	}{
		{"zh", paymentEpisodes, "反复出现（5 次，2026-01-03 至 2026-01-19）："},
		{"en", []string{"Payment failed yesterday because of insufficient balance",
			"Payment failed today due to an API timeout", "Payment failed again because the card was frozen",
			"The payment failed this morning with a network error"}, "Recurring (4 times between 2026-01-03 and 2026-01-15): "},
	}
	e := newNightlyEnv(t, nil, NightlyConfig{})
	day := time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC)
	sources := map[string][]uuid.UUID{}
	for _, tc := range cases {
		for i, c := range tc.episodes {
			sources[tc.name] = append(sources[tc.name], e.seed("acme", tc.name, c, day.AddDate(0, 0, 4*i)))
		}
		for _, c := range otherEpisodes {
			e.seed("acme", tc.name, c, day)
		}
	}
	rep := e.run(RunOptions{})
	if rep.Counts.Distilled != 2 || rep.LLMCalls != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := e.checkDistilled("acme", tc.name, sources[tc.name])
			if !strings.HasPrefix(d.Memory.Content, tc.prefix) {
				t.Fatalf("content %q, want prefix %q", d.Memory.Content, tc.prefix)
			}
			found := false
			for _, c := range tc.episodes {
				found = found || strings.HasSuffix(d.Memory.Content, c)
			}
			if !found || d.Memory.Category != memory.CatFact || d.Memory.Confidence < 0.8 {
				t.Fatalf("distilled %+v", d.Memory)
			}
		})
	}
	if rep := e.run(RunOptions{}); rep.Counts.Clusters != 0 || rep.Counts.Distilled != 0 {
		t.Fatalf("second run %+v", rep)
	}
	// The deterministic statement of the same sources is the same candidate.
	if got := e.count("acme", `SELECT count(*) FROM applied_candidates WHERE candidate_id LIKE 'distill-v1:%'`); got != 2 {
		t.Fatalf("%d distilled candidates in the ledger, want 2", got)
	}
}

// A distilled statement close to one of its own sources must not be merged into that
// source: it is a new, semantic memory derived from it.
func TestDistilledNotMergedIntoItsSource(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.QueueChat(fakeopenai.Reply{Content: `{"content":"昨天支付失败，因为余额不足。","category":"fact","key":null,"importance":0.6}`})
	e := newNightlyEnv(t, fakeChat(t, fake), NightlyConfig{})
	sources := e.seedPayments("acme", "u1")
	rep := e.run(RunOptions{})
	if rep.Counts.Distilled != 1 {
		t.Fatalf("report %+v", rep)
	}
	e.checkDistilled("acme", "u1", sources)
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	e.seedPayments("acme", "u1")
	e.exec("acme", `UPDATE memories SET updated_at = now() - interval '40 days', last_confirmed_at = now() - interval '40 days', expire_at = now() - interval '1 day'
		WHERE content = $1`, otherEpisodes[0])
	rep := e.run(RunOptions{DryRun: true})
	if !rep.DryRun || rep.Counts.Clusters != 1 || rep.Counts.Distilled != 0 || rep.Counts.Expired != 1 {
		t.Fatalf("dry run %+v", rep)
	}
	if n := e.count("acme", `SELECT count(*) FROM memories WHERE consolidated_at IS NOT NULL OR status <> 'active' OR type = 'semantic'`); n != 0 {
		t.Fatalf("dry run changed %d memories", n)
	}
	if n := e.count("acme", `SELECT count(*) FROM consolidation_progress`); n != 0 {
		t.Fatalf("dry run recorded progress for %d owners", n)
	}
	// A dry run is never resumed, and a real run after it does the work.
	rep = e.run(RunOptions{})
	if rep.Resumes != 0 || rep.Counts.Distilled != 1 || rep.Counts.Expired != 1 {
		t.Fatalf("real run %+v", rep)
	}
}

func TestResumeAfterInterruption(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	users := []string{"u1", "u2", "u3"}
	sources := map[string][]uuid.UUID{}
	for _, u := range users {
		sources[u] = e.seedPayments("acme", u)
		// An old memory per owner: decay must hit it exactly once across both runs.
		id := e.seed("acme", u, "用户以前住在杭州", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
		e.exec("acme", `UPDATE memories SET type = 'semantic', category = 'fact', importance = 0.5,
			updated_at = now() - interval '40 days',
			last_confirmed_at = now() - interval '40 days' WHERE id = $1`, id)
	}

	// Run 1 is killed after its first owner.
	ctx, cancel := context.WithCancel(e.ctx)
	var seen atomic.Int32
	e.c.afterOwner = func(owner) {
		if seen.Add(1) == 1 {
			cancel()
		}
	}
	rep1, err := e.c.Run(ctx, RunOptions{})
	if !errors.Is(err, context.Canceled) || rep1.Status != memory.RunInterrupted || rep1.OwnersDone != 1 {
		t.Fatalf("run 1: %v, %+v", err, rep1)
	}
	e.c.afterOwner = nil

	// A crash between the resolver's commit and the marking of the sources: the
	// candidate of u2 is in the ledger, its sources are not marked.
	eps, err := e.c.loadEpisodes(e.ctx, owner{"acme", "u2"})
	if err != nil {
		t.Fatal(err)
	}
	var members []episode
	for _, ix := range clusterEpisodes(eps, e.c.cfg.ClusterSim)[0] {
		members = append(members, eps[ix])
	}
	cand, applied, err := e.c.prepareCandidate(e.ctx, owner{"acme", "u2"}, members)
	if err != nil || applied {
		t.Fatalf("candidate of u2: applied %v, %v", applied, err)
	}
	if _, err := e.res.Resolve(e.ctx, cand); err != nil {
		t.Fatal(err)
	}

	rep2 := e.run(RunOptions{})
	if rep2.Status != memory.RunCompleted || rep2.Resumes != rep1.RunID || rep2.OwnersSkipped != 1 || rep2.Owners != 2 ||
		rep2.Counts.Replayed != 1 || rep2.Counts.Distilled != 1 || rep2.Counts.Decayed != 2 {
		t.Fatalf("run 2 %+v", rep2)
	}
	for _, u := range users {
		e.checkDistilled("acme", u, sources[u])
	}
	if n := e.count("acme", `SELECT count(*) FROM memories WHERE importance BETWEEN 0.449 AND 0.451 AND content = '用户以前住在杭州'`); n != 3 {
		t.Fatalf("%d old memories decayed exactly once, want 3", n)
	}
	runs, err := e.c.Runs(e.ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Status != memory.RunCompleted || runs[1].Status != memory.RunInterrupted ||
		runs[0].RootID != runs[1].ID || runs[1].OwnersDone != 1 || runs[0].Counts.Distilled != 1 {
		t.Fatalf("runs %+v", runs)
	}
	// A third run starts afresh (the chain completed) and finds nothing to distil.
	if rep3 := e.run(RunOptions{}); rep3.Resumes != 0 || rep3.Counts.Clusters != 0 || rep3.Owners != 3 {
		t.Fatalf("run 3 %+v", rep3)
	}
}

func TestStaleRunningRowIsInterruptedAndResumed(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	e.seedPayments("acme", "u1")
	e.seedPayments("acme", "u2")
	// A process died mid-run: its row says running, and u1 is done.
	// Run records are written by the operator functions only: the dead process's row
	// is set up as the owner.
	id := int64(pgtest.OwnerCount(t, e.store.Pool(), "acme", `INSERT INTO consolidation_runs (status) VALUES ('running') RETURNING id::int`))
	pgtest.OwnerExec(t, e.store.Pool(), "acme", `UPDATE consolidation_runs SET root_id = id WHERE id = $1`, id)
	e.exec("acme", `INSERT INTO consolidation_progress (root_id, tenant, user_id, run_id, counts)
		VALUES ($1, 'acme', 'u1', $1, '{"expired": 2}')`, id)
	rep := e.run(RunOptions{})
	if rep.Resumes != id || rep.OwnersSkipped != 1 || rep.Owners != 1 {
		t.Fatalf("run %+v", rep)
	}
	runs, err := e.c.Runs(e.ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if runs[1].Status != memory.RunInterrupted || runs[1].FinishedAt == nil || runs[1].Counts.Expired != 2 || runs[1].OwnersDone != 1 {
		t.Fatalf("stale run %+v", runs[1])
	}
}

func TestOneRunAtATime(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	lock, ok, err := e.store.TryRunLock(e.ctx)
	if err != nil || !ok {
		t.Fatalf("taking the run lock: %v, %v", ok, err)
	}
	release := pgtest.Held(t, func() { lock.Release(context.WithoutCancel(e.ctx)) })
	if _, err := e.c.Run(e.ctx, RunOptions{}); !errors.Is(err, ErrRunInProgress) {
		t.Fatalf("run while locked: %v, want ErrRunInProgress", err)
	}
	release()
	e.run(RunOptions{})
}

func TestRunFilters(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	e.seedPayments("acme", "u1")
	e.seedPayments("acme", "u2")
	e.seedPayments("globex", "u1")
	rep := e.run(RunOptions{Tenant: "acme", User: "u2"})
	if rep.Owners != 1 || rep.Counts.Distilled != 1 {
		t.Fatalf("filtered run %+v", rep)
	}
	rep = e.run(RunOptions{Tenant: "acme"})
	if rep.Owners != 2 || rep.Counts.Distilled != 1 {
		t.Fatalf("tenant run %+v", rep)
	}
	if len(e.semantic("globex", "u1")) != 0 {
		t.Fatal("a run filtered to acme distilled globex")
	}
	if _, err := e.c.Run(e.ctx, RunOptions{User: "u1"}); err == nil {
		t.Fatal("a user filter without a tenant was accepted")
	}
	var progress strings.Builder
	rep = e.run(RunOptions{Progress: &progress})
	if rep.Owners != 3 || rep.Counts.Distilled != 1 || !strings.Contains(progress.String(), "[3/3]") {
		t.Fatalf("run %+v\n%s", rep, progress.String())
	}
}

// TestNightlyScale measures a run over many owners (ENGRAM_NIGHTLY_SCALE=1; sizes
// with ENGRAM_NIGHTLY_OWNERS and ENGRAM_NIGHTLY_PER_OWNER, default 1,000 × 100): each
// owner has six recurring topics of ten episodes and forty unrelated ones, seeded
// with hash embeddings and turn lineage. It reports the run's duration, the peak Go
// heap sampled during the run and the process's peak RSS.
func TestNightlyScale(t *testing.T) {
	if os.Getenv("ENGRAM_NIGHTLY_SCALE") == "" {
		t.Skip("set ENGRAM_NIGHTLY_SCALE=1 to measure a large run")
	}
	owners, per := envN("ENGRAM_NIGHTLY_OWNERS", 1000), envN("ENGRAM_NIGHTLY_PER_OWNER", 100)
	e := newNightlyEnv(t, nil, NightlyConfig{Concurrency: envN("ENGRAM_NIGHTLY_CONCURRENCY", 2)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	e.ctx = ctx
	start := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	topics := []func() string{
		func() string {
			return "支付失败，因为" + pickOne(rng, "余额不足", "接口超时", "网络错误", "验证码过期", "银行卡被冻结", "限额已满")
		},
		func() string {
			return "The deploy to " + pickOne(rng, "staging", "production", "canary") + " failed because " + pickOne(rng, "the migration timed out", "a health check failed", "the image was missing")
		},
		func() string {
			return "用户在" + pickOne(rng, "周一", "周三", "周五") + "开会讨论" + pickOne(rng, "预算", "招聘", "路线图", "季度目标")
		},
		func() string {
			return "The user ordered " + pickOne(rng, "ramen", "a salad", "dumplings", "a burrito") + " for lunch at the office"
		},
		func() string {
			return "用户去" + pickOne(rng, "公园", "河边", "体育场") + "跑步了" + fmt.Sprint(3+rng.IntN(8)) + "公里"
		},
		func() string {
			return "The CI build broke on " + pickOne(rng, "main", "the release branch", "a feature branch") + " due to " + pickOne(rng, "a flaky test", "a lint error", "a missing dependency")
		},
	}
	syllables := strings.Fields("ka lo mi ra zu pe ti no sa ve du qi bo fa ge hu ji ke lu my")
	day := time.Now().UTC().AddDate(0, 0, -60)
	for o := range owners {
		user := fmt.Sprintf("u%04d", o)
		texts := make([]string, 0, per)
		for i := range per {
			if i < per*6/10 {
				texts = append(texts, topics[i%len(topics)]())
			} else {
				// Unrelated episodes: made-up words, so they share no token.
				var w []string
				for range 4 {
					w = append(w, pickOne(rng, syllables...)+pickOne(rng, syllables...)+pickOne(rng, syllables...))
				}
				texts = append(texts, strings.Join(w, " "))
			}
		}
		vecs, err := e.emb.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		e.inTenant("acme", func(tx pgx.Tx) error {
			var b pgx.Batch
			for i, text := range texts {
				id, turnID := uuid.Must(uuid.NewV7()), fmt.Sprintf("t-%s-%d", user, i)
				at := day.Add(time.Duration(rng.IntN(60*24)) * time.Minute)
				b.Queue(`INSERT INTO turns (tenant, turn_id, user_id, session_id, role, content, content_hash, occurred_at)
					VALUES ('acme', $1, $2, 's', 'user', $3, $4, $5)`, turnID, user, text, memory.ContentHash(text), at)
				b.Queue(`INSERT INTO memories (tenant, id, user_id, scope, type, category, content, importance, confidence,
					status, valid_from, source) VALUES ('acme', $1, $2, 'user', 'episodic', 'event', $3, 0.5, 0.8, 'active', $4, 'user')`,
					id, user, text, at)
				b.Queue(`INSERT INTO memory_versions (tenant, memory_id, version, change, content, status, category, importance,
					confidence, valid_from, actor) VALUES ('acme', $1, 1, 'add', $2, 'active', 'event', 0.5, 0.8, $3, 'seed')`, id, text, at)
				b.Queue(`INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding) VALUES ('acme', $1, $2, $3, $4, $5)`,
					id, e.emb.Model(), len(vecs[i]), user, pgvector.NewVector(vecs[i]))
				b.Queue(`INSERT INTO memory_lineage (tenant, memory_id, source_kind, source_id) VALUES ('acme', $1, 'turn', $2)`, id, turnID)
			}
			return tx.SendBatch(ctx, &b).Close()
		})
	}
	// Forgetting has work too: a third of the memories unused for 40 days (decay), a
	// tenth for 100 days (archive), a tenth of the turns older than the retention.
	e.exec("acme", `UPDATE memories SET updated_at = u, last_confirmed_at = u
		FROM (SELECT id AS uid, now() - CASE WHEN abs(hashtext(id::text)) % 10 = 0 THEN interval '100 days'
			ELSE interval '40 days' END AS u FROM memories) x
		WHERE id = uid AND (abs(hashtext(id::text)) % 3 = 0 OR abs(hashtext(id::text)) % 10 = 0)`)
	e.exec("acme", `UPDATE turns SET occurred_at = now() - interval '400 days' WHERE abs(hashtext(turn_id)) % 10 = 0`)
	t.Logf("seeded %d owners × %d episodes in %s", owners, per, time.Since(start).Round(time.Second))

	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM to the current RSS
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peakHeap.Load() {
				peakHeap.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	rep := e.run(RunOptions{})
	close(stop)
	<-sampled
	t.Logf("run 1: %s, %d owners, counts %+v", rep.Duration().Round(time.Millisecond), rep.OwnersDone, rep.Counts)
	t.Logf("peak Go heap during the run %.1f MiB; peak RSS %s", float64(peakHeap.Load())/(1<<20), procStatus("VmHWM"))
	rep = e.run(RunOptions{})
	t.Logf("run 2 (nothing new): %s, counts %+v", rep.Duration().Round(time.Millisecond), rep.Counts)
}

func envN(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func pickOne(rng *rand.Rand, xs ...string) string { return xs[rng.IntN(len(xs))] }

func procStatus(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.TrimSpace(strings.TrimPrefix(l, field+":"))
		}
	}
	return "unknown"
}
