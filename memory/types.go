// Package memory is engram's domain model (memories, versions, lineage, audit, turns)
// and its PostgreSQL store. Tenant scoping lives here: every store call takes the
// tenant and runs inside a transaction that sets it for row-level security.
package memory

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Type is the kind of a long-term memory.
type Type string

const (
	Episodic   Type = "episodic"   // what happened
	Semantic   Type = "semantic"   // stable facts, preferences, constraints, rules
	Procedural Type = "procedural" // how to do things
)

// Types() lists every valid Type, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Types() []Type {
	return []Type{Episodic, Semantic, Procedural}
}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return oneOf(t, Types()) }

// Category refines a memory's type. The set is closed so that retrieval filters and
// the profile layer can rely on it; the database enforces it with a CHECK.
type Category string

const (
	CatPreference   Category = "preference"
	CatFact         Category = "fact"
	CatConstraint   Category = "constraint"
	CatEvent        Category = "event"
	CatSkill        Category = "skill"
	CatDecision     Category = "decision"
	CatProfile      Category = "profile"
	CatGoal         Category = "goal"
	CatRelationship Category = "relationship"
	CatTask         Category = "task"
	CatOther        Category = "other"
)

// Categories() lists every valid Category, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Categories() []Category {
	return []Category{CatPreference, CatFact, CatConstraint, CatEvent, CatSkill,
		CatDecision, CatProfile, CatGoal, CatRelationship, CatTask, CatOther}
}

// Valid reports whether c is a known category.
func (c Category) Valid() bool { return oneOf(c, Categories()) }

// Status is a memory's lifecycle state.
type Status string

const (
	StatusActive     Status = "active"
	StatusPending    Status = "pending"
	StatusSuperseded Status = "superseded"
	StatusDeprecated Status = "deprecated"
	StatusExpired    Status = "expired"
	StatusArchived   Status = "archived"
)

// Statuses() lists every valid Status, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Statuses() []Status {
	return []Status{StatusActive, StatusPending, StatusSuperseded, StatusDeprecated, StatusExpired, StatusArchived}
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return oneOf(s, Statuses()) }

// Scope says who a memory belongs to.
type Scope string

const (
	ScopeUser    Scope = "user"
	ScopeAgent   Scope = "agent"
	ScopeSession Scope = "session"
	ScopeGlobal  Scope = "global"
)

// Scopes() lists every valid Scope, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Scopes() []Scope {
	return []Scope{ScopeUser, ScopeAgent, ScopeSession, ScopeGlobal}
}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return oneOf(s, Scopes()) }

// Source is who a memory's content came from.
type Source string

const (
	SourceUser          Source = "user"
	SourceAssistant     Source = "assistant"
	SourceTool          Source = "tool"
	SourceConsolidation Source = "consolidation"
	SourceManual        Source = "manual"
)

// Sources() lists every valid Source, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Sources() []Source {
	return []Source{SourceUser, SourceAssistant, SourceTool, SourceConsolidation, SourceManual}
}

// Valid reports whether s is a known source.
func (s Source) Valid() bool { return oneOf(s, Sources()) }

// Change is the kind of change a version records.
type Change string

const (
	ChangeAdd         Change = "add"
	ChangeConfirm     Change = "confirm"
	ChangeUpdate      Change = "update"
	ChangeSupersede   Change = "supersede"
	ChangePending     Change = "pending"
	ChangePromote     Change = "promote"
	ChangeCorrect     Change = "correct"
	ChangeDeprecate   Change = "deprecate"
	ChangeRollback    Change = "rollback"
	ChangeExpire      Change = "expire"
	ChangeArchive     Change = "archive"
	ChangeRestore     Change = "restore"
	ChangeDecay       Change = "decay"
	ChangeConsolidate Change = "consolidate"
	// ChangeRebuild closes a memory that a rebuild from the turn log replaced.
	ChangeRebuild Change = "rebuild"
)

// Changes() lists every valid Change, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Changes() []Change {
	return []Change{ChangeAdd, ChangeConfirm, ChangeUpdate, ChangeSupersede, ChangePending,
		ChangePromote, ChangeCorrect, ChangeDeprecate, ChangeRollback, ChangeExpire, ChangeArchive,
		ChangeRestore, ChangeDecay, ChangeConsolidate, ChangeRebuild}
}

// Valid reports whether c is a known change kind.
func (c Change) Valid() bool { return oneOf(c, Changes()) }

// Role is the speaker of a conversation turn.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Roles() lists every valid Role, in a fixed order (a new slice each call: the
// set cannot be changed by a caller).
func Roles() []Role {
	return []Role{RoleUser, RoleAssistant, RoleTool, RoleSystem}
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return oneOf(r, Roles()) }

func oneOf[T comparable](v T, set []T) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// ToolCall describes the tool invocation a tool turn reports.
type ToolCall struct {
	Name   string `json:"name"`
	Status string `json:"status"` // success | failure
	Error  string `json:"error,omitempty"`
}

