package memory_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

const hnswModel = "test-model"

// seedVectors COPYs n memories of the owner (user, or the global scope with user "")
// with random 16-dimension vectors; every third is episodic, the rest semantic.
func seedVectors(t *testing.T, s *memory.Store, tenant, user string, n int, rng *rand.Rand) {
	t.Helper()
	scope := memory.ScopeUser
	if user == "" {
		scope = memory.ScopeGlobal
	}
	ms := make([]memory.BulkMemory, n)
	for i := range ms {
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		ty := memory.Semantic
		if i%3 == 0 {
			ty = memory.Episodic
		}
		ms[i] = memory.BulkMemory{ID: uuid.Must(uuid.NewV7()), UserID: user, Scope: scope, Type: ty, Category: memory.CatFact,
			Content: "memory number " + strings.Repeat("x", 1+i%5), Importance: 0.5, Confidence: 0.8,
			ValidFrom: time.Now(), Source: memory.SourceUser, Embedding: v}
	}
	err := s.InTx(context.Background(), tenant, func(tx *memory.Tx) error {
		return tx.CopyMemories(context.Background(), ms, memory.BulkOptions{Model: hnswModel, Dims: 16})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hnswSearch(user string, vec []float32) memory.MemorySearch {
	scope := memory.ScopeUser
	if user == "" {
		scope = memory.ScopeGlobal
	}
	return memory.MemorySearch{Query: "memory", Scope: scope, UserID: user, Statuses: []string{"active"}, Now: time.Now(),
		Limit: 10, RecentLimit: 5, Vector: vec, Model: hnswModel, MaxDistance: 2}
}

func usesOwnerIndex(t *testing.T, s *memory.Store, tenant string, q memory.MemorySearch) bool {
	t.Helper()
	var plan []string
	err := s.InTx(context.Background(), tenant, func(tx *memory.Tx) error {
		var err error
		// The plan a search runs: the generic plan, prepared once a connection.
		plan, err = tx.ExplainAnalyzeMemoryCandidates(context.Background(), q)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(plan, func(l string) bool {
		return strings.Contains(l, "engram_hnsw_") || strings.Contains(l, "engram_ivf_")
	})
}

// hnswStores opens a fresh database's stores: the application role's, which searches
// and resolves, and the owner role's, which builds the indexes; with their pools, for
// test SQL.
func hnswStores(t *testing.T) (app, owner *memory.Store, pool, opool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	appURL := pgtest.URL(t)
	pool, err := memory.Connect(ctx, appURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opool, err = memory.ConnectOwner(ctx, pgtest.OwnerURLOf(t, appURL), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(opool.Close)
	return memory.NewStore(pool), memory.NewStore(opool), pool, opool
}

func TestHNSWOwnerIndexLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, pool, opool := hnswStores(t)

	rng := rand.New(rand.NewPCG(1, 2))
	seedVectors(t, app, "acme", "big", 300, rng)
	seedVectors(t, app, "acme", "", 300, rng) // the tenant's global scope
	seedVectors(t, app, "acme", "small", 20, rng)
	seedVectors(t, app, "globex", "big", 20, rng) // same user id, other tenant, small
	cfg := memory.HNSWConfig{Threshold: 200, EfSearch: 100}

	// The application role cannot build: only the owner role's store may.
	if _, err := app.MaintainHNSW(ctx, cfg, nil); err == nil {
		t.Error("the application role built an index")
	}
	// A pass limited to other tenants builds nothing here.
	if rep, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 200, EfSearch: 100, Tenants: []string{"globex"}}, nil); err != nil ||
		len(rep.Built) != 0 {
		t.Fatalf("a pass limited to globex: %+v, %v; want nothing built", rep, err)
	}
	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	for _, ix := range rep.Built {
		built = append(built, ix.Tenant+"/"+ix.UserID)
	}
	slices.Sort(built)
	if !slices.Equal(built, []string{"acme/", "acme/big"}) {
		t.Fatalf("built %v, want the global scope and big of acme", built)
	}
	if rep, err := owner.MaintainHNSW(ctx, cfg, nil); err != nil || len(rep.Built)+len(rep.Dropped) != 0 || rep.Kept != 2 {
		t.Fatalf("second pass: %+v, %v; want both kept", rep, err)
	}
	// Nor does it drop them (a threshold out of reach would, for acme).
	if rep, err := owner.MaintainHNSW(ctx, memory.HNSWConfig{Threshold: 1 << 30, Tenants: []string{"globex"}}, nil); err != nil ||
		len(rep.Dropped) != 0 {
		t.Fatalf("a pass limited to globex: %+v, %v; want nothing dropped", rep, err)
	}
	// The registry is read-only for the application.
	if err := execErr(pool, "acme", `DELETE FROM hnsw_owner_indexes`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the application role deleting registry rows: %v, want permission denied", err)
	}

	// Plans: the indexed owners search through their index, everyone else scans.
	vec := make([]float32, 16)
	for j := range vec {
		vec[j] = float32(rng.NormFloat64())
	}
	for _, c := range []struct {
		tenant, user string
		want         bool
	}{{"acme", "big", true}, {"acme", "", true}, {"acme", "small", false}, {"globex", "big", false}} {
		if got := usesOwnerIndex(t, app, c.tenant, hnswSearch(c.user, vec)); got != c.want {
			t.Errorf("%s/%q: plan uses an owner index %v, want %v", c.tenant, c.user, got, c.want)
		}
	}

	// Results through the index: near-exact, and filtered inside the scan (an
	// episodic-only search still fills its 10).
	if recall := exactRecall(t, app, "big", 20, rng); recall < 0.9 {
		t.Errorf("recall@10 through the owner index %.2f, want >= 0.9", recall)
	}
	q := hnswSearch("big", vec)
	q.Types, q.VectorOnly = []string{"episodic"}, true
	var cands []memory.MemoryHit
	err = app.InTx(ctx, "acme", func(tx *memory.Tx) error {
		var err error
		cands, _, err = tx.MemoryCandidates(ctx, q)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 10 {
		t.Errorf("episodic-only search through the index: %d candidates, want 10", len(cands))
	}
	for _, h := range cands {
		if h.Memory.Type != memory.Episodic || h.Memory.UserID != "big" || h.VectorRank == 0 {
			t.Errorf("candidate %+v passed the filters", h.Memory)
		}
	}

	// An owner that shrinks below half the threshold loses its index; an orphan index
	// (no registry row) and a build that died (a "building" row) are cleaned up.
	pgtest.Exec(t, pool, "acme", `DELETE FROM memories WHERE user_id = 'big' AND id IN
		(SELECT id FROM memories WHERE user_id = 'big' ORDER BY id LIMIT 250)`)
	pgtest.OwnerExec(t, opool, "acme", `UPDATE hnsw_owner_indexes SET state = 'building' WHERE user_id = ''`)
	if _, err := opool.Exec(ctx, `CREATE INDEX engram_hnsw_0123456789abcdef ON memory_embeddings (memory_id) WHERE false`); err != nil {
		t.Fatal(err)
	}
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dropped) != 1 || rep.Dropped[0].UserID != "big" || len(rep.Built) != 1 || rep.Built[0].UserID != "" {
		t.Fatalf("after shrinking: %+v; want big dropped and the global scope rebuilt", rep)
	}
	if usesOwnerIndex(t, app, "acme", hnswSearch("big", vec)) {
		t.Error("the shrunk owner still searches through an index")
	}
	ixs, _, err := owner.HNSWIndexes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ixs) != 1 || ixs[0].UserID != "" || ixs[0].State != "ready" {
		t.Errorf("registry %+v, want the global scope's ready index only", ixs)
	}
	if n := pgtest.OwnerCount(t, opool, "acme", `SELECT count(*)::int FROM pg_class WHERE relname LIKE 'engram\_hnsw\_%'`); n != 1 {
		t.Errorf("%d owner indexes left, want 1", n)
	}
}

// execErr runs sql in a transaction of tenant on pool and returns its error.
func execErr(pool *pgxpool.Pool, tenant, sql string) error {
	return pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), "SELECT set_config('engram.tenant', $1, true)", tenant); err != nil {
			return err
		}
		_, err := tx.Exec(context.Background(), sql)
		return err
	})
}

