package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
)

// Re-embedding: vectors are stored per model, so a newly configured embedding model is
// rolled in by embedding what lacks a vector in it, without re-extraction. What lacks
// a vector is also the job's progress: a finished owner has nothing left to read, so a
// rerun after a crash redoes nothing. Every read is one tenant's (row-level security),
// pages are keyset-paginated, and a vector is written only for the content it was
// computed from.

// reembedStatuses are the memories worth a vector: those a search can return (active,
// pending) and those that can come back (archived). Superseded, deprecated and
// expired memories are history.
const reembedStatuses = `('active', 'pending', 'archived')`

// ModelCoverage is how many of the counted memories (or turns) have a vector in Model.
type ModelCoverage struct {
	Model      string `json:"model"`
	WithVector int64  `json:"with_vector"`
}

// SortModels orders ms by model name, as the per-tenant counts list them.
func SortModels(ms []ModelCoverage) {
	slices.SortFunc(ms, func(a, b ModelCoverage) int { return strings.Compare(a.Model, b.Model) })
}

// Coverage counts a tenant's memories (or turns) and those with a vector, per model.
type Coverage struct {
	Total  int64           `json:"total"`
	Models []ModelCoverage `json:"models"`
}

// For is the number with a vector in model.
func (c Coverage) For(model string) int64 {
	for _, m := range c.Models {
		if m.Model == model {
			return m.WithVector
		}
	}
	return 0
}

// OwnerGap is one owner and how many of its memories (or turns) lack a vector.
type OwnerGap struct {
	UserID  string
	Missing int64
}

// TextToEmbed is one memory or turn lacking a vector: its id and the text to embed.
type TextToEmbed struct {
	ID     string // a memory's UUID or a turn id
	UserID string
	Text   string
}

// userArg is the optional owner filter of the re-embedding reads: nil selects every
// owner, "" the tenant's pool of agent and global memories.
func userArg(user *string) any {
	if user == nil {
		return nil
	}
	return *user
}

// MemoryCoverage counts the tenant's active, pending and archived memories (of user
// when not nil) and, per model, those with a vector.
func (s *Store) MemoryCoverage(ctx context.Context, tenant string, user *string) (Coverage, error) {
	return s.coverage(ctx, tenant, user, "memories",
		`SELECT count(*) FROM memories m WHERE m.tenant = $1
			AND m.status IN `+reembedStatuses+` AND ($2::text IS NULL OR m.user_id = $2)`,
		`SELECT e.model, count(*) FROM memory_embeddings e
			JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
			WHERE e.tenant = $1 AND m.status IN `+reembedStatuses+` AND ($2::text IS NULL OR m.user_id = $2)
			GROUP BY e.model ORDER BY e.model`)
}

// TurnCoverage counts the tenant's turns that still have content (of user when not
// nil) and, per model, those with a vector.
func (s *Store) TurnCoverage(ctx context.Context, tenant string, user *string) (Coverage, error) {
	return s.coverage(ctx, tenant, user, "turns",
		`SELECT count(*) FROM turns t WHERE t.tenant = $1
			AND t.content IS NOT NULL AND t.content <> '' AND ($2::text IS NULL OR t.user_id = $2)`,
		`SELECT e.model, count(*) FROM turn_embeddings e
			JOIN turns t ON t.tenant = e.tenant AND t.turn_id = e.turn_id
			WHERE e.tenant = $1 AND t.content IS NOT NULL AND t.content <> '' AND ($2::text IS NULL OR t.user_id = $2)
			GROUP BY e.model ORDER BY e.model`)
}

// coverage runs a total count and a per-model count of vectors ($1 tenant, $2 user)
// in one read-only snapshot, so the two agree.
func (s *Store) coverage(ctx context.Context, tenant string, user *string, what, totalSQL, perModelSQL string) (Coverage, error) {
	var c Coverage
	err := s.InTxWith(ctx, tenant, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx *Tx) error {
		if err := tx.tx.QueryRow(ctx, totalSQL, tenant, userArg(user)).Scan(&c.Total); err != nil {
			return err
		}
		rows, err := tx.tx.Query(ctx, perModelSQL, tenant, userArg(user))
		if err != nil {
			return err
		}
		c.Models, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ModelCoverage, error) {
			var m ModelCoverage
			return m, r.Scan(&m.Model, &m.WithVector)
		})
		return err
	})
	if err != nil {
		return Coverage{}, fmt.Errorf("counting the vectors of tenant %s's %s: %w", tenant, what, err)
	}
	return c, nil
}

// MemoryGaps lists the tenant's owners (user when not nil) whose active, pending or
// archived memories lack a vector in model, with how many, in owner order.
func (s *Store) MemoryGaps(ctx context.Context, tenant, model string, user *string) ([]OwnerGap, error) {
	return s.gaps(ctx, tenant, "memories", `SELECT m.user_id, count(*) FROM memories m
		WHERE m.tenant = $1 AND m.status IN `+reembedStatuses+` AND ($3::text IS NULL OR m.user_id = $3)
		  AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.tenant = m.tenant AND e.memory_id = m.id AND e.model = $2)
		GROUP BY m.user_id ORDER BY m.user_id`, model, user)
}

// TurnGaps lists the tenant's users (user when not nil) whose turns with content lack
// a vector in model, with how many, in user order.
func (s *Store) TurnGaps(ctx context.Context, tenant, model string, user *string) ([]OwnerGap, error) {
	return s.gaps(ctx, tenant, "turns", `SELECT t.user_id, count(*) FROM turns t
		WHERE t.tenant = $1 AND t.content IS NOT NULL AND t.content <> '' AND ($3::text IS NULL OR t.user_id = $3)
		  AND NOT EXISTS (SELECT 1 FROM turn_embeddings e WHERE e.tenant = t.tenant AND e.turn_id = t.turn_id AND e.model = $2)
		GROUP BY t.user_id ORDER BY t.user_id`, model, user)
}

