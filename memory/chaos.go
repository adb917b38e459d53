package memory

import (
	"context"
	"fmt"
)

// TurnCounts is how many turn rows the tenant has and how many distinct turn ids among
// them: the loss-and-duplicate count of `engram bench chaos`.
func (s *Store) TurnCounts(ctx context.Context, tenant string) (rows, distinct int, err error) {
	err = s.InTx(ctx, tenant, func(tx *Tx) error {
		return tx.tx.QueryRow(ctx, `SELECT count(*), count(DISTINCT turn_id) FROM turns WHERE tenant = $1`, tenant).
			Scan(&rows, &distinct)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("counting turns: %w", err)
	}
	return rows, distinct, nil
}
