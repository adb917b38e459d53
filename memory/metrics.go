package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// MemoryCount is how many memories of one tenant have a status and a type.
type MemoryCount struct {
	Tenant, Status, Type string
	Count                int64
}

// EmbeddingCount is how many of a tenant's active memories have a vector of a model
// (re-embedding coverage: compare with the tenant's active memories).
type EmbeddingCount struct {
	Tenant, Model string
	Count         int64
}

// MetricTenants lists the tenants that have memories or turns, for metrics. Like the
// consolidator's owner listing it is an operator read of the owners registry (tenant
// names only, never content), through its SECURITY DEFINER function (migration 0008).
func (s *Store) MetricTenants(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT engram_op_tenants()`)
	if err != nil {
		return nil, fmt.Errorf("listing tenants for metrics: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing tenants for metrics: %w", err)
	}
	return out, nil
}

// MemoryCounts counts the tenant's memories by status and type, and its active memories
// with a vector by embedding model, in one read-only transaction.
func (s *Store) MemoryCounts(ctx context.Context, tenant string) ([]MemoryCount, []EmbeddingCount, error) {
	var counts []MemoryCount
	var embedded []EmbeddingCount
	err := s.InTxWith(ctx, tenant, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT status, type, count(*) FROM memories GROUP BY status, type`)
		if err != nil {
			return err
		}
		counts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (MemoryCount, error) {
			c := MemoryCount{Tenant: tenant}
			return c, r.Scan(&c.Status, &c.Type, &c.Count)
		})
		if err != nil {
			return err
		}
		rows, err = tx.tx.Query(ctx, `SELECT e.model, count(*) FROM memory_embeddings e
			JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
			WHERE m.status = 'active' GROUP BY e.model`)
		if err != nil {
			return err
		}
		embedded, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (EmbeddingCount, error) {
			c := EmbeddingCount{Tenant: tenant}
			return c, r.Scan(&c.Model, &c.Count)
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("counting memories of tenant %s: %w", tenant, err)
	}
	return counts, embedded, nil
}
