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
// Every owner runs them, however large: a very large owner's keyword side once planned
// for its values (session 28 measured that ahead at 1,000,000 memories), but since its
// statement reads IDFs by term number the generic plan executes as fast, and planning
// afresh cost 10–12 ms a search there (docs/perf-search.md, session 30).
func (t *Tx) PreferGenericPlans(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`); err != nil {
		return fmt.Errorf("preferring generic plans: %w", err)
	}
	return nil
}

// plannerSaveSQL (select-list items) keeps the transaction's plan_cache_mode and
// enable_sort in placeholder settings before a statement changes them for itself, and
// plannerRestoreSQL sets them back, so the statements after it plan as the
// transaction chose (generic plans in a search or a resolver transaction: reading
// pg_settings' reset_val restored the session's mode instead, and cost 0.7–1 ms). The
// save items come first in their select list, which PostgreSQL evaluates in order;
// both work inside a pipelined batch, where nothing can be read in between.
const (
	plannerSaveSQL = `set_config('engram.plan_cache_mode_was', current_setting('plan_cache_mode'), true), ` +
		`set_config('engram.enable_sort_was', current_setting('enable_sort'), true)`
	plannerRestoreSQL = `SELECT set_config('plan_cache_mode', current_setting('engram.plan_cache_mode_was'), true), ` +
		`set_config('enable_sort', current_setting('engram.enable_sort_was'), true)`
)