func (s *Store) gaps(ctx context.Context, tenant, what, sql, model string, user *string) ([]OwnerGap, error) {
	var out []OwnerGap
	err := s.InTxWith(ctx, tenant, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, sql, tenant, model, userArg(user))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (OwnerGap, error) {
			var g OwnerGap
			return g, r.Scan(&g.UserID, &g.Missing)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the %s of tenant %s lacking a %s vector: %w", what, tenant, model, err)
	}
	return out, nil
}

// MemoriesLackingVector returns up to limit of the owner's active, pending and
// archived memories without a vector in model whose id sorts after after (uuid.Nil:
// from the start), in id order: one keyset page.
func (t *Tx) MemoriesLackingVector(ctx context.Context, userID, model string, after uuid.UUID, limit int) ([]TextToEmbed, error) {
	rows, err := t.tx.Query(ctx, `SELECT m.id::text, m.user_id, m.content FROM memories m
		WHERE m.tenant = $1 AND m.user_id = $2 AND m.status IN `+reembedStatuses+` AND m.id > $4
		  AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.tenant = m.tenant AND e.memory_id = m.id AND e.model = $3)
		ORDER BY m.id LIMIT $5`, t.tenant, userID, model, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading memories lacking a %s vector: %w", model, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[TextToEmbed])
	if err != nil {
		return nil, fmt.Errorf("reading memories lacking a %s vector: %w", model, err)
	}
	return out, nil
}

// TurnsLackingVector returns up to limit of the user's turns with content and without
// a vector in model whose id sorts after after ("": from the start), in id order.
func (t *Tx) TurnsLackingVector(ctx context.Context, userID, model, after string, limit int) ([]TextToEmbed, error) {
	rows, err := t.tx.Query(ctx, `SELECT t.turn_id, t.user_id, t.content FROM turns t
		WHERE t.tenant = $1 AND t.user_id = $2 AND t.content IS NOT NULL AND t.content <> '' AND t.turn_id > $4
		  AND NOT EXISTS (SELECT 1 FROM turn_embeddings e WHERE e.tenant = t.tenant AND e.turn_id = t.turn_id AND e.model = $3)
		ORDER BY t.turn_id LIMIT $5`, t.tenant, userID, model, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading turns lacking a %s vector: %w", model, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[TextToEmbed])
	if err != nil {
		return nil, fmt.Errorf("reading turns lacking a %s vector: %w", model, err)
	}
	return out, nil
}

// AddMissingEmbedding stores the vector of memory id under e.Model computed from
// content, unless the memory is gone, its content changed since it was read (the
// writer of the change embedded the new text), or a vector in that model is there
// already. written says whether a row was added.
func (t *Tx) AddMissingEmbedding(ctx context.Context, id uuid.UUID, content string, e Embedding) (written bool, err error) {
	if e.Model == "" || len(e.Vector) == 0 {
		return false, fmt.Errorf("%w: an embedding needs a model and a vector", ErrInvalid)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding)
		SELECT m.tenant, m.id, $3::text, $4::int, m.user_id, $5::vector FROM memories m
		WHERE m.tenant = $1 AND m.id = $2 AND m.content = $6
		ON CONFLICT (tenant, memory_id, model) DO NOTHING`,
		t.tenant, id, e.Model, len(e.Vector), pgvector.NewVector(e.Vector), content)
	if err != nil {
		return false, fmt.Errorf("storing the %s embedding of memory %s: %w", e.Model, id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// AddMissingTurnEmbedding is AddMissingEmbedding for a turn: nothing is written when
// the turn is gone, its content was purged, or it has a vector in that model.
func (t *Tx) AddMissingTurnEmbedding(ctx context.Context, turnID, content string, e Embedding) (written bool, err error) {
	if e.Model == "" || len(e.Vector) == 0 {
		return false, fmt.Errorf("%w: an embedding needs a model and a vector", ErrInvalid)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO turn_embeddings (tenant, turn_id, model, dims, user_id, embedding)
		SELECT t.tenant, t.turn_id, $3::text, $4::int, t.user_id, $5::vector FROM turns t
		WHERE t.tenant = $1 AND t.turn_id = $2 AND t.content = $6
		ON CONFLICT (tenant, turn_id, model) DO NOTHING`,
		t.tenant, turnID, e.Model, len(e.Vector), pgvector.NewVector(e.Vector), content)
	if err != nil {
		return false, fmt.Errorf("storing the %s embedding of turn %s: %w", e.Model, turnID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// reembedLockKey is the session advisory lock one re-embedding job holds (see
// runLockKey for the other keys in use).
const reembedLockKey int64 = 0x656e6772616d13 // "engram" + 0x13

// ReembedLock is the re-embedding lock, held on a dedicated connection so a crashed
// process releases it by dying.
type ReembedLock struct{ conn *pgxpool.Conn }

// ReembedLock takes the re-embedding lock. With wait it blocks until the lock is
// free (or ctx ends); without, ok is false when another job holds it.
func (s *Store) ReembedLock(ctx context.Context, wait bool) (lock *ReembedLock, ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquiring a connection for the re-embedding lock: %w", err)
	}
	if wait {
		_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1)", reembedLockKey)
		ok = err == nil
	} else {
		err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", reembedLockKey).Scan(&ok)
	}
	if err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("taking the re-embedding lock: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return &ReembedLock{conn: conn}, true, nil
}

// Release lets go of the lock (see RunLock.Release).
func (l *ReembedLock) Release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", reembedLockKey); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}
