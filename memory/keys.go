package memory

import (
	"context"
	"fmt"
	"strings"
)

// ByKeyPrefix returns up to limit of the owner's active and pending memories whose key
// starts with prefix ("taste.", "plan.flight"), newest first: the slots a candidate may
// rule out although their keys differ from its own (a diet and the tastes it excludes,
// a plan named by its kind and the same plan named in full).
func (t *Tx) ByKeyPrefix(ctx context.Context, userID, prefix string, limit int) ([]Memory, error) {
	if prefix == "" || limit <= 0 {
		return nil, nil
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE tenant = $1 AND user_id = $2 AND key LIKE $3 || '%' AND status = ANY($4)
		ORDER BY updated_at DESC LIMIT $5`,
		t.tenant, userID, esc, []string{string(StatusActive), string(StatusPending)}, limit)
	if err != nil {
		return nil, fmt.Errorf("reading memories with key prefix %s: %w", prefix, err)
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows, t.tenant)
		if err != nil {
			return nil, fmt.Errorf("reading memories with key prefix %s: %w", prefix, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
