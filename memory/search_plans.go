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

// LargeOwnerCustomPlans: a keyword side over an owner of LargeOwnerCustomPlanDocs
// rows and more runs with a plan made for its values; every other owner's runs with
// its generic plan. Before migration 0019 a generic plan read a 100,000-memory
// owner's rows through memories_owner and tested each (113 ms), because the full-text
// index was not keyed by owner; it now reads the owner's full-text entries
// (TestLargeOwnerMemoryPlan), and planning the long statement afresh costs 4–6 ms a
// search. Measured with `engram bench large` (session 28, 2026-12-06): at 100,000
// memories the generic plan was ahead (full search p95 29.2 and 29.0 ms against 35.3
// and 29.9 with custom plans), at 1,000,000 the custom plan (57.8 and 43.1 against
// 73.1 and 68.4). Where they cross was not measured.
const LargeOwnerCustomPlanDocs = 500_000

// customPlanned reports whether q's statement plans for its values: a keyword side
// over an owner of LargeOwnerCustomPlanDocs rows or more, by its statistics, in a
// statement that does not read an owner index (useHNSW has set the planner up for
// that one, and the placeholders plannerSaveSQL keeps do not nest).
func customPlanned(q MemorySearch) bool {
	return q.hnsw == nil && !q.VectorAlone && q.Stats != nil && q.Stats.N >= LargeOwnerCustomPlanDocs
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

// customPlans makes the transaction's next statements plan with their values
// (plan_cache_mode force_custom_plan) and returns what restores the planner.
func (t *Tx) customPlans(ctx context.Context) (restore func(), err error) {
	if _, err := t.tx.Exec(ctx, `SELECT `+plannerSaveSQL+`, set_config('plan_cache_mode', 'force_custom_plan', true)`); err != nil {
		return func() {}, fmt.Errorf("planning for the owner's values: %w", err)
	}
	return func() {
		// Best effort: after a failed statement the transaction is aborted anyway.
		_, _ = t.tx.Exec(ctx, plannerRestoreSQL)
	}, nil
}
