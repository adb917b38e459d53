package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// Limits of the memories table (migrations/0001_schema_v1.sql), in characters.
const (
	maxMemoryContentChars = 8000
	maxMemoryKeyChars     = 200
	maxModelChars         = 200
	maxEmbeddingDims      = 16000
)

// CheckMemoryExport explains why an exported memory cannot be stored by ImportMemory
// (nil when it can): what the table constraints would refuse (and answer with a
// database error) and text PostgreSQL cannot hold. Fields are named as in an export
// line: "memory.content", "versions[2].actor", "embeddings[0].model".
func CheckMemoryExport(x MemoryExport) *FieldError {
	m := x.Memory
	if m.ID == uuid.Nil {
		return &FieldError{Code: CodeMissingField, Field: "memory.id", Message: "must not be empty"}
	}
	if fe := checkMemoryEnums(m); fe != nil {
		return fe
	}
	if fe := checkMemoryText(m); fe != nil {
		return fe
	}
	if fe := checkUnit("memory.importance", m.Importance); fe != nil {
		return fe
	}
	if fe := checkUnit("memory.confidence", m.Confidence); fe != nil {
		return fe
	}
	if m.ValidTo != nil && m.ValidTo.Before(m.ValidFrom) {
		return Invalid("memory.valid_to", "is before valid_from")
	}
	// The owner columns must match the scope (the table's CHECK).
	switch {
	case (m.Scope == ScopeUser || m.Scope == ScopeSession) && m.UserID == "":
		return &FieldError{Code: CodeMissingField, Field: "memory.user_id", Message: "is required for " + string(m.Scope) + " scope"}
	case m.Scope == ScopeSession && m.SessionID == "":
		return &FieldError{Code: CodeMissingField, Field: "memory.session_id", Message: "is required for session scope"}
	case m.Scope == ScopeAgent && m.AgentID == "":
		return &FieldError{Code: CodeMissingField, Field: "memory.agent_id", Message: "is required for agent scope"}
	}
	if fe := CheckMetadata("memory.metadata", m.Metadata, MaxMetadataBytes); fe != nil {
		return fe
	}
	for i, v := range x.Versions {
		if fe := checkVersionExport("versions["+strconv.Itoa(i)+"]", v); fe != nil {
			return fe
		}
	}
	for i, l := range x.Lineage {
		p := "lineage[" + strconv.Itoa(i) + "]"
		if l.Kind != LineageTurn && l.Kind != LineageMemory {
			return Invalid(p+".kind", "unknown kind %q: want turn or memory", truncateText(string(l.Kind), 32))
		}
		if l.SourceID == "" {
			return &FieldError{Code: CodeMissingField, Field: p + ".source_id", Message: "must not be empty"}
		}
		if fe := checkFields([]Field{{Name: p + ".source_id", Value: l.SourceID}, {Name: p + ".candidate_id", Value: l.CandidateID}}); fe != nil {
			return fe
		}
	}
	for i, e := range x.Embeddings {
		p := "embeddings[" + strconv.Itoa(i) + "]"
		if fe := CheckText(p+".model", e.Model, 0); fe != nil {
			return fe
		}
		if n := utf8.RuneCountInString(e.Model); n > maxModelChars {
			return &FieldError{Code: CodeTooLarge, Field: p + ".model", Message: fmt.Sprintf("is %d characters, the limit is %d", n, maxModelChars)}
		}
		if len(e.Vector) > maxEmbeddingDims {
			return &FieldError{Code: CodeTooLarge, Field: p + ".vector", Message: fmt.Sprintf("has %d dimensions, the limit is %d", len(e.Vector), maxEmbeddingDims)}
		}
	}
	return nil
}

func checkMemoryEnums(m Memory) *FieldError {
	switch {
	case !m.Scope.Valid():
		return unknownValue("memory.scope", "scope", m.Scope, Scopes())
	case !m.Type.Valid():
		return unknownValue("memory.type", "type", m.Type, Types())
	case !m.Category.Valid():
		return unknownValue("memory.category", "category", m.Category, Categories())
	case !m.Status.Valid():
		return unknownValue("memory.status", "status", m.Status, Statuses())
	case !m.Source.Valid():
		return unknownValue("memory.source", "source", m.Source, Sources())
	}
	return nil
}

