package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Raw gives the store's own tests the underlying transaction, to check what the SQL
// left behind; it exists only in memory's test build, so no other package runs SQL.
func (t *Tx) Raw() pgx.Tx { return t.tx }

// ExplainResolveNearest is the plan of ResolveReads' nearest read of q, chosen and set
// up as ResolveReads does, one line a row.
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
	return t.explain(ctx, "EXPLAIN ", sql, args, "the resolver's nearest read")
}

// FreezeOwnerIndexes stops the clock of s's cache of ready owner indexes, so what it
// holds stays for the rest of the test, however long the test takes.
func FreezeOwnerIndexes(s *Store) {
	at := time.Now()
	s.indexes.now = func() time.Time { return at }
}
