package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The owners' own full-text indexes (issue 17). Every keyword statement finds its
// owner's rows holding a term through memories_owner_tsv, a GIN index of (owner_key,
// tsv): the planner intersects the term's entries with the owner's, and the owner's
// entry lists every row it has. At 1,000,000 memories that list is ~390 pages, read
// in full by each pass whose terms are spread over the owner (a pair of terms held by
// 15,000 and 20,000 of its rows: 7.7 ms, 392 buffers). A partial GIN index of the
// owner's tsv alone (WHERE owner_key = K) holds the owner's terms only: the same pair
// in 1.6–2.0 ms, 24 buffers.
//
// Owners of TextIndexMinDocs memories and more get one, built concurrently by the
// maintenance pass that builds the vector indexes (MaintainHNSW) and dropped when the
// owner shrinks below half of it. A search of such an owner names its owner_key by
// literals (memoryCandidatesSQL), so its generic plan, made once a connection, can see
// the index's predicate implied; the planner reads the partial index when it exists
// and memories_owner_tsv when it does not (not built yet, dropped, or a build that
// failed), so nothing records which owners have one.

// TextIndexMinDocs is the owner size (memories of one tenant and user id; the global
// scope's user id is empty) from which the owner gets a full-text index of its own and its
// keyword statements name it by literals.
const TextIndexMinDocs = 100_000

// textIndexPrefix starts the name of every owner's full-text index: the rest is its
// owner_key in hexadecimal, so the maintainer knows each index's owner by its name.
const textIndexPrefix = "engram_text_"

func textIndexName(key int64) string {
	return textIndexPrefix + strconv.FormatUint(uint64(key), 16)
}

// textIndexKey is the owner_key an index's name holds; false for other names.
func textIndexKey(name string) (int64, bool) {
	hex, ok := strings.CutPrefix(name, textIndexPrefix)
	if !ok || hex == "" {
		return 0, false
	}
	u, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || strconv.FormatUint(u, 16) != hex {
		return 0, false
	}
	return int64(u), true
}

// TextIndexReport is what a pass did to the owners' full-text indexes.
type TextIndexReport struct {
	Built   int `json:"built"`
	Dropped int `json:"dropped"`
	Kept    int `json:"kept"`
	Failed  int `json:"failed"`
	// BuildSeconds is the time the builds took, together.
	BuildSeconds float64 `json:"build_seconds"`
}

