package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"
)

// MemoryExport is a stored memory with everything that belongs to it: its history,
// its sources and its vectors, so that an import needs no re-embedding.
type MemoryExport struct {
	Memory     Memory
	Versions   []Version   // oldest first
	Lineage    []Lineage   // by added_at, source kind and id
	Embeddings []Embedding // by model
}

// TurnExport is a stored turn with what the Turn type leaves out: the content hash
// (all a turn keeps once retention deleted its content) and when that happened.
type TurnExport struct {
	Turn             Turn
	ContentHash      []byte
	ContentDeletedAt *time.Time
	// Forgotten: a memory that came from the turn was deleted on request (turns.forgotten).
	Forgotten bool
}

// ExportMemories reads up to limit of the user's memories whose id is greater than
// after (uuid.Nil: from the first), in id order, each with its versions, lineage and
// embeddings. An export pages through a user's memories by passing the last id read.
func (t *Tx) ExportMemories(ctx context.Context, userID string, after uuid.UUID, limit int) ([]MemoryExport, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE tenant = $1 AND user_id = $2 AND id > $3 ORDER BY id LIMIT $4`, t.tenant, userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading memories: %w", err)
	}
	var out []MemoryExport
	for rows.Next() {
		m, err := scanMemory(rows, t.tenant)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading memories: %w", err)
		}
		out = append(out, MemoryExport{Memory: m})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading memories: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	byID := make(map[uuid.UUID]*MemoryExport, len(out))
	ids := make([]uuid.UUID, len(out))
	for i := range out {
		ids[i] = out[i].Memory.ID
		byID[ids[i]] = &out[i]
	}
	if err := t.exportVersions(ctx, ids, byID); err != nil {
		return nil, err
	}
	if err := t.exportLineage(ctx, ids, byID); err != nil {
		return nil, err
	}
	if err := t.exportEmbeddings(ctx, ids, byID); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tx) exportVersions(ctx context.Context, ids []uuid.UUID, byID map[uuid.UUID]*MemoryExport) error {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, version, change, content, coalesce(old_content, ''), status,
		category, coalesce(key, ''), importance, confidence, valid_from, valid_to, recorded_at, reason, actor,
		coalesce(candidate_id, '') FROM memory_versions WHERE tenant = $1 AND memory_id = ANY($2) ORDER BY memory_id, version`,
		t.tenant, ids)
	if err != nil {
		return fmt.Errorf("reading versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v Version
		var change, status, cat string
		if err := rows.Scan(&v.MemoryID, &v.Version, &change, &v.Content, &v.OldContent, &status, &cat, &v.Key,
			&v.Importance, &v.Confidence, &v.ValidFrom, &v.ValidTo, &v.RecordedAt, &v.Reason, &v.Actor, &v.CandidateID); err != nil {
			return fmt.Errorf("reading versions: %w", err)
		}
		v.Change, v.Status, v.Category = Change(change), Status(status), Category(cat)
		byID[v.MemoryID].Versions = append(byID[v.MemoryID].Versions, v)
	}
	return rows.Err()
}

func (t *Tx) exportLineage(ctx context.Context, ids []uuid.UUID, byID map[uuid.UUID]*MemoryExport) error {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, source_kind, source_id, coalesce(candidate_id, ''), added_at
		FROM memory_lineage WHERE tenant = $1 AND memory_id = ANY($2) ORDER BY memory_id, added_at, source_kind, source_id`, t.tenant, ids)
	if err != nil {
		return fmt.Errorf("reading lineage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var x Lineage
		var kind string
		if err := rows.Scan(&x.MemoryID, &kind, &x.SourceID, &x.CandidateID, &x.AddedAt); err != nil {
			return fmt.Errorf("reading lineage: %w", err)
		}
		x.Kind = LineageKind(kind)
		byID[x.MemoryID].Lineage = append(byID[x.MemoryID].Lineage, x)
	}
	return rows.Err()
}

func (t *Tx) exportEmbeddings(ctx context.Context, ids []uuid.UUID, byID map[uuid.UUID]*MemoryExport) error {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, model, embedding FROM memory_embeddings
		WHERE tenant = $1 AND memory_id = ANY($2) ORDER BY memory_id, model`, t.tenant, ids)
	if err != nil {
		return fmt.Errorf("reading embeddings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var model string
		var v pgvector.Vector
		if err := rows.Scan(&id, &model, &v); err != nil {
			return fmt.Errorf("reading embeddings: %w", err)
		}
		byID[id].Embeddings = append(byID[id].Embeddings, Embedding{Model: model, Vector: v.Slice()})
	}
	return rows.Err()
}

