package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// nightlyEnv is a store with a resolver and a consolidator on the hash embedder:
// lifecycle operations act on what those produce.
type nightlyEnv struct {
	t     *testing.T
	ctx   context.Context
	pool  *pgxpool.Pool // for test set-up SQL (pgtest.Exec, pgtest.Count)
	store *memory.Store
	emb   *llm.HashEmbedder
	res   *consolidator.Resolver
	c     *consolidator.Consolidator
}

func newNightlyEnv(t *testing.T) *nightlyEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.Pool(t)
	s := memory.NewStore(pool)
	res := consolidator.NewResolver(s, emb, nil, consolidator.ResolverConfig{}, nil)
	c := consolidator.NewConsolidator(s, res, emb, nil, consolidator.NightlyConfig{Concurrency: 1}, nil)
	return &nightlyEnv{t: t, ctx: ctx, pool: pool, store: s, emb: emb, res: res, c: c}
}

// seed stores a turn and an episodic memory made from it, as the extractor and the
// resolver would, with its hash embedding.
func (e *nightlyEnv) seed(tenant, user, content string, at time.Time) uuid.UUID {
	e.t.Helper()
	return pgtest.SeedEpisode(e.t, e.ctx, e.store, e.emb, tenant, user, content, at)
}

func (e *nightlyEnv) exec(tenant, sql string, args ...any) {
	e.t.Helper()
	pgtest.Exec(e.t, e.pool, tenant, sql, args...)
}

func (e *nightlyEnv) count(tenant, sql string, args ...any) int {
	e.t.Helper()
	return pgtest.Count(e.t, e.pool, tenant, sql, args...)
}

func (e *nightlyEnv) run(opts consolidator.RunOptions) consolidator.RunReport {
	e.t.Helper()
	rep, err := e.c.Run(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("run: %v (report %+v)", err, rep)
	}
	return rep
}

// Episodes written for these tests: five payment failures a distillation merges, and
// two unrelated ones.
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
