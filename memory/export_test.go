package memory

import "github.com/jackc/pgx/v5"

// Raw gives the store's own tests the underlying transaction, to check what the SQL
// left behind; it exists only in memory's test build, so no other package runs SQL.
func (t *Tx) Raw() pgx.Tx { return t.tx }