// maintainTextIndexes gives every owner of threshold memories or more its own
// full-text index and drops those of owners below half of it, and any left invalid by
// a build that died (rebuilt when the owner still qualifies). c holds MaintainHNSW's
// lock; tenants, when set, limits the pass to theirs.
func (s *Store) maintainTextIndexes(ctx context.Context, c *pgx.Conn, threshold int, tenants []string,
	log *slog.Logger) (TextIndexReport, error) {
	var rep TextIndexReport
	ixs, err := textIndexesIn(ctx, c)
	if err != nil {
		return rep, fmt.Errorf("maintaining full-text indexes: %w", err)
	}
	// The owners near the threshold, in one count across tenants. A pass limited to
	// some tenants counts every owner of theirs, so it knows which indexes are theirs;
	// an index whose owner it did not count is another tenant's, unless no row has its
	// key any more (a tenant deleted).
	least := max(threshold/2, 1)
	if len(tenants) > 0 {
		least = 1
	}
	size := map[int64]int64{}
	ownerless := map[int64]bool{}
	err = s.acrossTenants(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT hashtextextended(tenant || '/' || user_id, 0), count(*) FROM memories
			WHERE $2::text[] IS NULL OR tenant = ANY($2) GROUP BY tenant, user_id HAVING count(*) >= $1`, least, tenants)
		if err != nil {
			return err
		}
		var key, n int64
		if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error {
			size[key] += n // two owners of one key (a collision) share its index
			return nil
		}); err != nil {
			return err
		}
		var uncounted []int64
		for _, ix := range ixs {
			if len(tenants) > 0 && size[ix.Key] == 0 {
				uncounted = append(uncounted, ix.Key)
			}
		}
		if len(uncounted) == 0 {
			return nil
		}
		rows, err = tx.Query(ctx, `SELECT k FROM unnest($1::bigint[]) k
			WHERE NOT EXISTS (SELECT 1 FROM memories WHERE owner_key = k)`, uncounted)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, []any{&key}, func() error {
			ownerless[key] = true
			return nil
		})
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("maintaining full-text indexes: counting the owners' memories: %w", err)
	}
	have := map[int64]bool{}
	var drop []string
	for _, ix := range ixs {
		switch {
		case len(tenants) > 0 && size[ix.Key] == 0 && !ownerless[ix.Key]: // another tenant's
		case !ix.Valid || size[ix.Key] < int64(threshold/2):
			drop = append(drop, ix.Name)
		default:
			have[ix.Key] = true
		}
	}
	for _, n := range drop {
		log.Info("dropping a full-text index of an owner that shrank (or of a build that died)", "index", n)
		if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+pgx.Identifier{n}.Sanitize()); err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			// Like a failed build: logged, and the next pass tries again.
			log.Warn("dropping a full-text index failed; the next pass tries again", "index", n, "error", err)
			rep.Failed++
			continue
		}
		rep.Dropped++
	}
	for key, n := range size {
		if have[key] {
			rep.Kept++
			continue
		}
		if n < int64(threshold) {
			continue
		}
		name := textIndexName(key)
		log.Info("building a full-text index for a large owner", "index", name, "memories", n)
		start := time.Now()
		// The predicate is the owner's key alone: the statements that read the index
		// keep their tenant and user conditions, so a collision of two owners' keys
		// costs a recheck, never a wrong row.
		ddl := fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON memories USING gin (tsv) WITH (fastupdate = off)
			WHERE owner_key = %d`, pgx.Identifier{name}.Sanitize(), key)
		if _, err := c.Exec(ctx, ddl); err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			// The next pass drops what is left of it and tries again.
			log.Warn("building a full-text index failed; the next pass tries again", "index", name, "error", err)
			rep.Failed++
			continue
		}
		rep.Built++
		rep.BuildSeconds += time.Since(start).Seconds()
		log.Info("built a full-text index", "index", name, "seconds", time.Since(start).Seconds())
	}
	return rep, nil
}

// TextIndex is one owner's full-text index as `engram index list` shows it.
type TextIndex struct {
	Tenant string `json:"tenant"`  // "" when no memory has its key any more
	UserID string `json:"user_id"` // "" is the tenant's global scope
	Name   string `json:"index"`
	Key    int64  `json:"-"`     // the owner_key its name holds
	Valid  bool   `json:"valid"` // false: a build that died (the next pass drops it)
	Bytes  int64  `json:"bytes"`
}

// textIndexesIn lists the owners' full-text indexes in the catalog, by name.
func textIndexesIn(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]TextIndex, error) {
	rows, err := db.Query(ctx, `SELECT i.relname, x.indisvalid, pg_relation_size(i.oid) FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'memories'::regclass AND i.relname LIKE 'engram\_text\_%' ORDER BY i.relname`)
	if err != nil {
		return nil, fmt.Errorf("listing the owners' full-text indexes: %w", err)
	}
	var out []TextIndex
	var ix TextIndex
	if _, err := pgx.ForEachRow(rows, []any{&ix.Name, &ix.Valid, &ix.Bytes}, func() error {
		var ok bool
		if ix.Key, ok = textIndexKey(ix.Name); ok {
			out = append(out, ix)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("listing the owners' full-text indexes: %w", err)
	}
	return out, nil
}

// TextIndexes lists the owners' full-text indexes (the owner role's store), each with
// the owner its name's owner_key belongs to, read through the index itself.
func (s *Store) TextIndexes(ctx context.Context) ([]TextIndex, error) {
	var out []TextIndex
	err := s.acrossTenants(ctx, func(tx pgx.Tx) error {
		var err error
		if out, err = textIndexesIn(ctx, tx); err != nil {
			return err
		}
		for i := range out {
			err := tx.QueryRow(ctx, `SELECT tenant, user_id FROM memories WHERE owner_key = $1 LIMIT 1`, out[i].Key).
				Scan(&out[i].Tenant, &out[i].UserID)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the owners' full-text indexes: %w", err)
	}
	return out, nil
}
