package memory

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ExplainList returns the plan of the listing query with the given plan types
// disabled (e.g. "enable_seqscan"), so a test can check that an index can serve a
// filter on a table too small for the planner to prefer it.
func (t *Tx) ExplainList(ctx context.Context, q ListQuery, disable ...string) ([]string, error) {
	sql, args, err := listSQL(t.tenant, q)
	if err != nil {
		return nil, err
	}
	for _, d := range disable {
		if _, err := t.tx.Exec(ctx, "SET LOCAL "+d+" = off"); err != nil {
			return nil, err
		}
	}
	rows, err := t.tx.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
