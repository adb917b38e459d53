package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Retrieval is the record of one search or context call: what was returned, and a
// hash of the query instead of its text.
type Retrieval struct {
	ID        uuid.UUID
	Kind      string // "search" or "context"
	QueryHash []byte
	UserID    string
	SessionID string
	MemoryIDs []uuid.UUID
	TurnIDs   []string
	// MemoryScores and TurnScores are aligned with MemoryIDs and TurnIDs: the score an
	// item was ranked by, nil where it was not ranked (a context's profile and session
	// turns). Shorter than the ids in records written before they were kept.
	MemoryScores []*float64
	TurnScores   []*float64
	CreatedAt    time.Time // set by the database
}

// RecordRetrieval writes a retrieval record. The commit is asynchronous
// (synchronous_commit off for this transaction only): losing the last few records in
// a crash is acceptable, waiting for a WAL flush on every read is not.
func (t *Tx) RecordRetrieval(ctx context.Context, r Retrieval) error {
	// The columns are NOT NULL arrays; a nil slice would be sent as NULL.
	if r.MemoryIDs == nil {
		r.MemoryIDs = []uuid.UUID{}
	}
	if r.TurnIDs == nil {
		r.TurnIDs = []string{}
	}
	if len(r.MemoryScores) != len(r.MemoryIDs) || len(r.TurnScores) != len(r.TurnIDs) {
		return fmt.Errorf("recording the retrieval: %d memory scores for %d memories, %d turn scores for %d turns",
			len(r.MemoryScores), len(r.MemoryIDs), len(r.TurnScores), len(r.TurnIDs))
	}
	_, err := t.tx.Exec(ctx, `WITH s AS (SELECT set_config('synchronous_commit', 'off', true))
		INSERT INTO retrievals (tenant, id, kind, query_hash, user_id, session_id, memory_ids, turn_ids,
			memory_scores, turn_scores)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM s`,
		t.tenant, r.ID, r.Kind, r.QueryHash, r.UserID, r.SessionID, uuidArgs(r.MemoryIDs), r.TurnIDs,
		nonNilScores(r.MemoryScores), nonNilScores(r.TurnScores))
	if err != nil {
		return fmt.Errorf("recording the retrieval: %w", err)
	}
	return nil
}

// GetRetrieval reads a retrieval record; ErrNotFound when the tenant has none with
// that id.
func (t *Tx) GetRetrieval(ctx context.Context, id uuid.UUID) (Retrieval, error) {
	var r Retrieval
	err := t.tx.QueryRow(ctx, `SELECT id, kind, query_hash, user_id, session_id, memory_ids, turn_ids,
			memory_scores, turn_scores, created_at
			FROM retrievals WHERE tenant = $1 AND id = $2`, t.tenant, id).
		Scan(&r.ID, &r.Kind, &r.QueryHash, &r.UserID, &r.SessionID, &r.MemoryIDs, &r.TurnIDs,
			&r.MemoryScores, &r.TurnScores, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Retrieval{}, fmt.Errorf("retrieval %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Retrieval{}, fmt.Errorf("reading retrieval %s: %w", id, err)
	}
	return r, nil
}

// nonNilScores sends an empty array, not NULL, for no scores (the columns are NOT NULL).
func nonNilScores(s []*float64) []*float64 {
	if s == nil {
		return []*float64{}
	}
	return s
}

// GetRetrieval reads a retrieval record of tenant in its own transaction.
func (s *Store) GetRetrieval(ctx context.Context, tenant string, id uuid.UUID) (Retrieval, error) {
	var r Retrieval
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		r, err = tx.GetRetrieval(ctx, id)
		return err
	})
	return r, err
}

// MemoryAccess is a batch of reads of one memory: how many, and the latest.
type MemoryAccess struct {
	ID uuid.UUID
	N  int64
	At time.Time
}

// AddAccessCounts adds reads to memories' access counts and moves their last access
// forward, in one statement. Callers pass the memories in a fixed order, so that
// concurrent writers lock rows in the same order and cannot deadlock. The lock
// timeout is short and the commit asynchronous: counts feed decay and ranking
// heuristics, and must not hold up the writers of the memories.
func (s *Store) AddAccessCounts(ctx context.Context, tenant string, reads []MemoryAccess) error {
	ids := make([]uuid.UUID, len(reads))
	ns := make([]int64, len(reads))
	ats := make([]time.Time, len(reads))
	for i, r := range reads {
		ids[i], ns[i], ats[i] = r.ID, r.N, r.At
	}
	return s.InTx(ctx, tenant, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `SELECT set_config('lock_timeout', '2s', true),
				set_config('synchronous_commit', 'off', true)`); err != nil {
			return fmt.Errorf("setting the lock timeout of access counts: %w", err)
		}
		_, err := tx.tx.Exec(ctx, `UPDATE memories m SET access_count = m.access_count + u.n,
				last_access_at = greatest(m.last_access_at, u.at)
				FROM unnest($2::uuid[], $3::bigint[], $4::timestamptz[]) AS u(id, n, at)
				WHERE m.tenant = $1 AND m.id = u.id`, tenant, uuidArgs(ids), ns, ats)
		if err != nil {
			return fmt.Errorf("adding access counts: %w", err)
		}
		return nil
	})
}

// RecordRetrievals writes a batch of retrieval records of tenant in one transaction
// (pipelined, one round trip), asynchronously committed like RecordRetrieval. A record
// whose id is stored already is skipped, so a retried batch writes nothing twice.
func (s *Store) RecordRetrievals(ctx context.Context, tenant string, recs []Retrieval) error {
	for i := range recs {
		r := &recs[i]
		if r.MemoryIDs == nil {
			r.MemoryIDs = []uuid.UUID{}
		}
		if r.TurnIDs == nil {
			r.TurnIDs = []string{}
		}
		if len(r.MemoryScores) != len(r.MemoryIDs) || len(r.TurnScores) != len(r.TurnIDs) {
			return fmt.Errorf("recording retrieval %s: %d memory scores for %d memories, %d turn scores for %d turns",
				r.ID, len(r.MemoryScores), len(r.MemoryIDs), len(r.TurnScores), len(r.TurnIDs))
		}
	}
	return s.InTx(ctx, tenant, func(tx *Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
		for _, r := range recs {
			b.Queue(`INSERT INTO retrievals (tenant, id, kind, query_hash, user_id, session_id, memory_ids, turn_ids,
				memory_scores, turn_scores) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
				tenant, r.ID, r.Kind, r.QueryHash, r.UserID, r.SessionID, r.MemoryIDs, r.TurnIDs,
				nonNilScores(r.MemoryScores), nonNilScores(r.TurnScores))
		}
		if err := tx.tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("recording %d retrievals: %w", len(recs), err)
		}
		return nil
	})
}
