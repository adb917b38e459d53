package memory

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// The owners' IVFFlat indexes are read into shared buffers by the maintenance pass.
// pgvector's IVFFlat scan reads its lists through a bulk-read ring (BAS_BULKREAD), so
// however often an owner is searched its index never stays in shared buffers: every
// search of the million-memory owner read its 40 lists (about 1,700 pages) again from
// the operating system's cache. pg_prewarm reads the whole index in with the normal
// strategy, and the scans then find it there (a scan's hit keeps a page's usage up):
// the vector statement went from 23.6–24.3 to 20.9–21.2 ms mean, no page read
// (session 32). HNSW scans read through shared buffers as any index does, so their
// pages stay on their own. pg_prewarm is an extension only a superuser may create
// (scripts/services.sh and deploy/postgres-init.sql do); without it nothing is done.
// The preloaded autoprewarm worker (scripts/services.sh) then reloads those pages
// after a restart.

// prewarmIVF reads every ready IVFFlat owner index (of tenants, when set) that fits in
// a quarter of shared buffers into them and returns the blocks read; a failure is
// logged, not returned: it costs speed only.
func (s *Store) prewarmIVF(ctx context.Context, c *pgx.Conn, tenants []string, log *slog.Logger) int64 {
	var have bool
	if err := c.QueryRow(ctx, `SELECT to_regprocedure('pg_prewarm(regclass, text, text, bigint, bigint)') IS NOT NULL`).Scan(&have); err != nil || !have {
		return 0
	}
	// Only an index that fits in a quarter of shared buffers: a larger one would push
	// the searches' other pages out every pass (PostgreSQL's default is 128 MB; the
	// million-memory owner's index is 790 MB).
	rows, err := c.Query(ctx, `SELECT index_name FROM hnsw_owner_indexes WHERE method = 'ivfflat' AND state = 'ready'
		AND ($1::text[] IS NULL OR tenant = ANY($1)) AND to_regclass(index_name) IS NOT NULL
		AND pg_relation_size(to_regclass(index_name)) <= pg_size_bytes(current_setting('shared_buffers')) / 4
		ORDER BY index_name`, tenants)
	if err != nil {
		log.Warn("listing the IVFFlat indexes to prewarm failed", "error", err)
		return 0
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		log.Warn("listing the IVFFlat indexes to prewarm failed", "error", err)
		return 0
	}
	var total int64
	for _, n := range names {
		var blocks int64
		if err := c.QueryRow(ctx, `SELECT pg_prewarm(to_regclass($1))`, n).Scan(&blocks); err != nil {
			if ctx.Err() != nil {
				return total
			}
			log.Warn("prewarming an IVFFlat index failed", "index", n, "error", fmt.Errorf("pg_prewarm: %w", err))
			continue
		}
		total += blocks
	}
	return total
}
