package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// Plans of the search statements as they run, for profiling (engram bench search
// --explain): EXPLAIN (ANALYZE, BUFFERS) executes the statement, so the plan carries
// the time and the pages each step read. A search runs its statements with their
// generic plans (PreferGenericPlans), planned once for any tenant and owner, and those
// can differ from the plan of the same statement with its values (a custom plan), so
// the generic plan is the one explained.

// ExplainAnalyzeMemoryCandidates runs the candidate query of q under EXPLAIN
// (ANALYZE, BUFFERS) with the plan a search runs (its generic plan) and returns the
// plan, one line a row.
func (t *Tx) ExplainAnalyzeMemoryCandidates(ctx context.Context, q MemorySearch) ([]string, error) {
	done, err := t.useHNSW(ctx, &q)
	if err != nil {
		return nil, err
	}
	defer done()
	sql, args := memoryCandidatesSQL(t.tenant, q)
	return t.explainGeneric(ctx, sql, args, "the memory candidate query")
}

// ExplainAnalyzeTurnCandidates is ExplainAnalyzeMemoryCandidates for the turns layer;
// nil when q asks for neither side.
func (t *Tx) ExplainAnalyzeTurnCandidates(ctx context.Context, q TurnSearch) ([]string, error) {
	if !q.Keyword && q.Vector == nil {
		return nil, nil
	}
	sql, args := turnCandidatesSQL(t.tenant, q)
	return t.explainGeneric(ctx, sql, args, "the turn candidate query")
}

// explainedStatement is the name the explained statement is prepared under.
const explainedStatement = "engram_explained"

// explainGeneric prepares sql, and explains and runs its generic plan with args.
// EXPLAIN of a statement sent with parameters plans it for their values, so the
// statement is prepared, and EXECUTE gets the values as literals, each in the text
// form of the type PostgreSQL inferred for its parameter.
func (t *Tx) explainGeneric(ctx context.Context, sql string, args []any, what string) ([]string, error) {
	conn := t.tx.Conn()
	sd, err := conn.Prepare(ctx, explainedStatement, sql)
	if err != nil {
		return nil, fmt.Errorf("preparing %s to explain it: %w", what, err)
	}
	defer func() {
		// The statement must go even when the explain failed (it is the connection's,
		// not the transaction's); an aborted transaction refuses the SQL form, not this.
		_ = conn.Deallocate(context.WithoutCancel(ctx), explainedStatement)
	}()
	if len(sd.ParamOIDs) != len(args) {
		return nil, fmt.Errorf("explaining %s: %d parameters, %d values", what, len(sd.ParamOIDs), len(args))
	}
	literals := make([]string, len(args))
	for i, a := range args {
		text, err := conn.TypeMap().Encode(sd.ParamOIDs[i], pgtype.TextFormatCode, a, nil)
		if err != nil {
			return nil, fmt.Errorf("explaining %s: parameter $%d: %w", what, i+1, err)
		}
		if text == nil {
			literals[i] = "NULL"
			continue
		}
		literals[i] = sqlLiteral(string(text))
	}
	if err := t.PreferGenericPlans(ctx); err != nil {
		return nil, err
	}
	return t.explain(ctx, "EXPLAIN (ANALYZE, BUFFERS) ",
		"EXECUTE "+explainedStatement+"("+strings.Join(literals, ", ")+")", nil, what)
}

// explain returns the plan of prefix+sql, one line a row.
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