// ownerIndexCount counts the owner indexes of a method's name prefix in the catalog.
func ownerIndexCount(t *testing.T, opool *pgxpool.Pool, prefix string) int {
	t.Helper()
	return pgtest.OwnerCount(t, opool, "acme", `SELECT count(*)::int FROM pg_class WHERE relname LIKE '`+prefix+`%'`)
}

// exactRecall is the share of the exact top 10 of the owner that its vector side
// (through its index, which it must use) returns, over queries random vectors.
func exactRecall(t *testing.T, s *memory.Store, user string, queries int, rng *rand.Rand) float64 {
	t.Helper()
	ctx := context.Background()
	hits, total := 0, 0
	for range queries {
		q := make([]float32, 16)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		var exact, got []uuid.UUID
		var used bool
		err := s.InTx(ctx, "acme", func(tx *memory.Tx) error {
			var err error
			if exact, err = tx.ExactNearest(ctx, hnswModel, user, q, 10); err != nil {
				return err
			}
			got, used, err = tx.OwnerVectorSide(ctx, hnswModel, memory.ScopeUser, user, q, 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !used {
			t.Fatalf("the vector side of %q did not use its owner index", user)
		}
		for _, id := range exact {
			if slices.Contains(got, id) {
				hits++
			}
		}
		total += len(exact)
	}
	return float64(hits) / float64(total)
}

func TestIVFFlatOwnerIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, pool, opool := hnswStores(t)
	rng := rand.New(rand.NewPCG(3, 4))
	seedVectors(t, app, "acme", "big", 300, rng)
	seedVectors(t, app, "acme", "mid", 150, rng)
	// Every list probed: the IVFFlat reads must be exact, so any miss is a defect.
	cfg := memory.HNSWConfig{Threshold: 100, EfSearch: 100, IVFThreshold: 250, IVFListRows: 50, IVFProbes: 1000, SwapGrace: -1}
	method := func(rep []memory.HNSWOwnerIndex) map[string]string {
		out := map[string]string{}
		for _, ix := range rep {
			out[ix.UserID] = fmt.Sprintf("%s/%d/%d", ix.Method, ix.Lists, ix.Probes)
		}
		return out
	}

	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := method(rep.Built), map[string]string{"big": "ivfflat/6/6", "mid": "hnsw/0/0"}; !maps.Equal(got, want) {
		t.Fatalf("built %v, want %v", got, want)
	}
	// Its scans read through a ring and never keep it in shared buffers: the pass
	// reads it in (pg_prewarm, created in every database by scripts/services.sh).
	if rep.PrewarmedBlocks <= 0 {
		t.Errorf("the IVFFlat index was not prewarmed: %+v", rep)
	}
	if n := ownerIndexCount(t, opool, `engram\_ivf\_`); n != 1 {
		t.Errorf("%d IVFFlat indexes, want 1", n)
	}
	vec := make([]float32, 16)
	for j := range vec {
		vec[j] = float32(rng.NormFloat64())
	}
	for _, user := range []string{"big", "mid"} {
		if !usesOwnerIndex(t, app, "acme", hnswSearch(user, vec)) {
			t.Errorf("%s: the search plan does not read its owner index", user)
		}
		if r := exactRecall(t, app, user, 10, rng); user == "big" && r != 1 {
			t.Errorf("%s: recall@10 %.3f through an IVFFlat index read whole, want 1", user, r)
		}
	}
	// An episodic-only search fills its 10 through the IVFFlat index (the filter
	// inside the iterative scan).
	q := hnswSearch("big", vec)
	q.Types, q.VectorOnly = []string{"episodic"}, true
	var cands []memory.MemoryHit
	if err := app.InTx(ctx, "acme", func(tx *memory.Tx) error {
		cands, _, err = tx.MemoryCandidates(ctx, q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(cands) != 10 {
		t.Errorf("episodic-only search through the IVFFlat index: %d candidates, want 10", len(cands))
	}

	// mid crosses the IVFFlat threshold: its HNSW index is replaced. app's cached
	// registry entry still says HNSW for the next minute, and (no grace here) the HNSW
	// index is gone: its statement matches no index (the IVFFlat one is over halfvec)
	// and must scan exactly.
	seedVectors(t, app, "acme", "mid", 110, rng)
	// big doubles: its lists are sized for its new size, under a new name.
	seedVectors(t, app, "acme", "big", 300, rng)
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := method(rep.Rebuilt), map[string]string{"big": "ivfflat/12/12", "mid": "ivfflat/5/5"}; !maps.Equal(got, want) || len(rep.Built) != 0 {
		t.Fatalf("rebuilt %v (built %d), want %v", got, len(rep.Built), want)
	}
	if h, i := ownerIndexCount(t, opool, `engram\_hnsw\_`), ownerIndexCount(t, opool, `engram\_ivf\_`); h != 0 || i != 2 {
		t.Errorf("%d HNSW and %d IVFFlat indexes after the swaps, want 0 and 2", h, i)
	}
	if r := exactRecall(t, app, "mid", 10, rng); r != 1 {
		t.Errorf("mid, read from a registry entry cached before its swap: recall@10 %.3f, want 1", r)
	}
	fresh := memory.NewStore(pool)
	for _, user := range []string{"big", "mid"} {
		if !usesOwnerIndex(t, fresh, "acme", hnswSearch(user, vec)) {
			t.Errorf("%s after its rebuild: the search plan does not read its owner index", user)
		}
		if r := exactRecall(t, fresh, user, 10, rng); r != 1 {
			t.Errorf("%s after its rebuild: recall@10 %.3f, want 1", user, r)
		}
	}
	if rep, err := owner.MaintainHNSW(ctx, cfg, nil); err != nil || len(rep.Built)+len(rep.Rebuilt)+len(rep.Dropped) != 0 || rep.Kept != 2 {
		t.Fatalf("third pass: %+v, %v; want both kept", rep, err)
	}

	// big shrinks below half the IVFFlat threshold (but not below half the HNSW one):
	// back to HNSW.
	pgtest.Exec(t, pool, "acme", `DELETE FROM memories WHERE user_id = 'big' AND id IN
		(SELECT id FROM memories WHERE user_id = 'big' ORDER BY id LIMIT 500)`)
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := method(rep.Rebuilt), map[string]string{"big": "hnsw/0/0"}; !maps.Equal(got, want) {
		t.Fatalf("rebuilt %v, want %v", got, want)
	}
	ixs, _, err := owner.HNSWIndexes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range ixs {
		if want := map[string]string{"big": memory.MethodHNSW, "mid": memory.MethodIVFFlat}[ix.UserID]; ix.Method != want || ix.State != "ready" {
			t.Errorf("registry row %+v, want a ready %s index", ix, want)
		}
	}
	if h, i := ownerIndexCount(t, opool, `engram\_hnsw\_`), ownerIndexCount(t, opool, `engram\_ivf\_`); h != 1 || i != 1 {
		t.Errorf("%d HNSW and %d IVFFlat indexes, want 1 and 1", h, i)
	}
}

// TestOwnerVectorSideExact checks the bench's vector side of an owner without an index
// of its own (the exact path): the nearest active memories of the owner, nearest first,
// whatever the scope; a memory no longer active is passed over, not counted.
func TestOwnerVectorSideExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, _, pool, _ := hnswStores(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, user := range []string{"small", ""} {
		seedVectors(t, app, "acme", user, 60, rng)
		seedVectors(t, app, "other", user, 60, rng)
	}
	tests := []struct {
		name  string
		scope memory.Scope
		user  string
	}{
		{"user", memory.ScopeUser, "small"},
		{"global scope", memory.ScopeGlobal, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := make([]float32, 16)
			for j := range q {
				q[j] = float32(rng.NormFloat64())
			}
			nearest := func() (exact, got []uuid.UUID) {
				t.Helper()
				if err := app.InTx(ctx, "acme", func(tx *memory.Tx) error {
					var err error
					var used bool
					if exact, err = tx.ExactNearest(ctx, hnswModel, tc.user, q, 11); err != nil {
						return err
					}
					got, used, err = tx.OwnerVectorSide(ctx, hnswModel, tc.scope, tc.user, q, 10)
					if used {
						t.Errorf("the vector side used an owner index; the owner has none")
					}
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return exact, got
			}
			exact, got := nearest()
			if !slices.Equal(got, exact[:10]) {
				t.Fatalf("vector side %v, want the exact top 10 %v", got, exact[:10])
			}
			// The nearest is superseded: the eleventh comes in.
			pgtest.OwnerExec(t, pool, "acme", `UPDATE memories SET status = 'superseded' WHERE tenant = 'acme' AND id = $1`, exact[0])
			if _, got = nearest(); !slices.Equal(got, exact[1:11]) {
				t.Errorf("vector side after superseding the nearest %v, want %v", got, exact[1:11])
			}
		})
	}
}

// TestSQLLiteral checks the literals an owner index's statement names its owner by
// (ownerIndexPredicate): PostgreSQL reads each back as the same string, whatever
// standard_conforming_strings says.
func TestSQLLiteral(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, pool, _ := hnswStores(t)
	var version int
	if err := pool.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatal(err)
	}
	settings := []string{"on", "off"}
	if version >= 190000 { // PostgreSQL 19 refuses standard_conforming_strings off
		settings = settings[:1]
	}
	for _, conforming := range settings {
		for _, s := range []string{"", "bench-large", "o'brien", `back\slash`, `\'`, "''", "naïve 用户", `E'x'`} {
			var got string
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SELECT set_config('standard_conforming_strings', $1, true)", conforming); err != nil {
					return err
				}
				return tx.QueryRow(ctx, "SELECT "+memory.SQLLiteral(s)+"::text").Scan(&got)
			})
			if err != nil {
				t.Fatalf("standard_conforming_strings %s, %q: %v", conforming, s, err)
			}
			if got != s {
				t.Errorf("standard_conforming_strings %s: %q read back as %q", conforming, s, got)
			}
		}
	}
}

// TestLightGraphGrows checks the graph an owner's HNSW index gets by its size: below
// LightBelow the lighter one (m 16, ef_construction 64), from it on the configured
// one; an owner that grows past it gets a new index with the denser graph, beside the
// old one, which is dropped; one that shrinks back keeps it.
func TestLightGraphGrows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, owner, _, opool := hnswStores(t)
	rng := rand.New(rand.NewPCG(3, 4))
	seedVectors(t, app, "acme", "growing", 300, rng)
	cfg := memory.HNSWConfig{Threshold: 200, EfSearch: 100, LightBelow: 400, SwapGrace: -1, RecallTarget: 0.5}

	defs := func() []string {
		t.Helper()
		rows, err := opool.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_embeddings'
			AND indexname LIKE 'engram\_hnsw\_%' ORDER BY indexname`)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	rep, err := owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || len(rep.Built) != 1 {
		t.Fatalf("first pass: %+v, %v", rep, err)
	}
	light := rep.Built[0]
	if light.M != 16 || light.EfConstruction != 64 {
		t.Errorf("an owner of 300 built with m %d, ef_construction %d; want 16, 64", light.M, light.EfConstruction)
	}
	if d := defs(); len(d) != 1 || !strings.Contains(d[0], "m='16'") || !strings.Contains(d[0], "ef_construction='64'") {
		t.Fatalf("index definitions %q; want one with m 16, ef_construction 64", d)
	}

	seedVectors(t, app, "acme", "growing", 200, rng)
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || len(rep.Rebuilt) != 1 || len(rep.Built) != 0 {
		t.Fatalf("after growing past LightBelow: %+v, %v; want the index rebuilt", rep, err)
	}
	dense := rep.Rebuilt[0]
	if dense.M != memory.DefaultHNSWM || dense.EfConstruction != memory.DefaultHNSWEfConstruction || dense.Name == light.Name {
		t.Errorf("rebuilt %+v; want m %d, ef_construction %d under a new name", dense, memory.DefaultHNSWM, memory.DefaultHNSWEfConstruction)
	}
	if d := defs(); len(d) != 1 || !strings.Contains(d[0], dense.Name) || !strings.Contains(d[0], "m='24'") {
		t.Fatalf("index definitions %q; want only the new one, m 24", d)
	}
	// Measured once the lighter one was gone (both would answer the same statement),
	// and recorded under its own name.
	ixs, _, err := owner.HNSWIndexes(ctx)
	if err != nil || len(ixs) != 1 || ixs[0].Name != dense.Name || ixs[0].RecallText() == "-" || dense.RecallText() == "-" {
		t.Fatalf("registry %+v (%v), reported %+v; want the new index measured", ixs, err, dense)
	}
	vec := make([]float32, 16)
	vec[0] = 1
	if !usesOwnerIndex(t, app, "acme", hnswSearch("growing", vec)) {
		t.Error("the search does not read the new index")
	}

	// Shrinking below LightBelow (not below half the threshold) keeps the denser graph.
	if err := execErr(opool, "acme", `DELETE FROM memories WHERE tenant = 'acme' AND user_id = 'growing'
		AND id IN (SELECT id FROM memories WHERE tenant = 'acme' AND user_id = 'growing' LIMIT 200)`); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.OwnerCount(t, opool, "acme", `SELECT count(*)::int FROM memory_embeddings WHERE user_id = 'growing'`); n != 300 {
		t.Fatalf("%d vectors left, want 300", n)
	}
	rep, err = owner.MaintainHNSW(ctx, cfg, nil)
	if err != nil || rep.Kept != 1 || len(rep.Rebuilt)+len(rep.Built)+len(rep.Dropped) != 0 {
		t.Fatalf("after shrinking: %+v, %v; want the index kept", rep, err)
	}
}
