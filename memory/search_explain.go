package memory

import (
	"context"
	"fmt"
)

// Plans of the search statements as they run, for profiling (engram bench search
// --explain): EXPLAIN (ANALYZE, BUFFERS) executes the statement, so the plan carries
// the time and the pages each step read.

// ExplainAnalyzeMemoryCandidates runs the candidate query of q under EXPLAIN
// (ANALYZE, BUFFERS) and returns the plan, one line a row.
func (t *Tx) ExplainAnalyzeMemoryCandidates(ctx context.Context, q MemorySearch) ([]string, error) {
	sql, args := memoryCandidatesSQL(t.tenant, q)
	return t.explain(ctx, "EXPLAIN (ANALYZE, BUFFERS) ", sql, args, "the memory candidate query")
}

// ExplainAnalyzeTurnCandidates is ExplainAnalyzeMemoryCandidates for the turns layer;
// nil when q asks for neither side.
func (t *Tx) ExplainAnalyzeTurnCandidates(ctx context.Context, q TurnSearch) ([]string, error) {
	if !q.Keyword && q.Vector == nil {
		return nil, nil
	}
	sql, args := turnCandidatesSQL(t.tenant, q)
	return t.explain(ctx, "EXPLAIN (ANALYZE, BUFFERS) ", sql, args, "the turn candidate query")
}

func (t *Tx) explain(ctx context.Context, prefix, sql string, args []any, what string) ([]string, error) {
	rows, err := t.tx.Query(ctx, prefix+sql, args...)
	if err != nil {
		return nil, fmt.Errorf("explaining %s: %w", what, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("reading the plan of %s: %w", what, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the plan of %s: %w", what, err)
	}
	return out, nil
}
