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

// AllTurnCoverage is TurnCoverage of every tenant (user nil) in one statement, by
// tenant; a tenant without turns is absent. (Memories: MemoryCensus.)
func (s *Store) AllTurnCoverage(ctx context.Context) (map[string]Coverage, error) {
	rows, err := s.pool.Query(ctx, `SELECT tenant, model, n FROM engram_op_turn_coverage()`)
	if err != nil {
		return nil, fmt.Errorf("counting the vectors of every tenant's turns: %w", err)
	}
	out := map[string]Coverage{}
	var (
		tenant string
		model  *string
		n      int64
	)
	_, err = pgx.ForEachRow(rows, []any{&tenant, &model, &n}, func() error {
		c, ok := out[tenant]
		if !ok {
			c.Models = []ModelCoverage{} // as TurnCoverage has it
		}
		if model == nil {
			c.Total = n
		} else {
			c.Models = append(c.Models, ModelCoverage{Model: *model, WithVector: n})
		}
		out[tenant] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("counting the vectors of every tenant's turns: %w", err)
	}
	for _, c := range out {
		SortModels(c.Models)
	}
	return out, nil
}
