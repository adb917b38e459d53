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

// The console's reads (internal/console): listings and look-ups no other caller
// needs. Each runs in a tenant transaction, so row-level security bounds it as it
// bounds the API; the operator tables without it (consolidation_*) are filtered on
// the tenant explicitly.

// UserCounts is one user of a tenant with the number of memories in each status.
// UserID is empty for the memories of no user (agent and global scope).
type UserCounts struct {
	UserID   string
	ByStatus map[Status]int
	Total    int
}

// ConsoleUsers lists the tenant's users that have memories, with counts by status,
// by user id.
func (s *Store) ConsoleUsers(ctx context.Context, tenant string) ([]UserCounts, error) {
	var out []UserCounts
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT user_id, status, count(*) FROM memories
			WHERE tenant = $1 GROUP BY user_id, status ORDER BY user_id, status`, tenant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var user, status string
			var n int
			if err := rows.Scan(&user, &status, &n); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].UserID != user {
				out = append(out, UserCounts{UserID: user, ByStatus: map[Status]int{}})
			}
			u := &out[len(out)-1]
			u.ByStatus[Status(status)] += n
			u.Total += n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	return out, nil
}

// MemoryFilter selects memories for the console. Empty fields select everything.
type MemoryFilter struct {
	// User, when AnyUser is false, is the user whose memories are listed ("" for the
	// memories of no user).
	User     string
	AnyUser  bool
	Type     Type
	Category Category
	Status   Status
	Key      string // substring of the key, case-insensitive
	Text     string // substring of the content, case-insensitive
	Limit    int    // default 200, at most 1000
}

// likePattern escapes s for ILIKE and wraps it in wildcards.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// ConsoleMemories lists the tenant's memories f selects, most recently updated first.
func (s *Store) ConsoleMemories(ctx context.Context, tenant string, f MemoryFilter) ([]Memory, error) {
	conds := []string{"tenant = $1"}
	args := []any{tenant}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if !f.AnyUser {
		add("user_id = $%d", f.User)
	}
	if f.Type != "" {
		add("type = $%d", string(f.Type))
	}
	if f.Category != "" {
		add("category = $%d", string(f.Category))
	}
	if f.Status != "" {
		add("status = $%d", string(f.Status))
	}
	if f.Key != "" {
		add("key ILIKE $%d", likePattern(f.Key))
	}
	if f.Text != "" {
		add("content ILIKE $%d", likePattern(f.Text))
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 200
	}
	limit = min(limit, 1000)
	args = append(args, limit)
	sql := `SELECT ` + memoryColumns + ` FROM memories WHERE ` + strings.Join(conds, " AND ") +
		fmt.Sprintf(` ORDER BY updated_at DESC, id LIMIT $%d`, len(args))
	var out []Memory
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		out, err = tx.collectMemories(ctx, sql, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing memories: %w", err)
	}
	return out, nil
}

func (t *Tx) collectMemories(ctx context.Context, sql string, args ...any) ([]Memory, error) {
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Memory, error) { return scanMemory(r, t.tenant) })
}

// ConsoleMemoriesByID reads the tenant's memories with the given ids, in the order of
// ids; ids the tenant has no memory for are left out.
func (s *Store) ConsoleMemoriesByID(ctx context.Context, tenant string, ids []uuid.UUID) ([]Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var got []Memory
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		got, err = tx.collectMemories(ctx, `SELECT `+memoryColumns+` FROM memories WHERE tenant = $1 AND id = ANY($2)`,
			tenant, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading memories: %w", err)
	}
	byID := make(map[uuid.UUID]Memory, len(got))
	for _, m := range got {
		byID[m.ID] = m
	}
	out := make([]Memory, 0, len(got))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// ConsoleDistilledFrom lists the memories that name memory id as a source (lineage
// of kind memory), oldest first.
func (s *Store) ConsoleDistilledFrom(ctx context.Context, tenant string, id uuid.UUID) ([]Memory, error) {
	var out []Memory
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		out, err = tx.collectMemories(ctx, `SELECT `+memoryColumnsAs("m")+` FROM memories m
			WHERE m.tenant = $1 AND EXISTS (SELECT 1 FROM memory_lineage l WHERE l.tenant = $1
				AND l.memory_id = m.id AND l.source_kind = 'memory' AND l.source_id = $2)
			ORDER BY m.recorded_at, m.id`, tenant, id.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading memories distilled from %s: %w", id, err)
	}
	return out, nil
}

// ConsoleTurns reads the tenant's turns with the given ids, in the order of ids;
// unknown ids are left out.
func (s *Store) ConsoleTurns(ctx context.Context, tenant string, ids []string) ([]Turn, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	byID := map[string]Turn{}
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT `+turnColumns+` FROM turns WHERE tenant = $1 AND turn_id = ANY($2)`,
			tenant, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			tr, err := scanTurn(rows, tenant)
			if err != nil {
				return err
			}
			byID[tr.TurnID] = tr
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading turns: %w", err)
	}
	out := make([]Turn, 0, len(byID))
	for _, id := range ids {
		if tr, ok := byID[id]; ok {
			out = append(out, tr)
		}
	}
	return out, nil
}