// Turn is one conversation turn as engram stores it. The tenant is never part of
// the JSON an agent sends: it comes from authentication.
type Turn struct {
	Tenant     string         `json:"tenant,omitempty"`
	TurnID     string         `json:"turn_id"`
	UserID     string         `json:"user_id"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id"`
	TaskID     string         `json:"task_id,omitempty"`
	Role       Role           `json:"role"`
	Content    string         `json:"content"`
	Tool       *ToolCall      `json:"tool,omitempty"`
	OccurredAt time.Time      `json:"occurred_at"`
	ReceivedAt time.Time      `json:"received_at,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	// Deleted is set when retention removed the content; the id and hash remain.
	Deleted bool `json:"deleted,omitempty"`
}

// Candidate is a proposed memory produced by an extractor (or by distillation) and
// resolved against what the owner already has. Its ID is deterministic so that a
// redelivered batch republishes the same candidate.
type Candidate struct {
	ID        string `json:"id"`
	Tenant    string `json:"tenant"`
	UserID    string `json:"user_id"`
	AgentID   string `json:"agent_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Scope     Scope  `json:"scope"`

	Type       Type     `json:"type"`
	Category   Category `json:"category"`
	Key        string   `json:"key,omitempty"`
	Content    string   `json:"content"`
	Importance float64  `json:"importance"`
	Confidence float64  `json:"confidence"`

	SourceTurnIDs   []string `json:"source_turn_ids,omitempty"`
	SourceMemoryIDs []string `json:"source_memory_ids,omitempty"`

	ValidFrom time.Time  `json:"valid_from"`
	ExpireAt  *time.Time `json:"expire_at,omitempty"`

	// Source is who said it; Trusted is false for an assistant claim that neither the
	// user confirmed nor a tool result backs, which the resolver holds as pending.
	Source  Source `json:"source"`
	Trusted bool   `json:"trusted"`

	Extractor        string         `json:"extractor"`
	ExtractorVersion string         `json:"extractor_version"`
	Model            string         `json:"model,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	CreatedAt        time.Time      `json:"created_at"`
}

// Memory is the current state of one long-term memory.
type Memory struct {
	Tenant    string    `json:"tenant"`
	ID        uuid.UUID `json:"id"`
	UserID    string    `json:"user_id,omitempty"`
	AgentID   string    `json:"agent_id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Scope     Scope     `json:"scope"`

	Type       Type     `json:"type"`
	Category   Category `json:"category"`
	Key        string   `json:"key,omitempty"`
	Content    string   `json:"content"`
	Importance float64  `json:"importance"`
	Confidence float64  `json:"confidence"`
	Status     Status   `json:"status"`
	Version    int      `json:"version"`

	ValidFrom  time.Time  `json:"valid_from"`
	ValidTo    *time.Time `json:"valid_to,omitempty"`
	RecordedAt time.Time  `json:"recorded_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ExpireAt   *time.Time `json:"expire_at,omitempty"`

	AccessCount     int64      `json:"access_count"`
	LastAccessAt    *time.Time `json:"last_access_at,omitempty"`
	ConfirmCount    int        `json:"confirm_count"`
	LastConfirmedAt time.Time  `json:"last_confirmed_at"`
	ConsolidatedAt  *time.Time `json:"consolidated_at,omitempty"`

	Source           Source         `json:"source"`
	Extractor        string         `json:"extractor,omitempty"`
	ExtractorVersion string         `json:"extractor_version,omitempty"`
	Model            string         `json:"model,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// Version is one entry of a memory's history.
type Version struct {
	MemoryID    uuid.UUID  `json:"memory_id"`
	Version     int        `json:"version"`
	Change      Change     `json:"change"`
	Content     string     `json:"content"`
	OldContent  string     `json:"old_content,omitempty"`
	Status      Status     `json:"status"`
	Category    Category   `json:"category"`
	Key         string     `json:"key,omitempty"`
	Importance  float64    `json:"importance"`
	Confidence  float64    `json:"confidence"`
	ValidFrom   time.Time  `json:"valid_from"`
	ValidTo     *time.Time `json:"valid_to,omitempty"`
	RecordedAt  time.Time  `json:"recorded_at"`
	Reason      string     `json:"reason,omitempty"`
	Actor       string     `json:"actor"`
	CandidateID string     `json:"candidate_id,omitempty"`
}

// LineageKind says what a lineage entry points at.
type LineageKind string

const (
	LineageTurn   LineageKind = "turn"
	LineageMemory LineageKind = "memory"
)

// Lineage links a memory to a source turn or a source memory.
type Lineage struct {
	MemoryID    uuid.UUID   `json:"memory_id"`
	Kind        LineageKind `json:"kind"`
	SourceID    string      `json:"source_id"`
	CandidateID string      `json:"candidate_id,omitempty"`
	AddedAt     time.Time   `json:"added_at"`
}

// Owner identifies whose memories a search or a resolution looks at.
type Owner struct {
	UserID  string
	AgentID string
	Scope   Scope
}

// LockKey names the owner whose writers serialise (Tx.LockOwner): the user, or for
// memories without one the agent or the tenant's global pool.
func (o Owner) LockKey() string {
	switch {
	case o.UserID != "":
		return o.UserID
	case o.Scope == ScopeAgent:
		return "#agent/" + o.AgentID
	}
	return "#global"
}

// String renders the owner for logs and lock keys.
func (o Owner) String() string {
	return fmt.Sprintf("%s/%s/%s", o.Scope, o.UserID, o.AgentID)
}
