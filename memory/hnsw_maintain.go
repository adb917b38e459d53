package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// hnswLockKey serialises index maintainers across processes (several serve replicas
// may run one): only the holder builds or drops. Distinct from the migrations' key.
const hnswLockKey int64 = 0x656e6772616d11 // "engram" + 0x11

// HNSWReport is what one MaintainHNSW pass did.
type HNSWReport struct {
	// Busy: another process holds the maintenance lock; nothing was done.
	Busy  bool             `json:"busy"`
	Built []HNSWOwnerIndex `json:"built"`
	// Rebuilt: owners whose index was replaced (the new one): they crossed the
	// IVFFlat threshold, or outgrew their IVFFlat lists.
	Rebuilt []HNSWOwnerIndex `json:"rebuilt"`
	Dropped []HNSWOwnerIndex `json:"dropped"`
	Kept    int              `json:"kept"`
	// Measured: kept indexes without a measure of their recall (built before it was
	// measured) that the pass measured, as they are read now.
	Measured []HNSWOwnerIndex `json:"measured"`
	// RecallRebuilds: new HNSW builds below the recall target that were built again.
	RecallRebuilds int `json:"recall_rebuilds"`
	// PrewarmedBlocks: the blocks of the IVFFlat indexes read into shared buffers
	// (hnsw_prewarm.go); 0 without pg_prewarm.
	PrewarmedBlocks int64 `json:"prewarmed_blocks"`
	// Failed: owners whose build failed this pass (logged; tried again next pass).
	Failed int `json:"failed"`
	// BuildSeconds is the time the builds took, together.
	BuildSeconds float64 `json:"build_seconds"`
	// Text is what the pass did to the owners' full-text indexes (text_index.go).
	Text TextIndexReport `json:"text"`
}

type hnswOwner struct {
	model, user string
	rows        int64
}