func checkMemoryText(m Memory) *FieldError {
	if strings.TrimSpace(m.Content) == "" {
		return &FieldError{Code: CodeMissingField, Field: "memory.content", Message: "must not be empty"}
	}
	if fe := CheckText("memory.content", m.Content, 0); fe != nil {
		return fe
	}
	if n := utf8.RuneCountInString(m.Content); n > maxMemoryContentChars {
		return &FieldError{Code: CodeTooLarge, Field: "memory.content", Message: fmt.Sprintf("is %d characters, the limit is %d", n, maxMemoryContentChars)}
	}
	// Owner ids come from turns, where they passed CheckID; "" means none.
	for _, f := range []struct{ name, v string }{{"agent_id", m.AgentID}, {"session_id", m.SessionID}} {
		if f.v == "" {
			continue
		}
		if fe := CheckID("memory."+f.name, f.v, MaxIDLength); fe != nil {
			fe.Code = CodeInvalidField
			return fe
		}
	}
	if fe := checkKey("memory.key", m.Key); fe != nil {
		return fe
	}
	return checkFields([]Field{{Name: "memory.extractor", Value: m.Extractor},
		{Name: "memory.extractor_version", Value: m.ExtractorVersion}, {Name: "memory.model", Value: m.Model}})
}

// unknownValue is the error for v, not one of all (an enum field).
func unknownValue[T ~string](field, what string, v T, all []T) *FieldError {
	return Invalid(field, "unknown %s %q: want one of %v", what, truncateText(string(v), 32), all)
}

func checkVersionExport(p string, v Version) *FieldError {
	switch {
	case v.Version < 1:
		return Invalid(p+".version", "must be 1 or more")
	case !v.Change.Valid():
		return unknownValue(p+".change", "change", v.Change, Changes())
	case !v.Status.Valid():
		return unknownValue(p+".status", "status", v.Status, Statuses())
	case !v.Category.Valid():
		return unknownValue(p+".category", "category", v.Category, Categories())
	case strings.TrimSpace(v.Actor) == "":
		return &FieldError{Code: CodeMissingField, Field: p + ".actor", Message: "must not be empty"}
	}
	if fe := checkUnit(p+".importance", v.Importance); fe != nil {
		return fe
	}
	if fe := checkUnit(p+".confidence", v.Confidence); fe != nil {
		return fe
	}
	if v.ValidTo != nil && v.ValidTo.Before(v.ValidFrom) {
		return Invalid(p+".valid_to", "is before valid_from")
	}
	if fe := checkKey(p+".key", v.Key); fe != nil {
		return fe
	}
	return checkFields([]Field{{Name: p + ".content", Value: v.Content}, {Name: p + ".old_content", Value: v.OldContent},
		{Name: p + ".reason", Value: v.Reason}, {Name: p + ".actor", Value: v.Actor}, {Name: p + ".candidate_id", Value: v.CandidateID}})
}

// checkKey: a key is stored as NULL when empty, else 1 to 200 characters.
func checkKey(field, key string) *FieldError {
	if fe := CheckText(field, key, 0); fe != nil {
		return fe
	}
	if n := utf8.RuneCountInString(key); n > maxMemoryKeyChars {
		return &FieldError{Code: CodeTooLarge, Field: field, Message: fmt.Sprintf("is %d characters, the limit is %d", n, maxMemoryKeyChars)}
	}
	return nil
}

// checkUnit refuses a score outside [0,1] (NaN included), as the table's CHECK does.
func checkUnit(field string, v float64) *FieldError {
	if !(v >= 0 && v <= 1) {
		return Invalid(field, "%v is outside [0,1]", v)
	}
	return nil
}

// CheckTurnExport explains why an exported turn cannot be stored by ImportTurn (nil
// when it can): CheckTurn's rules, with fields named as in an export line
// ("turn.turn_id").
func CheckTurnExport(x TurnExport) *FieldError {
	return CheckTurn("turn", x.Turn)
}

// ImportMemory stores an exported memory as it is, under the transaction's tenant and
// its Memory.UserID: id, state, versions, lineage and embeddings (those without a
// model or a vector are left out) are kept. A memory whose id exists already is left
// alone and ImportMemory reports false; importing twice changes nothing. A memory
// CheckMemoryExport refuses is not written: its FieldError is returned. The caller
// writes the audit entry.
func (t *Tx) ImportMemory(ctx context.Context, x MemoryExport) (bool, error) {
	if fe := CheckMemoryExport(x); fe != nil {
		return false, fe
	}
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
// exists already is left alone and ImportTurn reports false. A turn CheckTurnExport
// refuses is not written: its FieldError is returned.
func (t *Tx) ImportTurn(ctx context.Context, x TurnExport) (bool, error) {
	if fe := CheckTurnExport(x); fe != nil {
		return false, fe
	}
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
