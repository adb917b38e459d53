package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MaxListLimit bounds one page of ListMemories.
const MaxListLimit = 500

// ListPosition is where a page of ListMemories starts: after the memory with this
// update time and id. Pages are ordered by (updated_at, id), so memories created or
// changed while a caller pages through come after the position and are met once at
// the end rather than shifting the pages already read.
type ListPosition struct {
	UpdatedAt time.Time
	ID        uuid.UUID
}

// ListQuery filters a listing; a zero field does not filter.
type ListQuery struct {
	UserID     string
	AgentID    string
	Types      []Type
	Categories []Category
	Statuses   []Status
	Key        string
	// UpdatedAfter keeps memories updated strictly after this time.
	UpdatedAfter *time.Time
	// Metadata keeps memories whose metadata contains every key with an equal value
	// (jsonb containment, applied to the rows the owner's index range yields: see
	// migration 0008 for why no index serves it directly).
	Metadata map[string]any
	After    *ListPosition
	Limit    int // 1..MaxListLimit
}

// MemoryPage is one page of a listing; Next is nil on the last page.
type MemoryPage struct {
	Memories []Memory
	Next     *ListPosition
}

// MetadataContains is the SQL condition "col contains m" with m bound as an argument
// by arg, for searches and listings that filter on metadata; "" when m is empty.
func MetadataContains(col string, m map[string]any, arg func(any) string) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", Invalid("metadata", "cannot be encoded as JSON: %v", err)
	}
	return col + " @> " + arg(string(b)) + "::jsonb", nil
}

func (q ListQuery) validate() error {
	if q.Limit < 1 || q.Limit > MaxListLimit {
		return Invalid("limit", "must be between 1 and %d, got %d", MaxListLimit, q.Limit)
	}
	for _, t := range q.Types {
		if !t.Valid() {
			return Invalid("type", "%q is not one of %v", t, Types())
		}
	}
	for _, c := range q.Categories {
		if !c.Valid() {
			return Invalid("category", "%q is not one of %v", c, Categories())
		}
	}
	for _, s := range q.Statuses {
		if !s.Valid() {
			return Invalid("status", "%q is not one of %v", s, Statuses())
		}
	}
	return nil
}

// listSQL builds the listing query: the filters, then the keyset condition and order
// (ties on updated_at broken by id), reading one row more than a page to know whether
// another page follows.
func listSQL(tenant string, q ListQuery) (string, []any, error) {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := []string{"tenant = $1"}
	if q.UserID != "" {
		where = append(where, "user_id = "+arg(q.UserID))
	}
	if q.AgentID != "" {
		where = append(where, "agent_id = "+arg(q.AgentID))
	}
	texts := func(col string, vs []string) {
		if len(vs) > 0 {
			where = append(where, col+" = ANY("+arg(vs)+"::text[])")
		}
	}
	texts("type", stringsOf(q.Types))
	texts("category", stringsOf(q.Categories))
	texts("status", stringsOf(q.Statuses))
	if q.Key != "" {
		where = append(where, "key = "+arg(q.Key))
	}
	if q.UpdatedAfter != nil {
		where = append(where, "updated_at > "+arg(*q.UpdatedAfter))
	}
	md, err := MetadataContains("metadata", q.Metadata, arg)
	if err != nil {
		return "", nil, err
	}
	if md != "" {
		where = append(where, md)
	}
	if q.After != nil {
		where = append(where, "(updated_at, id) > ("+arg(q.After.UpdatedAt)+"::timestamptz, "+arg(q.After.ID)+"::uuid)")
	}
	sql := "SELECT " + memoryColumns + " FROM memories WHERE " + strings.Join(where, " AND ") +
		" ORDER BY updated_at, id LIMIT " + arg(q.Limit+1)
	return sql, args, nil
}

func stringsOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// ListMemories reads one page of the tenant's memories that pass q's filters.
func (t *Tx) ListMemories(ctx context.Context, q ListQuery) (MemoryPage, error) {
	if err := q.validate(); err != nil {
		return MemoryPage{}, err
	}
	sql, args, err := listSQL(t.tenant, q)
	if err != nil {
		return MemoryPage{}, err
	}
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return MemoryPage{}, fmt.Errorf("listing memories: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Memory, error) { return scanMemory(r, t.tenant) })
	if err != nil {
		return MemoryPage{}, fmt.Errorf("listing memories: %w", err)
	}
	page := MemoryPage{Memories: ms}
	if len(ms) > q.Limit {
		page.Memories = ms[:q.Limit]
		last := page.Memories[q.Limit-1]
		page.Next = &ListPosition{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	if page.Memories == nil {
		page.Memories = []Memory{}
	}
	return page, nil
}

// ListMemories reads one page of a listing in its own transaction.
func (s *Store) ListMemories(ctx context.Context, tenant string, q ListQuery) (MemoryPage, error) {
	var p MemoryPage
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		p, err = tx.ListMemories(ctx, q)
		return err
	})
	return p, err
}

// ForgottenMemory is one memory DeleteUserMemories removed, for the audit log.
type ForgottenMemory struct {
	ID          uuid.UUID
	Version     int
	ContentHash []byte
}

// DeleteUserMemories hard-deletes every memory of one user (all statuses) as
// DeleteMemory deletes one: versions, lineage and embeddings cascade; ledger entries
// stay, unlinked and marked dropped, so a redelivered candidate of the kept turns is
// replayed as a no-op instead of bringing a memory back; other memories' lineage
// naming them is kept. The user's turns stay; those the memories came from are marked
// forgotten. The caller holds the owner's lock and writes the audit entries.
func (t *Tx) DeleteUserMemories(ctx context.Context, userID string) ([]ForgottenMemory, MemoryRowCounts, error) {
	var n MemoryRowCounts
	if err := t.tx.QueryRow(ctx, `WITH ids AS (SELECT id FROM memories WHERE tenant = $1 AND user_id = $2)
		SELECT
			(SELECT count(*) FROM memory_versions WHERE tenant = $1 AND memory_id IN (SELECT id FROM ids)),
			(SELECT count(*) FROM memory_lineage WHERE tenant = $1 AND memory_id IN (SELECT id FROM ids)),
			(SELECT count(*) FROM memory_embeddings WHERE tenant = $1 AND memory_id IN (SELECT id FROM ids))`,
		t.tenant, userID).Scan(&n.Versions, &n.Lineage, &n.Embeddings); err != nil {
		return nil, n, fmt.Errorf("counting the rows of user %s's memories: %w", userID, err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE applied_candidates SET memory_id = NULL, decision = 'drop',
		reason = 'memory deleted' WHERE tenant = $1 AND memory_id IN (SELECT id FROM memories WHERE tenant = $1 AND user_id = $2)`,
		t.tenant, userID); err != nil {
		return nil, n, fmt.Errorf("unlinking the ledger entries of user %s's memories: %w", userID, err)
	}
	if err := t.forgetSourceTurns(ctx, `SELECT id FROM memories WHERE tenant = $1 AND user_id = $2`, userID); err != nil {
		return nil, n, fmt.Errorf("deleting user %s's memories: %w", userID, err)
	}
	if err := t.DeleteTextStats(ctx, userID, false); err != nil {
		return nil, n, err
	}
	rows, err := t.tx.Query(ctx, `DELETE FROM memories WHERE tenant = $1 AND user_id = $2
		RETURNING id, version, content`, t.tenant, userID)
	if err != nil {
		return nil, n, fmt.Errorf("deleting user %s's memories: %w", userID, err)
	}
	gone, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ForgottenMemory, error) {
		var f ForgottenMemory
		var content string
		err := r.Scan(&f.ID, &f.Version, &content)
		f.ContentHash = ContentHash(content)
		return f, err
	})
	if err != nil {
		return nil, n, fmt.Errorf("deleting user %s's memories: %w", userID, err)
	}
	return gone, n, nil
}
