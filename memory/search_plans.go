package memory

import (
	"context"
	"fmt"
)

// PreferGenericPlans makes the rest of the transaction run each prepared statement
// with its generic plan (plan_cache_mode force_generic_plan, for this transaction
// only). The search statements are long chains of CTEs: planning one afresh for each
// call's values cost 1.5–7 ms at 1,000,000 memories, more than executing it, and
// PostgreSQL keeps choosing custom plans for them. Their generic plans are the ones
// measured (each side through its owner index; docs/perf-search.md), and pgx
// prepares each statement once per connection, so a search then plans nothing.
func (t *Tx) PreferGenericPlans(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`); err != nil {
		return fmt.Errorf("preferring generic plans: %w", err)
	}
	return nil
}
