package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// Embedding is one vector of a memory under a named model.
type Embedding struct {
	Model  string
	Vector []float32
}

// NewMemory is everything needed to create a memory with its first version.
type NewMemory struct {
	ID        uuid.UUID // zero: a new UUIDv7
	UserID    string
	AgentID   string
	SessionID string
	Scope     Scope

	Type       Type
	Category   Category
	Key        string
	Content    string
	Importance float64
	Confidence float64
	Status     Status // zero: active
	ValidFrom  time.Time
	ExpireAt   *time.Time

	Source           Source
	Extractor        string
	ExtractorVersion string
	Model            string
	Metadata         map[string]any

	SourceTurnIDs   []string
	SourceMemoryIDs []string
	Embeddings      []Embedding

	CandidateID string
	Actor       string // who made the change, e.g. "resolver" or "api:<token name>"
	Module      string // which part of engram, e.g. "consolidator"
	Reason      string
}

func (n *NewMemory) validate() error {
	var problems []string
	if !n.Scope.Valid() {
		problems = append(problems, fmt.Sprintf("scope %q is not one of %v", n.Scope, Scopes()))
	}
	if !n.Type.Valid() {
		problems = append(problems, fmt.Sprintf("type %q is not one of %v", n.Type, Types()))
	}
	if !n.Category.Valid() {
		problems = append(problems, fmt.Sprintf("category %q is not one of %v", n.Category, Categories()))
	}
	if !n.Status.Valid() {
		problems = append(problems, fmt.Sprintf("status %q is not one of %v", n.Status, Statuses()))
	}
	if !n.Source.Valid() {
		problems = append(problems, fmt.Sprintf("source %q is not one of %v", n.Source, Sources()))
	}
	if strings.TrimSpace(n.Content) == "" {
		problems = append(problems, "content is empty")
	}
	if n.Importance < 0 || n.Importance > 1 {
		problems = append(problems, fmt.Sprintf("importance %v is outside [0,1]", n.Importance))
	}
	if n.Confidence < 0 || n.Confidence > 1 {
		problems = append(problems, fmt.Sprintf("confidence %v is outside [0,1]", n.Confidence))
	}
	if (n.Scope == ScopeUser || n.Scope == ScopeSession) && n.UserID == "" {
		problems = append(problems, "user_id is required for user and session scope")
	}
	if n.Scope == ScopeSession && n.SessionID == "" {
		problems = append(problems, "session_id is required for session scope")
	}
	if n.Scope == ScopeAgent && n.AgentID == "" {
		problems = append(problems, "agent_id is required for agent scope")
	}
	if n.Actor == "" {
		problems = append(problems, "actor is empty")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

// memoryColumnList is the column list scanMemory reads, in order.
var memoryColumnList = []string{"id", "user_id", "agent_id", "session_id", "scope", "type", "category",
	"coalesce(%skey, '')", "content", "importance", "confidence", "status", "version", "valid_from", "valid_to",
	"recorded_at", "updated_at", "expire_at", "access_count", "last_access_at", "confirm_count",
	"last_confirmed_at", "consolidated_at", "source", "extractor", "extractor_version", "model", "metadata"}

// memoryColumnsAs lists the columns scanMemory reads, each prefixed by alias + "."
// (no prefix when alias is empty), for packages that write their own queries.
func memoryColumnsAs(alias string) string {
	prefix := ""
	if alias != "" {
		prefix = alias + "."
	}
	cols := make([]string, len(memoryColumnList))
	for i, c := range memoryColumnList {
		if strings.Contains(c, "%s") {
			cols[i] = fmt.Sprintf(c, prefix)
		} else {
			cols[i] = prefix + c
		}
	}
	return strings.Join(cols, ", ")
}

var memoryColumns = memoryColumnsAs("")

// scanMemory reads a row selected with memoryColumnsAs (plus extra destinations after them).
func scanMemory(row pgx.Row, tenant string, extra ...any) (Memory, error) {
	var m Memory
	var scope, typ, cat, status, source string
	dest := []any{&m.ID, &m.UserID, &m.AgentID, &m.SessionID, &scope, &typ, &cat, &m.Key, &m.Content,
		&m.Importance, &m.Confidence, &status, &m.Version, &m.ValidFrom, &m.ValidTo, &m.RecordedAt,
		&m.UpdatedAt, &m.ExpireAt, &m.AccessCount, &m.LastAccessAt, &m.ConfirmCount, &m.LastConfirmedAt,
		&m.ConsolidatedAt, &source, &m.Extractor, &m.ExtractorVersion, &m.Model, &m.Metadata}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return Memory{}, err
	}
	m.Tenant = tenant
	m.Scope, m.Type, m.Category, m.Status, m.Source = Scope(scope), Type(typ), Category(cat), Status(status), Source(source)
	return m, nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CreateMemory inserts a memory with version 1, its lineage, embeddings and an audit
// entry, all in the caller's transaction.
func (t *Tx) CreateMemory(ctx context.Context, n NewMemory) (Memory, error) {
	if n.Status == "" {
		n.Status = StatusActive
	}
	if err := n.validate(); err != nil {
		return Memory{}, err
	}
	if n.ID == uuid.Nil {
		id, err := uuid.NewV7()
		if err != nil {
			return Memory{}, fmt.Errorf("generating a memory id: %w", err)
		}
		n.ID = id
	}
	now := nowUTC()
	if n.ValidFrom.IsZero() {
		n.ValidFrom = now
	}
	if n.Metadata == nil {
		n.Metadata = map[string]any{}
	}
	change := ChangeAdd
	if n.Status == StatusPending {
		change = ChangePending
	}
	// Parameters from $10: changeSQL holds $1-$9.
	m, err := t.writeChangeRow(ctx, `INSERT INTO memories (tenant, id, user_id, agent_id, session_id, scope, type,
		category, key, content, search_text, importance, confidence, status, version, valid_from, expire_at,
		recorded_at, updated_at, last_confirmed_at, source, extractor, extractor_version, model, metadata)
		VALUES ($1,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,1,$23,$24,$25,$25,$25,$26,$27,$28,$29,$30)
		RETURNING *`,
		[]any{n.ID, n.UserID, n.AgentID, n.SessionID, n.Scope, n.Type, n.Category, nullIfEmpty(n.Key),
			n.Content, SearchText(n.Content), n.Importance, n.Confidence, n.Status, n.ValidFrom, n.ExpireAt, now,
			n.Source, n.Extractor, n.ExtractorVersion, n.Model, n.Metadata},
		changeRecord{Change: change, Action: "create", Actor: n.Actor, Module: n.Module, Reason: n.Reason,
			CandidateID: n.CandidateID, RecordedAt: &now,
			Details: `jsonb_build_object('candidate_id', $7::text, 'status', status)`})
	if err != nil {
		return Memory{}, fmt.Errorf("inserting memory: %w", err)
	}
	if err := t.AddLineage(ctx, m.ID, LineageTurn, n.SourceTurnIDs, n.CandidateID); err != nil {
		return Memory{}, err
	}
	if err := t.AddLineage(ctx, m.ID, LineageMemory, n.SourceMemoryIDs, n.CandidateID); err != nil {
		return Memory{}, err
	}
	for _, e := range n.Embeddings {
		if err := t.PutEmbedding(ctx, m.ID, m.UserID, e); err != nil {
			return Memory{}, err
		}
	}
	return m, nil
}

func moduleOr(m string) string {
	if m == "" {
		return "memory"
	}
	return m
}

// changeRecord is what the version row and the audit row of a change say besides the
// memory's new state, which they take from the changed row itself.
type changeRecord struct {
	Change      Change
	Action      string // audit action; empty: the change
	Actor       string
	Module      string // empty: "memory"
	Reason      string
	CandidateID string     // on the version row (unique per tenant: one memory only)
	OldContent  string     // what the content was, when the change replaced it
	RecordedAt  *time.Time // the version's recorded_at; nil: now()
	// Details is the audit entry's details, a jsonb SQL expression over the changed
	// row's columns and the statement's parameters.
	Details string
}

// changeSQL wraps rowSQL, an INSERT or UPDATE of memories that returns the changed
// rows (RETURNING *), so that the same statement writes a version row and an audit
// row (content hash, never content) for each of them: every change to a memory, of
// one row or of a set, is recorded by this one statement. rowSQL's tenant is $1 and
// its own parameters start at $10; final selects what the statement returns from the
// changed rows c.
func changeSQL(rowSQL, details, final string) string {
	return `WITH c AS (` + rowSQL + `
		), v AS (
			INSERT INTO memory_versions (tenant, memory_id, version, change, content, old_content, status, category,
				key, importance, confidence, valid_from, valid_to, recorded_at, reason, actor, candidate_id)
			SELECT tenant, id, version, $2::text, content, nullif($8::text, ''), status, category, key, importance,
				confidence, valid_from, valid_to, coalesce($9::timestamptz, now()), $6::text, $4::text,
				nullif($7::text, '') FROM c
		), a AS (
			INSERT INTO audit_log (tenant, action, actor, module, memory_id, subject, version, content_hash, details)
			SELECT tenant, $3::text, $4::text, $5::text, id, user_id, version, sha256(convert_to(content, 'UTF8')),
				` + details + ` FROM c
		)
		SELECT ` + final + ` FROM c`
}

func (t *Tx) changeArgs(r changeRecord, args []any) []any {
	action := r.Action
	if action == "" {
		action = string(r.Change)
	}
	return append([]any{t.tenant, string(r.Change), action, r.Actor, moduleOr(r.Module), r.Reason, r.CandidateID,
		r.OldContent, r.RecordedAt}, args...)
}

// writeChanges applies a set-based change (see changeSQL) and returns how many
// memories it changed.
func (t *Tx) writeChanges(ctx context.Context, rowSQL string, args []any, r changeRecord) (int, error) {
	var n int
	if err := t.tx.QueryRow(ctx, changeSQL(rowSQL, r.Details, "count(*)"), t.changeArgs(r, args)...).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// writeChangeRow applies a change to one memory (see changeSQL) and returns its new
// state; pgx.ErrNoRows when rowSQL changed nothing.
func (t *Tx) writeChangeRow(ctx context.Context, rowSQL string, args []any, r changeRecord) (Memory, error) {
	row := t.tx.QueryRow(ctx, changeSQL(rowSQL, r.Details, memoryColumns), t.changeArgs(r, args)...)
	return scanMemory(row, t.tenant)
}

// Update describes a change to an existing memory. Nil fields keep their value.
type Update struct {
	Change     Change
	Content    *string
	Status     *Status
	Category   *Category
	Key        *string
	Importance *float64
	Confidence *float64
	// ValidFrom is when the new content became true in the world; the previous
	// version's valid_to is set to it. Zero means now.
	ValidFrom *time.Time
	ExpireAt  *time.Time
	// ClearExpire removes expire_at.
	ClearExpire bool

	Embeddings      []Embedding
	SourceTurnIDs   []string
	SourceMemoryIDs []string

	// ExpectVersion, when non-zero, makes the change fail unless the memory is at
	// that version (optimistic concurrency for API edits).
	ExpectVersion int

	CandidateID string
	Actor       string
	Module      string
	Reason      string
}

// ErrVersionMismatch is returned when Update.ExpectVersion does not match.
var ErrVersionMismatch = errors.New("memory: version mismatch")

// contentChanges are the changes that replace what a memory says, closing the
// previous version's validity interval.
func contentChange(c Change) bool {
	switch c {
	case ChangeUpdate, ChangeSupersede, ChangeCorrect, ChangeRollback, ChangeConsolidate:
		return true
	}
	return false
}

// Apply writes a new version of memory id: the memory row takes the new state, a
// version row records it (with the old content), and lineage, embeddings and audit
// follow, in the caller's transaction.
func (t *Tx) Apply(ctx context.Context, id uuid.UUID, u Update) (Memory, error) {
	if !u.Change.Valid() || u.Change == ChangeConfirm {
		return Memory{}, fmt.Errorf("%w: change %q cannot be applied as a version", ErrInvalid, u.Change)
	}
	if u.Actor == "" {
		return Memory{}, fmt.Errorf("%w: actor is empty", ErrInvalid)
	}
	cur, err := t.lockMemory(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	if u.ExpectVersion != 0 && u.ExpectVersion != cur.Version {
		return Memory{}, fmt.Errorf("%w: memory %s is at version %d, not %d", ErrVersionMismatch, id, cur.Version, u.ExpectVersion)
	}
	next := cur
	now := nowUTC()
	next.Version = cur.Version + 1
	next.UpdatedAt = now
	if u.Content != nil {
		if strings.TrimSpace(*u.Content) == "" {
			return Memory{}, fmt.Errorf("%w: content is empty", ErrInvalid)
		}
		next.Content = *u.Content
	}
	if u.Status != nil {
		if !u.Status.Valid() {
			return Memory{}, fmt.Errorf("%w: status %q", ErrInvalid, *u.Status)
		}
		next.Status = *u.Status
	}
	if u.Category != nil {
		if !u.Category.Valid() {
			return Memory{}, fmt.Errorf("%w: category %q", ErrInvalid, *u.Category)
		}
		next.Category = *u.Category
	}
	if u.Key != nil {
		next.Key = *u.Key
	}
	if u.Importance != nil {
		next.Importance = clamp01(*u.Importance)
	}
	if u.Confidence != nil {
		next.Confidence = clamp01(*u.Confidence)
	}
	if u.ExpireAt != nil {
		next.ExpireAt = u.ExpireAt
	}
	if u.ClearExpire {
		next.ExpireAt = nil
	}
	if contentChange(u.Change) {
		vf := now
		if u.ValidFrom != nil && !u.ValidFrom.IsZero() {
			vf = u.ValidFrom.UTC()
		}
		if vf.Before(cur.ValidFrom) {
			// History cannot run backwards inside one memory: a late-arriving change
			// takes effect no earlier than the version it replaces.
			vf = cur.ValidFrom
		}
		next.ValidFrom = vf
		next.ValidTo = nil
		oldStatus := cur.Status
		if u.Change == ChangeSupersede {
			oldStatus = StatusSuperseded
		}
		if err := t.later(ctx, fmt.Sprintf("closing version %d of memory %s", cur.Version, id),
			`UPDATE memory_versions SET valid_to = $3, status = $4
			WHERE tenant = $1 AND memory_id = $2 AND version = $5`,
			t.tenant, id, vf, oldStatus, cur.Version); err != nil {
			return Memory{}, err
		}
	}
	switch u.Change {
	case ChangeDeprecate, ChangeExpire, ChangeRebuild:
		if next.ValidTo == nil {
			next.ValidTo = &now
		}
	case ChangeRestore, ChangePromote:
		next.ValidTo = nil
	}
	if next.ValidTo != nil && next.ValidTo.Before(next.ValidFrom) {
		vt := next.ValidFrom
		next.ValidTo = &vt
	}
	oldContent := ""
	if next.Content != cur.Content {
		oldContent = cur.Content
	}
	_, err = t.writeChangeRow(ctx, `UPDATE memories SET content = $11, search_text = $12, status = $13, category = $14,
		key = $15, importance = $16, confidence = $17, valid_from = $18, valid_to = $19, expire_at = $20,
		version = $21, updated_at = $22 WHERE tenant = $1 AND id = $10 RETURNING *`,
		[]any{id, next.Content, SearchText(next.Content), next.Status, next.Category, nullIfEmpty(next.Key),
			next.Importance, next.Confidence, next.ValidFrom, next.ValidTo, next.ExpireAt, next.Version, now},
		changeRecord{Change: u.Change, Actor: u.Actor, Module: u.Module, Reason: u.Reason, CandidateID: u.CandidateID,
			OldContent: oldContent, RecordedAt: &now,
			Details: `jsonb_build_object('candidate_id', $7::text, 'status', status, 'reason', $6::text)`})
	if err != nil {
		return Memory{}, fmt.Errorf("updating memory %s: %w", id, err)
	}
	if err := t.AddLineage(ctx, id, LineageTurn, u.SourceTurnIDs, u.CandidateID); err != nil {
		return Memory{}, err
	}
	if err := t.AddLineage(ctx, id, LineageMemory, u.SourceMemoryIDs, u.CandidateID); err != nil {
		return Memory{}, err
	}
	for _, e := range u.Embeddings {
		if err := t.PutEmbedding(ctx, id, next.UserID, e); err != nil {
			return Memory{}, err
		}
	}
	return next, nil
}

func clamp01(v float64) float64 {
	switch {
	case v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}

// Confirm records that a candidate restated memory id: confidence rises to the given
// value, the confirmation count and time move, and lineage gains the new turns. No
// content changes, so no version is written.
func (t *Tx) Confirm(ctx context.Context, id uuid.UUID, confidence float64, turnIDs []string, candidateID, actor string) (Memory, error) {
	row := t.tx.QueryRow(ctx, confirmSQL(memoryColumns), t.confirmArgs(id, confidence, candidateID, actor)...)
	m, err := scanMemory(row, t.tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return Memory{}, fmt.Errorf("confirming memory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("confirming memory %s: %w", id, err)
	}
	if err := t.AddLineage(ctx, id, LineageTurn, turnIDs, candidateID); err != nil {
		return Memory{}, err
	}
	return m, nil
}

// ConfirmLater is Confirm for a caller that does not need the memory back: in a
// pipelined transaction (InOwnerTx) it goes with the next statement that needs an
// answer, so it costs no round trip of its own. The caller must have read the memory
// in the transaction under the owner's lock: a memory that vanished since changes
// nothing here, where Confirm would say ErrNotFound.
func (t *Tx) ConfirmLater(ctx context.Context, id uuid.UUID, confidence float64, turnIDs []string, candidateID, actor string) error {
	if err := t.later(ctx, "confirming memory "+id.String(), confirmSQL("1"),
		t.confirmArgs(id, confidence, candidateID, actor)...); err != nil {
		return err
	}
	return t.AddLineage(ctx, id, LineageTurn, turnIDs, candidateID)
}

// confirmSQL raises a memory's confidence and counts the confirmation, and writes the
// audit row, in one statement returning final of the changed row.
func confirmSQL(final string) string {
	// updated_at stays: it is indexed, and leaving every indexed column alone lets
	// PostgreSQL update the row in place (HOT) — confirmations are the commonest write.
	return `WITH c AS (UPDATE memories SET confidence = greatest(confidence, $3::real),
		confirm_count = confirm_count + 1, last_confirmed_at = now()
		WHERE tenant = $1 AND id = $2 RETURNING *
	), a AS (
		INSERT INTO audit_log (tenant, action, actor, module, memory_id, subject, version, content_hash, details)
		SELECT tenant, 'confirm', $4::text, 'resolver', id, user_id, version, sha256(convert_to(content, 'UTF8')),
			jsonb_build_object('candidate_id', $5::text, 'confidence', confidence::float8) FROM c
	)
	SELECT ` + final + ` FROM c`
}

func (t *Tx) confirmArgs(id uuid.UUID, confidence float64, candidateID, actor string) []any {
	if actor == "" {
		actor = "engram"
	}
	return []any{t.tenant, id, clamp01(confidence), actor, candidateID}
}

func (t *Tx) lockMemory(ctx context.Context, id uuid.UUID) (Memory, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+memoryColumns+` FROM memories WHERE tenant = $1 AND id = $2 FOR UPDATE`, t.tenant, id)
	m, err := scanMemory(row, t.tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return Memory{}, fmt.Errorf("memory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("reading memory %s: %w", id, err)
	}
	return m, nil
}

// AddLineage links memory id to source turns or memories; existing links are kept.
func (t *Tx) AddLineage(ctx context.Context, id uuid.UUID, kind LineageKind, sourceIDs []string, candidateID string) error {
	if len(sourceIDs) == 0 {
		return nil
	}
	return t.later(ctx, fmt.Sprintf("adding %s lineage to memory %s", kind, id),
		`INSERT INTO memory_lineage (tenant, memory_id, source_kind, source_id, candidate_id)
		SELECT $1, $2, $3, s, $5 FROM unnest($4::text[]) AS s
		ON CONFLICT DO NOTHING`, t.tenant, id, kind, sourceIDs, nullIfEmpty(candidateID))
}

// PutEmbedding stores (or replaces) the vector of memory id under e.Model.
func (t *Tx) PutEmbedding(ctx context.Context, id uuid.UUID, userID string, e Embedding) error {
	if e.Model == "" || len(e.Vector) == 0 {
		return fmt.Errorf("%w: an embedding needs a model and a vector", ErrInvalid)
	}
	return t.later(ctx, fmt.Sprintf("storing the %s embedding of memory %s", e.Model, id),
		`INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (tenant, memory_id, model) DO UPDATE SET dims = EXCLUDED.dims,
			embedding = EXCLUDED.embedding, user_id = EXCLUDED.user_id, created_at = now()`,
		t.tenant, id, e.Model, len(e.Vector), userID, pgvector.NewVector(e.Vector))
}

// AuditEntry is one line of the audit log: never the content, only its hash.
type AuditEntry struct {
	Action      string
	Actor       string
	Module      string
	MemoryID    uuid.UUID
	Subject     string
	Version     int
	ContentHash []byte
	Details     map[string]any
}

// Audit appends an entry to the audit log.
func (t *Tx) Audit(ctx context.Context, a AuditEntry) error {
	var mid *uuid.UUID
	if a.MemoryID != uuid.Nil {
		mid = &a.MemoryID
	}
	var ver *int
	if a.Version > 0 {
		ver = &a.Version
	}
	if a.Details == nil {
		a.Details = map[string]any{}
	}
	if a.Actor == "" {
		a.Actor = "engram"
	}
	return t.later(ctx, fmt.Sprintf("writing the audit log (%s)", a.Action),
		`INSERT INTO audit_log (tenant, action, actor, module, memory_id, subject, version,
		content_hash, details) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		t.tenant, a.Action, a.Actor, moduleOr(a.Module), mid, a.Subject, ver, a.ContentHash, a.Details)
}

// RecordCandidate enters a candidate in the idempotency ledger. It returns false when
// the candidate was already applied, in which case the caller must change nothing. In
// a pipelined transaction (InOwnerTx) the row goes with the commit and it returns
// true: a candidate already recorded then fails the commit with ErrAlreadyRecorded,
// which rolls back whatever the caller changed.
func (t *Tx) RecordCandidate(ctx context.Context, candidateID string, memoryID uuid.UUID, decision, reason string) (bool, error) {
	var mid *uuid.UUID
	if memoryID != uuid.Nil {
		mid = &memoryID
	}
	if t.Pipelined() {
		// No ON CONFLICT: only an error stops the COMMIT queued after it.
		t.tx.(*pipeTx).queue(queued{what: "recording candidate " + candidateID, unique: ErrAlreadyRecorded,
			sql: `INSERT INTO applied_candidates (tenant, candidate_id, memory_id, decision, reason)
		VALUES ($1, $2, $3, $4, $5)`, args: []any{t.tenant, candidateID, mid, decision, reason}})
		return true, nil
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO applied_candidates (tenant, candidate_id, memory_id, decision, reason)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, t.tenant, candidateID, mid, decision, reason)
	if err != nil {
		return false, fmt.Errorf("recording candidate %s: %w", candidateID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// CandidateApplied reports whether a candidate id is already in the ledger.
func (t *Tx) CandidateApplied(ctx context.Context, candidateID string) (bool, error) {
	var ok bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM applied_candidates WHERE tenant = $1 AND candidate_id = $2)`,
		t.tenant, candidateID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("checking candidate %s: %w", candidateID, err)
	}
	return ok, nil
}

// LockOwner serialises writers of one owner's memories across every process until
// the transaction ends; different owners proceed in parallel.
func (t *Tx) LockOwner(ctx context.Context, userID string) error {
	return t.later(ctx, "locking owner "+userID,
		`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "engram-owner/"+t.tenant+"/"+userID)
}

// DropOtherEmbeddings deletes a memory's vectors under models other than keep: they
// describe content that just changed, and a stale vector would match the old text. A
// re-embedding job restores them.
func (t *Tx) DropOtherEmbeddings(ctx context.Context, id uuid.UUID, keep string) error {
	return t.later(ctx, "dropping stale embeddings of memory "+id.String(),
		`DELETE FROM memory_embeddings WHERE tenant = $1 AND memory_id = $2 AND model <> $3`, t.tenant, id, keep)
}

// Get reads a memory.
func (t *Tx) Get(ctx context.Context, id uuid.UUID) (Memory, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+memoryColumns+` FROM memories WHERE tenant = $1 AND id = $2`, t.tenant, id)
	m, err := scanMemory(row, t.tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return Memory{}, fmt.Errorf("memory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("reading memory %s: %w", id, err)
	}
	return m, nil
}

// Versions reads a memory's history, oldest first.
func (t *Tx) Versions(ctx context.Context, id uuid.UUID) ([]Version, error) {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, version, change, content, coalesce(old_content, ''), status,
		category, coalesce(key, ''), importance, confidence, valid_from, valid_to, recorded_at, reason, actor,
		coalesce(candidate_id, '') FROM memory_versions WHERE tenant = $1 AND memory_id = $2 ORDER BY version`, t.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading versions of %s: %w", id, err)
	}
	vs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Version, error) {
		var v Version
		var change, status, cat string
		err := r.Scan(&v.MemoryID, &v.Version, &change, &v.Content, &v.OldContent, &status, &cat, &v.Key,
			&v.Importance, &v.Confidence, &v.ValidFrom, &v.ValidTo, &v.RecordedAt, &v.Reason, &v.Actor, &v.CandidateID)
		v.Change, v.Status, v.Category = Change(change), Status(status), Category(cat)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading versions of %s: %w", id, err)
	}
	return vs, nil
}

// LineageOf reads a memory's sources.
func (t *Tx) LineageOf(ctx context.Context, id uuid.UUID) ([]Lineage, error) {
	rows, err := t.tx.Query(ctx, `SELECT memory_id, source_kind, source_id, coalesce(candidate_id, ''), added_at
		FROM memory_lineage WHERE tenant = $1 AND memory_id = $2 ORDER BY added_at, source_kind, source_id`, t.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading lineage of %s: %w", id, err)
	}
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lineage, error) {
		var l Lineage
		var kind string
		err := r.Scan(&l.MemoryID, &kind, &l.SourceID, &l.CandidateID, &l.AddedAt)
		l.Kind = LineageKind(kind)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading lineage of %s: %w", id, err)
	}
	return ls, nil
}

// Detail is a memory with its history and sources.
type Detail struct {
	Memory   Memory    `json:"memory"`
	Versions []Version `json:"versions"`
	Lineage  []Lineage `json:"lineage"`
}

// Detail reads a memory with its versions and lineage.
func (t *Tx) Detail(ctx context.Context, id uuid.UUID) (Detail, error) {
	m, err := t.Get(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	vs, err := t.Versions(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	ls, err := t.LineageOf(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	return Detail{Memory: m, Versions: vs, Lineage: ls}, nil
}

// AsOf returns the version of memory id that held at time at: the latest version
// whose validity interval (valid_from, valid_to) contains at. Validity is world time,
// so backfilled history answers as of when things were true, not when engram learnt
// them. It is ErrNotFound when no version was valid then.
func (t *Tx) AsOf(ctx context.Context, id uuid.UUID, at time.Time) (Version, error) {
	vs, err := t.Versions(ctx, id)
	if err != nil {
		return Version{}, err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if v.ValidFrom.After(at) {
			continue
		}
		if v.ValidTo != nil && !at.Before(*v.ValidTo) {
			continue
		}
		return v, nil
	}
	return Version{}, fmt.Errorf("memory %s as of %s: %w", id, at.Format(time.RFC3339), ErrNotFound)
}

// NearestQuery asks for an owner's memories closest to a vector.
type NearestQuery struct {
	UserID   string
	Model    string
	Vector   []float32
	Statuses []Status // empty: active and pending
	Types    []Type   // empty: all
	K        int
}

// Neighbour is a memory and its cosine similarity to the query.
type Neighbour struct {
	Memory     Memory
	Similarity float64
}

// Nearest returns the owner's K nearest memories by cosine under one embedding model.
// It scans the owner's vectors exactly through the (tenant, model, user_id) index:
// owners hold thousands of memories, where an exact scan is both faster and more
// accurate than a filtered HNSW scan (FACTS.md). Equal distances rank by id, as in
// the resolver's reads (nearestVectorsFirstSQL).
func (t *Tx) Nearest(ctx context.Context, q NearestQuery) ([]Neighbour, error) {
	if q.Model == "" || len(q.Vector) == 0 {
		return nil, fmt.Errorf("%w: nearest needs a model and a vector", ErrInvalid)
	}
	if q.K <= 0 {
		q.K = 10
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []Status{StatusActive, StatusPending}
	}
	types := []string{} // not nil: cardinality(NULL) is NULL, which would match nothing
	for _, ty := range q.Types {
		types = append(types, string(ty))
	}
	var sts []string
	for _, s := range statuses {
		sts = append(sts, string(s))
	}
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumnsAs("m")+`, 1 - (e.embedding <=> $4) AS sim
		FROM memory_embeddings e JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
		WHERE e.tenant = $1 AND e.model = $2 AND e.user_id = $3
		  AND m.status = ANY($5) AND (cardinality($6::text[]) = 0 OR m.type = ANY($6))
		ORDER BY e.embedding <=> $4, e.memory_id
		LIMIT $7`, t.tenant, q.Model, q.UserID, pgvector.NewVector(q.Vector), sts, types, q.K)
	if err != nil {
		return nil, fmt.Errorf("searching nearest memories of %s: %w", q.UserID, err)
	}
	defer rows.Close()
	var out []Neighbour
	for rows.Next() {
		var n Neighbour
		m, err := scanMemory(rows, t.tenant, &n.Similarity)
		if err != nil {
			return nil, fmt.Errorf("reading nearest memories: %w", err)
		}
		n.Memory = m
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching nearest memories of %s: %w", q.UserID, err)
	}
	return out, nil
}

// ByKey returns the owner's memories in a key slot with the given statuses (empty:
// active and pending).
func (t *Tx) ByKey(ctx context.Context, userID, key string, statuses ...Status) ([]Memory, error) {
	if len(statuses) == 0 {
		statuses = []Status{StatusActive, StatusPending}
	}
	var sts []string
	for _, s := range statuses {
		sts = append(sts, string(s))
	}
	rows, err := t.tx.Query(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE tenant = $1 AND user_id = $2 AND key = $3 AND status = ANY($4) ORDER BY updated_at DESC`,
		t.tenant, userID, key, sts)
	if err != nil {
		return nil, fmt.Errorf("reading memories with key %s: %w", key, err)
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows, t.tenant)
		if err != nil {
			return nil, fmt.Errorf("reading memories with key %s: %w", key, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
