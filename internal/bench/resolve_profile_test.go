package bench_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/engramhq/engram/internal/bench"
	"github.com/engramhq/engram/memory/pgtest"
)

// statementTimes is a pgx tracer that sums the time of each SQL statement (named by
// its first words), for TestResolveProfile: pg_stat_statements needs
// shared_preload_libraries, which the shared server does not set.
type statementTimes struct {
	mu  sync.Mutex
	sum map[string]time.Duration
	n   map[string]int
}

type traceStart struct{}

func (s *statementTimes) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, traceStart{}, time.Now())
}

func (s *statementTimes) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	t0, ok := ctx.Value(traceStart{}).(time.Time)
	if !ok {
		return
	}
	name := statementName(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum[name] += time.Since(t0)
	s.n[name]++
}

type sqlKey struct{}

func statementName(ctx context.Context) string {
	if v, ok := ctx.Value(sqlKey{}).(string); ok {
		return v
	}
	return "?"
}

// TraceBatchStart and the rest time a batch as one round trip, named by its first
// statements.
func (n namingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var names []string
	for i, q := range d.Batch.QueuedQueries {
		if i == 4 {
			names = append(names, "…")
			break
		}
		f := strings.Fields(q.SQL)
		names = append(names, strings.Join(f[:min(len(f), 3)], " "))
	}
	ctx = context.WithValue(ctx, sqlKey{}, fmt.Sprintf("batch of %d: %s", len(d.Batch.QueuedQueries), strings.Join(names, " | ")))
	return context.WithValue(ctx, traceStart{}, time.Now())
}

func (n namingTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (n namingTracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceBatchEndData) {
	n.statementTimes.TraceQueryEnd(ctx, c, pgx.TraceQueryEndData{})
}

// namingTracer records the statement's text in the context before timing it.
type namingTracer struct{ *statementTimes }

func (n namingTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	f := strings.Fields(d.SQL)
	if len(f) > 8 {
		f = f[:8]
	}
	ctx = context.WithValue(ctx, sqlKey{}, strings.Join(f, " "))
	return n.statementTimes.TraceQueryStart(ctx, c, d)
}

// TestResolveProfile runs the resolver benchmark with every statement timed and
// prints where the database time goes, per statement, for profiling the resolver
// (with go test -cpuprofile for the Go side). Opt-in: ENGRAM_RESOLVE_PROFILE=1.
//
//	ENGRAM_RESOLVE_PROFILE=1 ENGRAM_BENCH_OWNERS=100 go test ./internal/bench \
//	  -run TestResolveProfile -v -cpuprofile /tmp/resolve.cpu
func TestResolveProfile(t *testing.T) {
	if os.Getenv("ENGRAM_RESOLVE_PROFILE") == "" {
		t.Skip("ENGRAM_RESOLVE_PROFILE not set")
	}
	ctx := testCtx(t, 30*time.Minute)
	// The owner role: the large owner's phase builds its HNSW index.
	cfg, err := pgxpool.ParseConfig(pgtest.OwnerDatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	times := &statementTimes{sum: map[string]time.Duration{}, n: map[string]int{}}
	cfg.ConnConfig.Tracer = namingTracer{times}
	cfg.MaxConns = 16
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	res, err := bench.RunResolve(ctx, pool, bench.ResolveConfig{
		Owners:          envInt("ENGRAM_BENCH_OWNERS", 100),
		PerOwner:        envInt("ENGRAM_BENCH_PER_OWNER", 1000),
		Candidates:      envInt("ENGRAM_BENCH_CANDIDATES", 2000),
		LargeOwner:      envInt("ENGRAM_BENCH_LARGE", 10000),
		LargeCandidates: envInt("ENGRAM_BENCH_LARGE_CANDIDATES", 300),
		Concurrency:     envInt("ENGRAM_BENCH_CONCURRENCY", 8),
		Progress:        os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("across %.0f/s (p50 %.1f ms)", res.Across.PerSecond, res.Across.P50Ms)
	if res.Large != nil { // ENGRAM_BENCH_LARGE < 0 skips the large owner
		t.Logf("large %.0f/s (p50 %.1f ms)", res.Large.PerSecond, res.Large.P50Ms)
	}
	times.mu.Lock()
	defer times.mu.Unlock()
	names := make([]string, 0, len(times.sum))
	for k := range times.sum {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return times.sum[names[i]] > times.sum[names[j]] })
	var b strings.Builder
	trips := 0
	for _, k := range names {
		if !strings.Contains(k, "COPY") && !strings.Contains(k, "engram_bulk") && times.n[k] >= 10 {
			trips += times.n[k]
		}
	}
	cands := res.Across.Candidates
	if res.Large != nil {
		cands += res.Large.Candidates
	}
	fmt.Fprintf(&b, "%d round trips for %d candidates\n", trips, cands)
	for _, k := range names {
		if strings.Contains(k, "COPY") || times.n[k] < 10 {
			continue
		}
		fmt.Fprintf(&b, "%9.0f ms %7d × %6.2f ms  %s\n", float64(times.sum[k].Microseconds())/1000, times.n[k],
			float64(times.sum[k].Microseconds())/1000/float64(times.n[k]), k)
	}
	t.Logf("statement time (includes the seeding):\n%s", b.String())
}
