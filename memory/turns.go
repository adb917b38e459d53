package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pgvector/pgvector-go"
)

// ErrTurnConflict is a turn id that is already stored with different content. It
// matches ErrInvalid too: resending cannot help, so a worker dead-letters it.
var ErrTurnConflict = errors.New("turn id already stored with different content")

// InsertTurn stores a turn once: a second insert of the same tenant and turn id with
// the same content is a no-op and reports false, so redelivered messages change
// nothing. With different content it is ErrTurnConflict, and the stored turn stays:
// the first content accepted for an id is the turn (ingest refuses the second with
// 409; this catches what reached the stream past it, e.g. published straight onto NATS).
func (t *Tx) InsertTurn(ctx context.Context, turn Turn) (bool, error) {
	if !turn.Role.Valid() {
		return false, fmt.Errorf("%w: role %q", ErrInvalid, turn.Role)
	}
	var tool []byte
	if turn.Tool != nil {
		b, err := json.Marshal(turn.Tool)
		if err != nil {
			return false, fmt.Errorf("encoding the tool of turn %s: %w", turn.TurnID, err)
		}
		tool = b
	}
	meta := turn.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	received := turn.ReceivedAt
	if received.IsZero() {
		received = nowUTC()
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO turns (tenant, turn_id, user_id, agent_id, session_id, task_id, role,
		content, content_hash, search_text, tool, metadata, occurred_at, received_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT (tenant, turn_id) DO NOTHING`,
		t.tenant, turn.TurnID, turn.UserID, turn.AgentID, turn.SessionID, turn.TaskID, turn.Role, turn.Content,
		ContentHash(turn.Content), SearchText(turn.Content), tool, meta, turn.OccurredAt, received)
	if err != nil {
		return false, fmt.Errorf("storing turn %s: %w", turn.TurnID, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var stored []byte
	if err := t.tx.QueryRow(ctx, `SELECT content_hash FROM turns WHERE tenant = $1 AND turn_id = $2`,
		t.tenant, turn.TurnID).Scan(&stored); err != nil {
		return false, fmt.Errorf("reading the stored turn %s: %w", turn.TurnID, err)
	}
	if !bytes.Equal(stored, ContentHash(turn.Content)) {
		return false, fmt.Errorf("storing turn %s: %w (%w)", turn.TurnID, ErrTurnConflict, ErrInvalid)
	}
	return false, nil
}

// TurnContentHashes returns the content hash (ContentHash) of each of turnIDs that
// is stored; ids not stored are absent. Ingest compares them with resent turns.
func (t *Tx) TurnContentHashes(ctx context.Context, turnIDs []string) (map[string][]byte, error) {
	out := make(map[string][]byte)
	if len(turnIDs) == 0 {
		return out, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT turn_id, content_hash FROM turns WHERE tenant = $1 AND turn_id = ANY($2)`,
		t.tenant, turnIDs)
	if err != nil {
		return nil, fmt.Errorf("reading the content hashes of %d turns: %w", len(turnIDs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var h []byte
		if err := rows.Scan(&id, &h); err != nil {
			return nil, fmt.Errorf("reading the content hashes of %d turns: %w", len(turnIDs), err)
		}
		out[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the content hashes of %d turns: %w", len(turnIDs), err)
	}
	return out, nil
}

// TurnContentHashes is Tx.TurnContentHashes in its own transaction of tenant.
func (s *Store) TurnContentHashes(ctx context.Context, tenant string, turnIDs []string) (map[string][]byte, error) {
	var out map[string][]byte
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		out, err = tx.TurnContentHashes(ctx, turnIDs)
		return err
	})
	return out, err
}

const turnColumns = `turn_id, user_id, agent_id, session_id, task_id, role, coalesce(content, ''), tool, metadata,
	occurred_at, received_at, content IS NULL`

func scanTurn(row interface{ Scan(...any) error }, tenant string) (Turn, error) {
	var tr Turn
	var role string
	var tool []byte
	if err := row.Scan(&tr.TurnID, &tr.UserID, &tr.AgentID, &tr.SessionID, &tr.TaskID, &role, &tr.Content, &tool,
		&tr.Metadata, &tr.OccurredAt, &tr.ReceivedAt, &tr.Deleted); err != nil {
		return Turn{}, err
	}
	tr.Tenant, tr.Role = tenant, Role(role)
	if len(tool) > 0 {
		tr.Tool = &ToolCall{}
		if err := json.Unmarshal(tool, tr.Tool); err != nil {
			return Turn{}, fmt.Errorf("decoding the tool of turn %s: %w", tr.TurnID, err)
		}
	}
	return tr, nil
}

// SessionWindow returns up to limit turns of a session that occurred at or before
// `before` (all when zero), oldest first, excluding the ids in exclude.
func (t *Tx) SessionWindow(ctx context.Context, userID, sessionID string, before time.Time, limit int, exclude []string) ([]Turn, error) {
	if limit <= 0 {
		limit = 20
	}
	if exclude == nil {
		exclude = []string{} // NOT (x = ANY(NULL)) is NULL, which would match nothing
	}
	if before.IsZero() {
		before = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	rows, err := t.tx.Query(ctx, `SELECT * FROM (SELECT `+turnColumns+`, seq FROM turns
		WHERE tenant = $1 AND user_id = $2 AND session_id = $3 AND occurred_at <= $4 AND NOT (turn_id = ANY($5))
		ORDER BY occurred_at DESC, seq DESC LIMIT $6) w ORDER BY occurred_at, seq`,
		t.tenant, userID, sessionID, before, exclude, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the window of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var seq int64
		var tr Turn
		var role string
		var tool []byte
		if err := rows.Scan(&tr.TurnID, &tr.UserID, &tr.AgentID, &tr.SessionID, &tr.TaskID, &role, &tr.Content,
			&tool, &tr.Metadata, &tr.OccurredAt, &tr.ReceivedAt, &tr.Deleted, &seq); err != nil {
			return nil, fmt.Errorf("reading the window of session %s: %w", sessionID, err)
		}
		tr.Tenant, tr.Role = t.tenant, Role(role)
		if len(tool) > 0 {
			tr.Tool = &ToolCall{}
			if err := json.Unmarshal(tool, tr.Tool); err != nil {
				return nil, fmt.Errorf("decoding the tool of turn %s: %w", tr.TurnID, err)
			}
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}

// GetTurn reads one turn.
func (t *Tx) GetTurn(ctx context.Context, turnID string) (Turn, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+turnColumns+` FROM turns WHERE tenant = $1 AND turn_id = $2`, t.tenant, turnID)
	tr, err := scanTurn(row, t.tenant)
	if err != nil {
		return Turn{}, fmt.Errorf("reading turn %s: %w", turnID, notFound(err))
	}
	return tr, nil
}

// PutTurnEmbedding stores (or replaces) the vector of turn turnID under e.Model. A turn
// that is not stored, or whose content retention has deleted, gets no vector: nothing
// is written and no error is returned, so a late or repeated write is harmless.
func (t *Tx) PutTurnEmbedding(ctx context.Context, turnID, userID string, e Embedding) error {
	if e.Model == "" || len(e.Vector) == 0 {
		return fmt.Errorf("%w: an embedding needs a model and a vector", ErrInvalid)
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO turn_embeddings (tenant, turn_id, model, dims, user_id, embedding)
		SELECT $1::text, $2::text, $3::text, $4::int, $5::text, $6::vector FROM turns
		WHERE tenant = $1 AND turn_id = $2 AND content IS NOT NULL
		ON CONFLICT (tenant, turn_id, model) DO UPDATE SET dims = EXCLUDED.dims,
			embedding = EXCLUDED.embedding, user_id = EXCLUDED.user_id, created_at = now()`,
		t.tenant, turnID, e.Model, len(e.Vector), userID, pgvector.NewVector(e.Vector))
	if err != nil {
		return fmt.Errorf("storing the %s embedding of turn %s: %w", e.Model, turnID, err)
	}
	return nil
}