// AuditRecord is one audit entry as read back.
type AuditRecord struct {
	ID          int64
	At          time.Time
	Action      string
	Actor       string
	Module      string
	Subject     string
	Version     int // 0 when the entry names none
	ContentHash []byte
	Details     map[string]any
}

// ConsoleAudit lists the audit entries of memory id, oldest first.
func (s *Store) ConsoleAudit(ctx context.Context, tenant string, id uuid.UUID) ([]AuditRecord, error) {
	var out []AuditRecord
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT id, at, action, actor, module, subject, coalesce(version, 0),
			content_hash, details FROM audit_log WHERE tenant = $1 AND memory_id = $2 ORDER BY at, id`, tenant, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditRecord, error) {
			var a AuditRecord
			err := r.Scan(&a.ID, &a.At, &a.Action, &a.Actor, &a.Module, &a.Subject, &a.Version, &a.ContentHash, &a.Details)
			return a, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the audit of %s: %w", id, err)
	}
	return out, nil
}

// TenantRun is one consolidation run as a tenant sees it: the run's state, and what
// it did for this tenant's owners only (other tenants' figures stay out).
type TenantRun struct {
	ID         int64
	RootID     int64
	StartedAt  time.Time
	FinishedAt *time.Time
	Status     string
	DryRun     bool
	User       string // the run's user filter, when it was limited to one of this tenant's users
	OwnersDone int    // this tenant's owners the run finished
	Counts     map[string]float64
}

// ConsoleRuns lists the most recent limit consolidation runs that covered the tenant
// (unfiltered, or filtered to it), newest first, with the tenant's counts summed over
// its owners.
func (s *Store) ConsoleRuns(ctx context.Context, tenant string, limit int) ([]TenantRun, error) {
	if err := CheckTenant(tenant); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	// Run records and progress are row-level secured (migration 0008): read in the
	// tenant's transaction.
	var out []TenantRun
	err := s.InTxWith(ctx, tenant, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT r.id, coalesce(r.root_id, r.id), r.started_at, r.finished_at, r.status,
		r.dry_run, CASE WHEN r.tenant_filter = $1 THEN r.user_filter ELSE '' END,
		coalesce((SELECT json_agg(p.counts) FROM consolidation_progress p WHERE p.run_id = r.id AND p.tenant = $1), '[]')
		FROM consolidation_runs r WHERE r.tenant_filter IN ('', $1) ORDER BY r.id DESC LIMIT $2`, tenant, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (TenantRun, error) {
			var x TenantRun
			var counts []byte
			if err := r.Scan(&x.ID, &x.RootID, &x.StartedAt, &x.FinishedAt, &x.Status, &x.DryRun, &x.User, &counts); err != nil {
				return x, err
			}
			var owners []map[string]any
			if err := json.Unmarshal(counts, &owners); err != nil {
				return x, fmt.Errorf("decoding the counts of run %d: %w", x.ID, err)
			}
			x.OwnersDone, x.Counts = len(owners), map[string]float64{}
			for _, o := range owners {
				for k, v := range o {
					if n, ok := v.(float64); ok {
						x.Counts[k] += n
					}
				}
			}
			return x, nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing consolidation runs: %w", err)
	}
	return out, nil
}