// ExportTurns reads up to limit of the user's turns whose id sorts after after ("":
// from the first), in turn id order, with their content hashes; a turn whose content
// retention deleted comes with Deleted set and no content.
func (t *Tx) ExportTurns(ctx context.Context, userID, after string, limit int) ([]TurnExport, error) {
	rows, err := t.tx.Query(ctx, `SELECT turn_id, user_id, agent_id, session_id, task_id, role, coalesce(content, ''),
			tool, metadata, occurred_at, received_at, content IS NULL, content_hash, content_deleted_at, forgotten
		FROM turns WHERE tenant = $1 AND user_id = $2 AND turn_id > $3 ORDER BY turn_id LIMIT $4`,
		t.tenant, userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading turns: %w", err)
	}
	defer rows.Close()
	var out []TurnExport
	for rows.Next() {
		var x TurnExport
		tr := &x.Turn
		var role string
		var tool []byte
		if err := rows.Scan(&tr.TurnID, &tr.UserID, &tr.AgentID, &tr.SessionID, &tr.TaskID, &role, &tr.Content, &tool,
			&tr.Metadata, &tr.OccurredAt, &tr.ReceivedAt, &tr.Deleted, &x.ContentHash, &x.ContentDeletedAt, &x.Forgotten); err != nil {
			return nil, fmt.Errorf("reading turns: %w", err)
		}
		tr.Tenant, tr.Role = t.tenant, Role(role)
		if len(tool) > 0 {
			tr.Tool = &ToolCall{}
			if err := json.Unmarshal(tool, tr.Tool); err != nil {
				return nil, fmt.Errorf("decoding the tool of turn %s: %w", tr.TurnID, err)
			}
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading turns: %w", err)
	}
	return out, nil
}

// ImportMemory stores an exported memory as it is, under the transaction's tenant and
// its Memory.UserID: id, state, versions, lineage and embeddings (those without a
// model or a vector are left out) are kept. A memory whose id exists already is left
// alone and ImportMemory reports false; importing twice changes nothing. The caller
// writes the audit entry.
func (t *Tx) ImportMemory(ctx context.Context, x MemoryExport) (bool, error) {
	m := x.Memory
	meta := m.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO memories (tenant, id, user_id, agent_id, session_id, scope, type, category, key,
		content, search_text, importance, confidence, status, version, valid_from, valid_to, recorded_at, updated_at,
		expire_at, access_count, last_access_at, confirm_count, last_confirmed_at, consolidated_at, source, extractor,
		extractor_version, model, metadata)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30)
		ON CONFLICT DO NOTHING`,
		t.tenant, m.ID, m.UserID, m.AgentID, m.SessionID, m.Scope, m.Type, m.Category, nullIfEmpty(m.Key), m.Content,
		SearchText(m.Content), m.Importance, m.Confidence, m.Status, max(m.Version, 1), m.ValidFrom, m.ValidTo,
		m.RecordedAt, m.UpdatedAt, m.ExpireAt, m.AccessCount, m.LastAccessAt, max(m.ConfirmCount, 1), m.LastConfirmedAt,
		m.ConsolidatedAt, m.Source, m.Extractor, m.ExtractorVersion, m.Model, meta)
	if err != nil {
		return false, fmt.Errorf("importing memory %s: %w", m.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	for _, v := range x.Versions {
		if _, err := t.tx.Exec(ctx, `INSERT INTO memory_versions (tenant, memory_id, version, change, content, old_content,
			status, category, key, importance, confidence, valid_from, valid_to, recorded_at, reason, actor, candidate_id)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17) ON CONFLICT DO NOTHING`,
			t.tenant, m.ID, v.Version, v.Change, v.Content, nullIfEmpty(v.OldContent), v.Status, v.Category, nullIfEmpty(v.Key),
			v.Importance, v.Confidence, v.ValidFrom, v.ValidTo, v.RecordedAt, v.Reason, v.Actor, nullIfEmpty(v.CandidateID)); err != nil {
			return false, fmt.Errorf("importing version %d of memory %s: %w", v.Version, m.ID, err)
		}
	}
	for _, l := range x.Lineage {
		if _, err := t.tx.Exec(ctx, `INSERT INTO memory_lineage (tenant, memory_id, source_kind, source_id, candidate_id, added_at)
			VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
			t.tenant, m.ID, l.Kind, l.SourceID, nullIfEmpty(l.CandidateID), l.AddedAt); err != nil {
			return false, fmt.Errorf("importing lineage of memory %s: %w", m.ID, err)
		}
	}
	for _, e := range x.Embeddings {
		if e.Model == "" || len(e.Vector) == 0 {
			continue
		}
		if _, err := t.tx.Exec(ctx, `INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding)
			VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
			t.tenant, m.ID, e.Model, len(e.Vector), m.UserID, pgvector.NewVector(e.Vector)); err != nil {
			return false, fmt.Errorf("importing the %s embedding of memory %s: %w", e.Model, m.ID, err)
		}
	}
	return true, nil
}

// ImportTurn stores an exported turn as it is, under the transaction's tenant and its
// Turn.UserID, keeping its id, times and content hash (computed from the content when
// the export has none); a Deleted turn is stored without content. A turn whose id
// exists already is left alone and ImportTurn reports false.
func (t *Tx) ImportTurn(ctx context.Context, x TurnExport) (bool, error) {
	tr := x.Turn
	var content *string
	if !tr.Deleted {
		content = &tr.Content
	}
	hash := x.ContentHash
	if len(hash) == 0 {
		hash = ContentHash(tr.Content)
	}
	var tool []byte
	if tr.Tool != nil {
		b, err := json.Marshal(tr.Tool)
		if err != nil {
			return false, fmt.Errorf("encoding the tool of turn %s: %w", tr.TurnID, err)
		}
		tool = b
	}
	meta := tr.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	search := ""
	if content != nil {
		search = SearchText(*content)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO turns (tenant, turn_id, user_id, agent_id, session_id, task_id, role, content,
		content_hash, search_text, tool, metadata, occurred_at, received_at, content_deleted_at, forgotten)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) ON CONFLICT DO NOTHING`,
		t.tenant, tr.TurnID, tr.UserID, tr.AgentID, tr.SessionID, tr.TaskID, tr.Role, content, hash, search, tool, meta,
		tr.OccurredAt, tr.ReceivedAt, x.ContentDeletedAt, x.Forgotten)
	if err != nil {
		return false, fmt.Errorf("importing turn %s: %w", tr.TurnID, err)
	}
	return tag.RowsAffected() == 1, nil
}