// MaintainHNSW gives every owner above cfg.Threshold vectors its own partial HNSW
// index (CREATE INDEX CONCURRENTLY: writes go on during the build) and drops the
// index of an owner that shrank below half of it. It must run on the owner role's
// store (ConnectOwner): the application role cannot create an index. A build that
// died (an invalid index, or a registry row left "building") is dropped and redone.
// Searches use an index only once its registry row is "ready", and stop before it is
// dropped.
func (s *Store) MaintainHNSW(ctx context.Context, cfg HNSWConfig, log *slog.Logger) (HNSWReport, error) {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var rep HNSWReport
	// The application role would see no tenant in the registry of owners and do
	// nothing, silently: refuse it.
	var isOwner bool
	if err := s.pool.QueryRow(ctx, `SELECT pg_has_role(current_user, relowner, 'MEMBER') FROM pg_class
		WHERE oid = 'memory_embeddings'::regclass`).Scan(&isOwner); err != nil {
		return rep, fmt.Errorf("maintaining vector indexes: checking the role: %w", err)
	}
	if !isOwner {
		return rep, fmt.Errorf("%w: vector indexes are built by the owner role (ENGRAM_MIGRATE_DATABASE_URL), "+
			"which owns memory_embeddings; this connection's role does not", ErrRole)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("maintaining vector indexes: acquiring a connection: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, hnswLockKey).Scan(&got); err != nil {
		return rep, fmt.Errorf("maintaining vector indexes: taking the lock: %w", err)
	}
	if !got {
		rep.Busy = true
		return rep, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, hnswLockKey)
	}()
	// This store's resolver reads see the pass's builds and drops at once, not after
	// its cache's lifetime (memory/hnsw_resolve.go).
	defer s.indexes.forget()
	c := conn.Conn()

	if err := s.dropOrphanHNSW(ctx, c, log); err != nil {
		return rep, err
	}
	// Only the tenants with an owner near the threshold or an index to keep up: one
	// count across tenants (migration 0017's switch, which binds only the owner role),
	// where a transaction per tenant cost 86,000 of them a pass in a database of
	// 86,000 tenants.
	var tenants []string
	err = s.acrossTenants(ctx, func(tx pgx.Tx) error {
		// $2: the tenants a pass is limited to (NULL: all), so a limited pass counts
		// only theirs.
		rows, err := tx.Query(ctx, `SELECT tenant FROM memory_embeddings WHERE $2::text[] IS NULL OR tenant = ANY($2)
			GROUP BY tenant, model, user_id HAVING count(*) >= $1
			UNION SELECT tenant FROM hnsw_owner_indexes WHERE $2::text[] IS NULL OR tenant = ANY($2) ORDER BY 1`,
			cfg.Threshold/2, cfg.Tenants)
		if err == nil {
			tenants, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("maintaining vector indexes: listing the tenants with large owners: %w", err)
	}
	// How well an IVFFlat build could sample an owner depends on the table's size.
	var blocks int64
	if err := c.QueryRow(ctx, `SELECT pg_relation_size('memory_embeddings') / current_setting('block_size')::bigint`).Scan(&blocks); err != nil {
		return rep, fmt.Errorf("maintaining vector indexes: sizing the vector table: %w", err)
	}
	for _, tenant := range tenants {
		if err := s.maintainTenantHNSW(ctx, c, tenant, cfg, blocks, log, &rep); err != nil {
			return rep, err
		}
	}
	if cfg.TextThreshold > 0 {
		if rep.Text, err = s.maintainTextIndexes(ctx, c, cfg.TextThreshold, cfg.Tenants, log); err != nil {
			return rep, err
		}
	}
	rep.PrewarmedBlocks = s.prewarmIVF(ctx, c, cfg.Tenants, log)
	return rep, nil
}

func (s *Store) maintainTenantHNSW(ctx context.Context, c *pgx.Conn, tenant string, cfg HNSWConfig, blocks int64,
	log *slog.Logger, rep *HNSWReport) error {
	var large []hnswOwner
	have := map[[2]string]HNSWOwnerIndex{}
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		// Owners of at least half the threshold: those that get or keep an index. An
		// index-only scan of the (tenant, model, user_id) B-tree.
		rows, err := tx.tx.Query(ctx, `SELECT model, user_id, count(*) FROM memory_embeddings
			WHERE tenant = $1 GROUP BY model, user_id HAVING count(*) >= $2`, tenant, cfg.Threshold/2)
		if err != nil {
			return fmt.Errorf("counting the owners' vectors: %w", err)
		}
		large, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (hnswOwner, error) {
			var o hnswOwner
			return o, r.Scan(&o.model, &o.user, &o.rows)
		})
		if err != nil {
			return fmt.Errorf("counting the owners' vectors: %w", err)
		}
		ixs, err := tx.hnswRegistry(ctx)
		for _, ix := range ixs {
			have[[2]string{ix.Model, ix.UserID}] = ix
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("maintaining vector indexes of tenant %s: %w", tenant, err)
	}
	size := map[[2]string]int64{}
	for _, o := range large {
		size[[2]string{o.model, o.user}] = o.rows
	}
	// Drops first: an owner that shrank, or a build that died (rebuilt below).
	for k, ix := range have {
		n := size[k]
		valid, err := hnswIndexValid(ctx, c, ix.Name)
		if err != nil {
			return err
		}
		if n >= int64(cfg.Threshold/2) && ix.State == "ready" && valid {
			continue
		}
		if err := s.dropHNSW(ctx, c, ix); err != nil {
			return err
		}
		delete(have, k)
		if n < int64(cfg.Threshold/2) {
			log.Info("dropped the vector index of an owner that shrank", "tenant", tenant, "model", ix.Model,
				"user_id", ix.UserID, "vectors", n, "index", ix.Name)
			rep.Dropped = append(rep.Dropped, ix)
		}
	}
	for _, o := range large {
		cur, ok := have[[2]string{o.model, o.user}]
		if !ok && o.rows < int64(cfg.Threshold) {
			continue
		}
		var replacing *HNSWOwnerIndex
		if ok {
			// An owner that crossed the IVFFlat threshold (either way), or whose
			// IVFFlat lists were sized for half its vectors or fewer, gets a new index;
			// the rest keep theirs.
			want := cfg.method(o.rows, cur.Method, blocks)
			grown := want == MethodIVFFlat && cfg.ivfLists(o.rows) >= 2*cur.Lists && ivfSampleable(o.rows, blocks)
			// An HNSW owner that grew past LightBelow gets the denser graph (never
			// back: a graph denser than needed costs writes, not recall).
			if want == MethodHNSW && cur.Method == MethodHNSW && cfg.LightBelow > 0 &&
				cur.Rows < int64(cfg.LightBelow) && o.rows >= int64(cfg.LightBelow) {
				if m, efc := cfg.graph(o.rows); hnswGraphIndexName(tenant, o.model, o.user, m, efc) != cur.Name {
					grown = true
				}
			}
			if want == cur.Method && !grown {
				rep.Kept++
				if !cur.measured && cur.State == "ready" && cfg.RecallTarget > 0 {
					if ix, ok := s.checkIndexRecall(ctx, cur, o.rows, cfg.RecallTarget, cfg.fewestIVFProbes(), log); ok {
						rep.Measured = append(rep.Measured, ix)
					}
				}
				continue
			}
			replacing = &cur
		}
		ix, err := s.buildHNSW(ctx, c, tenant, o, cfg, blocks, replacing, log, &rep.RecallRebuilds)
		if err != nil && ctx.Err() == nil {
			// One owner's failed build (memory, a lock, a bad row) must not keep every
			// other owner's index from being maintained: the next pass tries it again
			// (its invalid index or unrecorded replacement is dropped first).
			log.Warn("building a vector index failed; the next pass tries again", "tenant", tenant, "model", o.model,
				"user_id", o.user, "vectors", o.rows, "error", err)
			rep.Failed++
			continue
		}
		if err != nil {
			return err
		}
		if ix == nil {
			if replacing != nil {
				rep.Kept++
			}
			continue
		}
		if replacing != nil {
			rep.Rebuilt = append(rep.Rebuilt, *ix)
		} else {
			rep.Built = append(rep.Built, *ix)
		}
		rep.BuildSeconds += ix.BuildSeconds
	}
	return nil
}

// acrossTenants runs fn in a read-only transaction of the owner role that reads every
// tenant's rows (migration 0017's switch, which binds only the owner role), without
// parallel workers: the maintainers' counts over whole tables must not take every core.
func (s *Store) acrossTenants(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('engram.op_aggregate', 'on', true), set_config('max_parallel_workers_per_gather', '0', true)`); err != nil {
			return err
		}
		return fn(tx)
	})
}

// buildHNSW builds the owner's index, of the method its size calls for, concurrently
// and marks it ready; nil when the owner's vectors have mixed dimensions beyond the
// index's limit (nothing to index). A first index is recorded as building before the
// build (a build that dies is found and redone). One that replaces the owner's
// current index (replacing) is built beside it unrecorded (if the pass dies, the next
// one drops it as an orphan), takes its place in the registry in one statement, and
// the old one is dropped after cfg.SwapGrace, when no process's cached registry entry
// (ownerIndexesTTL) still points at it.
func (s *Store) buildHNSW(ctx context.Context, c *pgx.Conn, tenant string, o hnswOwner, cfg HNSWConfig, blocks int64,
	replacing *HNSWOwnerIndex, log *slog.Logger, rebuilds *int) (*HNSWOwnerIndex, error) {
	have := ""
	if replacing != nil {
		have = replacing.Method
	}
	ix := HNSWOwnerIndex{Tenant: tenant, Model: o.model, UserID: o.user, State: "building", Rows: o.rows,
		Method: cfg.method(o.rows, have, blocks), EfSearch: cfg.EfSearch}
	if ix.Method == MethodIVFFlat {
		ix.Lists = cfg.ivfLists(o.rows)
		ix.Probes = cfg.ivfProbes(ix.Lists)
		ix.Name = ivfIndexName(tenant, o.model, o.user, ix.Lists)
	} else {
		ix.M, ix.EfConstruction = cfg.graph(o.rows)
		ix.Name = hnswGraphIndexName(tenant, o.model, o.user, ix.M, ix.EfConstruction)
	}
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		// The most common dimension: the index covers the rows of that size.
		if err := tx.tx.QueryRow(ctx, `SELECT dims FROM memory_embeddings WHERE tenant = $1 AND model = $2 AND user_id = $3
			GROUP BY dims ORDER BY count(*) DESC LIMIT 1`, tenant, o.model, o.user).Scan(&ix.Dims); err != nil {
			return fmt.Errorf("reading the owner's vector dimensions: %w", err)
		}
		if ix.Dims > 2000 { // pgvector's limit for an HNSW index of vector (halfvec IVFFlat: 4,000)
			ix.Dims = 0
			return nil
		}
		if replacing != nil {
			return nil
		}
		_, err := tx.tx.Exec(ctx, `INSERT INTO hnsw_owner_indexes (tenant, model, user_id, dims, index_name, state, rows_at_build,
			method, ef_search, lists, probes)
			VALUES ($1, $2, $3, $4, $5, 'building', $6, $7, $8, $9, $10)`, tenant, o.model, o.user, ix.Dims, ix.Name, o.rows,
			ix.Method, ix.EfSearch, nullIfZero(ix.Lists), nullIfZero(ix.Probes))
		if err != nil {
			return fmt.Errorf("recording the index build: %w", err)
		}
		return nil
	})
	if err != nil || ix.Dims == 0 {
		return nil, err
	}
	log.Info("building a vector index for a large owner", "tenant", tenant, "model", o.model, "user_id", o.user,
		"vectors", o.rows, "index", ix.Name, "method", ix.Method, "lists", ix.Lists)
	start := time.Now()
	// The predicate names the owner, so only its searches can use the index
	// (ownerIndexPredicate).
	using := fmt.Sprintf("hnsw ((embedding::vector(%d)) vector_cosine_ops) WITH (m = %d, ef_construction = %d)", ix.Dims, ix.M, ix.EfConstruction)
	if ix.Method == MethodIVFFlat {
		// Half precision: a probe reads half the pages (on the million-memory owner, 40
		// of 2,000 lists in 10 ms p50 instead of 16 at recall@10 0.971 against 0.975);
		// the search re-ranks by the exact distance (hnswNearestSQL).
		using = fmt.Sprintf("ivfflat ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (lists = %d)", ix.Dims, ix.Lists)
		// IVFFlat's k-means holds a sample of 50 vectors a list in memory, which
		// pgvector refuses to build beyond maintenance_work_mem.
		need := ivfWorkMem(ix.Lists, ix.Dims)
		if _, err := c.Exec(ctx, `SELECT set_config('maintenance_work_mem', $1, false)
			WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes($1)`, fmt.Sprintf("%dMB", need)); err != nil {
			return nil, fmt.Errorf("sizing the memory of the IVFFlat build: %w", err)
		}
		defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), `RESET maintenance_work_mem`) }()
	}
	ddl := `CREATE INDEX CONCURRENTLY IF NOT EXISTS ` + pgx.Identifier{ix.Name}.Sanitize() + ` ON memory_embeddings USING ` + using + `
		WHERE ` + ownerIndexPredicate("", tenant, o.model, o.user, ix.Dims)
	if _, err := c.Exec(ctx, ddl); err != nil {
		return nil, fmt.Errorf("building the vector index of tenant %s owner %q (%s): %w", tenant, o.user, ix.Name, err)
	}
	ix.BuildSeconds = time.Since(start).Seconds()
	// A replacement of the same method has the expression and predicate of the index
	// it replaces, and the planner may read either: it is measured once that one is
	// dropped (below), when it can still read further but no longer be built again.
	sameMethod := replacing != nil && replacing.Method == ix.Method
	if cfg.RecallTarget > 0 && !sameMethod {
		// Not read by any search yet (a first build is recorded as building, a
		// replacement not at all): it can still be built again.
		if err := s.measureBuild(ctx, c, &ix, ddl, cfg.RecallTarget, cfg.fewestIVFProbes(), log, rebuilds); err != nil {
			return nil, err
		}
	}
	var recall *float64
	if ix.measured {
		recall = &ix.Recall
	}
	err = s.InTx(ctx, tenant, func(tx *Tx) error {
		_, err := tx.tx.Exec(ctx, `UPDATE hnsw_owner_indexes SET state = 'ready', ready_at = now(), index_name = $4, method = $5,
			ef_search = $6, lists = $7, probes = $8, rows_at_build = $9, dims = $10, recall = $11
			WHERE tenant = $1 AND model = $2 AND user_id = $3`, tenant, o.model, o.user, ix.Name, ix.Method,
			ix.EfSearch, nullIfZero(ix.Lists), nullIfZero(ix.Probes), o.rows, ix.Dims, recall)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recording the built index %s: %w", ix.Name, err)
	}
	ix.State = "ready"
	log.Info("built a vector index", "index", ix.Name, "seconds", ix.BuildSeconds)
	if replacing != nil {
		s.indexes.forget()
		if g := cfg.swapGrace(); g > 0 {
			log.Info("keeping the replaced vector index while cached registry entries expire", "index", replacing.Name, "for", g)
			select {
			case <-ctx.Done():
				return nil, ctx.Err() // the next pass drops it as an orphan
			case <-time.After(g):
			}
		}
		if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+replacing.Name); err != nil {
			return nil, fmt.Errorf("dropping the replaced vector index %s: %w", replacing.Name, err)
		}
		if cfg.RecallTarget > 0 && sameMethod {
			// A failed measure is logged; the next pass measures it.
			ix, _ = s.checkIndexRecall(ctx, ix, o.rows, cfg.RecallTarget, cfg.fewestIVFProbes(), log)
		}
	}
	return &ix, nil
}

func nullIfZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// dropHNSW takes the index out of the registry first (searches stop choosing it),
// then drops it concurrently (in-flight searches finish first).
func (s *Store) dropHNSW(ctx context.Context, c *pgx.Conn, ix HNSWOwnerIndex) error {
	err := s.InTx(ctx, ix.Tenant, func(tx *Tx) error {
		_, err := tx.tx.Exec(ctx, `DELETE FROM hnsw_owner_indexes WHERE tenant = $1 AND model = $2 AND user_id = $3`,
			ix.Tenant, ix.Model, ix.UserID)
		return err
	})
	if err != nil {
		return fmt.Errorf("unregistering the vector index %s: %w", ix.Name, err)
	}
	if !plainIdent(ix.Name) {
		return fmt.Errorf("%w: index name %q", ErrInvalid, ix.Name)
	}
	if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+ix.Name); err != nil {
		return fmt.Errorf("dropping the vector index %s: %w", ix.Name, err)
	}
	return nil
}

// dropOrphanHNSW drops owner indexes the registry does not name (a pass that died
// between unregistering and dropping).
func (s *Store) dropOrphanHNSW(ctx context.Context, c *pgx.Conn, log *slog.Logger) error {
	rows, err := c.Query(ctx, `SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'memory_embeddings'::regclass AND (i.relname LIKE 'engram\_hnsw\_%' OR i.relname LIKE 'engram\_ivf\_%')
		  AND NOT EXISTS (SELECT 1 FROM hnsw_owner_indexes r WHERE r.index_name = i.relname)`)
	if err != nil {
		return fmt.Errorf("listing orphan vector indexes: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("listing orphan vector indexes: %w", err)
	}
	for _, n := range names {
		if !plainIdent(n) {
			continue
		}
		log.Info("dropping an orphan vector index", "index", n)
		if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+n); err != nil {
			return fmt.Errorf("dropping the orphan vector index %s: %w", n, err)
		}
	}
	return nil
}

// hnswIndexValid reports whether the index exists and is valid (a concurrent build
// that failed leaves an invalid one).
func hnswIndexValid(ctx context.Context, c *pgx.Conn, name string) (bool, error) {
	var valid bool
	err := c.QueryRow(ctx, `SELECT x.indisvalid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE i.relname = $1`, name).Scan(&valid)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking the vector index %s: %w", name, err)
	}
	return valid, nil
}

// hnswRegistry is the transaction's tenant's registered indexes.
func (t *Tx) hnswRegistry(ctx context.Context) ([]HNSWOwnerIndex, error) {
	rows, err := t.tx.Query(ctx, `SELECT tenant, model, user_id, dims, index_name, state, rows_at_build, method,
		coalesce(ef_search, 0), coalesce(lists, 0), coalesce(probes, 0), recall
		FROM hnsw_owner_indexes WHERE tenant = $1 ORDER BY model, user_id`, t.tenant)
	if err != nil {
		return nil, fmt.Errorf("reading the vector index registry: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanHNSWIndex)
	if err != nil {
		return nil, fmt.Errorf("reading the vector index registry: %w", err)
	}
	return out, nil
}

func scanHNSWIndex(r pgx.CollectableRow) (HNSWOwnerIndex, error) {
	var ix HNSWOwnerIndex
	var recall *float64
	err := r.Scan(ix.registryDest(&recall)...)
	ix.setRecall(recall)
	return ix, err
}

// registryDest is where a registry row's columns, in the order hnswRegistry and
// HNSWIndexes select them, are scanned to; the recall (NULL: not measured) goes to
// recall, for setRecall.
func (ix *HNSWOwnerIndex) registryDest(recall **float64) []any {
	return []any{&ix.Tenant, &ix.Model, &ix.UserID, &ix.Dims, &ix.Name, &ix.State, &ix.Rows, &ix.Method,
		&ix.EfSearch, &ix.Lists, &ix.Probes, recall}
}

func (ix *HNSWOwnerIndex) setRecall(r *float64) {
	if r != nil {
		ix.Recall, ix.measured = *r, true
	}
}

// HNSWIndexes lists every registered owner index (the owner role's store sees all
// tenants' rows), with its size on disk.
func (s *Store) HNSWIndexes(ctx context.Context) ([]HNSWOwnerIndex, []int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.tenant, r.model, r.user_id, r.dims, r.index_name, r.state, r.rows_at_build,
		r.method, coalesce(r.ef_search, 0), coalesce(r.lists, 0), coalesce(r.probes, 0), r.recall,
		coalesce(pg_relation_size(to_regclass(r.index_name)), 0)
		FROM hnsw_owner_indexes r ORDER BY r.tenant, r.model, r.user_id`)
	if err != nil {
		return nil, nil, fmt.Errorf("listing vector indexes: %w", err)
	}
	defer rows.Close()
	var out []HNSWOwnerIndex
	var sizes []int64
	for rows.Next() {
		var ix HNSWOwnerIndex
		var n int64
		var recall *float64
		if err := rows.Scan(append(ix.registryDest(&recall), &n)...); err != nil {
			return nil, nil, fmt.Errorf("listing vector indexes: %w", err)
		}
		ix.setRecall(recall)
		out = append(out, ix)
		sizes = append(sizes, n)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("listing vector indexes: %w", err)
	}
	return out, sizes, nil
}
