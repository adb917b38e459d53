package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Raw gives the store's own tests the underlying transaction, to check what the SQL
// left behind; it exists only in memory's test build, so no other package runs SQL.
func (t *Tx) Raw() pgx.Tx { return t.tx }

// ExplainResolveNearest is the plan of ResolveReads' nearest read of q, chosen and set
// up as ResolveReads does, one line a row: its generic plan, as a resolver
// transaction runs it (inPipelinedTx).
func (t *Tx) ExplainResolveNearest(ctx context.Context, q NearestQuery) ([]string, error) {
	ix, err := t.ownerIndex(ctx, q.Model, q.UserID, q.Vector)
	if err != nil {
		return nil, err
	}
	if ix != nil {
		if _, err := t.tx.Exec(ctx, hnswScanSQL, fmt.Sprint(ix.ResolveEfSearch())); err != nil {
			return nil, err
		}
		defer func() { _, _ = t.tx.Exec(ctx, hnswScanDoneSQL) }()
	}
	sql, args := t.resolveNearest(ix, q)
	return t.explainGeneric(ctx, sql, args, "the resolver's nearest read")
}

// FreezeOwnerIndexes stops the clock of s's cache of ready owner indexes, so what it
// holds stays for the rest of the test, however long the test takes.
func FreezeOwnerIndexes(s *Store) {
	at := time.Now()
	s.indexes.now = func() time.Time { return at }
}

// TurnKeywordScores runs the turns' keyword side alone (bm25Spec) over user's turns
// for text, with the given statistics, either carrying every match's tsv through the
// scoring or reading the rescored rows' tsv again by primary key (byID), and returns
// each scored turn's BM25 score.
func (t *Tx) TurnKeywordScores(ctx context.Context, user, text string, stats TextStats, byID bool) (map[string]float64, error) {
	args := []any{t.tenant, user, SearchText(text)}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	spec := bm25Spec{prefix: "k", text: "$3", limit: arg(20), order: "occurred_at DESC, id",
		match: func(qc string) string {
			return `SELECT t.turn_id AS id, t.tsv, t.tsv_len, t.occurred_at, true AS keep
	FROM turns t, ` + qc + ` WHERE t.tenant = $1 AND t.user_id = $2 AND ` + ownerKeySQL("t", "$1", "$2") + ` AND t.tsv @@ ` + qc + `.q`
		},
		stats: `SELECT ` + arg(stats.N) + `::float8 AS n, ` + arg(stats.AvgLen) + `::float8 AS avgdl`,
	}
	if byID {
		spec.rowByID = "JOIN turns tv ON tv.tenant = $1 AND tv.turn_id = m.id"
	}
	stats.frequentArgs(&spec, arg)
	rows, err := t.tx.Query(ctx, "WITH "+strings.Join(spec.ctes(), ",\n")+" SELECT id, kr FROM kscored", args...)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for rows.Next() {
		var id string
		var kr float64
		if err := rows.Scan(&id, &kr); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = kr
	}
	rows.Close()
	return out, rows.Err()
}

// ExplainGeneric explains and runs the generic plan of sql with args.
func (t *Tx) ExplainGeneric(ctx context.Context, sql string, args ...any) ([]string, error) {
	return t.explainGeneric(ctx, sql, args, "the statement")
}

// FrequentMinDFSQL is frequentMinDFSQL, for checking it against FrequentMinDF.
func FrequentMinDFSQL(n string) string { return frequentMinDFSQL(n) }

// PairsEstimateSQL is pairsEstimateSQL, for checking it against PairsEstimate.
func PairsEstimateSQL(a, b, n string) string { return pairsEstimateSQL(a, b, n) }

// SQLLiteral is sqlLiteral, for its test against PostgreSQL.
func SQLLiteral(s string) string { return sqlLiteral(s) }

// TuneIndexReads measures ix and tunes its reads as the pass does for an index that
// searches read (measureRecall, down to fewestProbes lists), and returns ix as tuned,
// the sample's recall through it and, for an IVFFlat index, the same sample's recall
// reading one list fewer (0 when it reads one list).
func (s *Store) TuneIndexReads(ctx context.Context, ix HNSWOwnerIndex, target float64, fewestProbes int) (HNSWOwnerIndex, float64, float64, error) {
	qs, err := s.recallSample(ctx, ix, ix.Rows, indexRecallQueries)
	if err != nil {
		return ix, 0, 0, err
	}
	if ix, err = s.measureOn(ctx, ix, qs, target, fewestProbes, nil); err != nil {
		return ix, 0, 0, err
	}
	r := ix.Recall
	var fewer float64
	if ix.Method == MethodIVFFlat && ix.Probes > 1 {
		less := ix
		less.Probes--
		if fewer, err = s.indexRecall(ctx, less, qs); err != nil {
			return ix, 0, 0, err
		}
	}
	return ix, r, fewer, nil
}

// MinIVFProbes is the fewest lists the pass lowers a default IVFFlat read to.
const MinIVFProbes = minIVFProbes
