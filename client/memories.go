package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Memory is the current state of one long-term memory.
type Memory struct {
	Tenant    string `json:"tenant"`
	ID        string `json:"id"`
	UserID    string `json:"user_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Scope is whose memory it is: user, agent, session or global.
	Scope string `json:"scope"`

	Type       string  `json:"type"`     // episodic, semantic, procedural
	Category   string  `json:"category"` // preference, fact, constraint, event, ...
	Key        string  `json:"key,omitempty"`
	Content    string  `json:"content"`
	Importance float64 `json:"importance"`
	Confidence float64 `json:"confidence"`
	Status     string  `json:"status"` // active, pending, superseded, deprecated, expired, archived
	Version    int     `json:"version"`

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

	Source           string         `json:"source"` // user, assistant, tool, consolidation, manual
	Extractor        string         `json:"extractor,omitempty"`
	ExtractorVersion string         `json:"extractor_version,omitempty"`
	Model            string         `json:"model,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// Lineage links a memory to a source turn or a source memory.
type Lineage struct {
	MemoryID    string    `json:"memory_id"`
	Kind        string    `json:"kind"` // turn | memory
	SourceID    string    `json:"source_id"`
	CandidateID string    `json:"candidate_id,omitempty"`
	AddedAt     time.Time `json:"added_at"`
}

// MemoryDetail is a memory with its versions (oldest first) and lineage.
type MemoryDetail struct {
	Memory   Memory    `json:"memory"`
	Versions []Version `json:"versions"`
	Lineage  []Lineage `json:"lineage"`
}

func memoryPath(id string, rest ...string) string {
	p := "/v1/memories/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// Get reads a memory with its versions and lineage.
func (c *Client) Get(ctx context.Context, memoryID string) (MemoryDetail, error) {
	var out MemoryDetail
	err := c.do(ctx, "GET", memoryPath(memoryID), nil, &out)
	return out, err
}

// AsOfVersion is the version of a memory believed true at a time.
type AsOfVersion struct {
	MemoryID string    `json:"memory_id"`
	AsOf     time.Time `json:"as_of"`
	Version  Version   `json:"version"`
}

// AsOf reads the version of a memory that was believed true at t (an *APIError with
// status 404 when none was).
func (c *Client) AsOf(ctx context.Context, memoryID string, t time.Time) (AsOfVersion, error) {
	var out AsOfVersion
	err := c.do(ctx, "GET", memoryPath(memoryID)+"?as_of="+url.QueryEscape(t.Format(time.RFC3339Nano)), nil, &out)
	return out, err
}

// UpdateRequest is a manual correction of a memory. Content is required; nil fields
// are left as they are.
type UpdateRequest struct {
	Content    *string  `json:"content"`
	Category   *string  `json:"category,omitempty"`
	Importance *float64 `json:"importance,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// ExpectVersion, when non-zero, refuses the edit (409 version_mismatch) unless the
	// memory is at that version, so two editors cannot overwrite each other.
	ExpectVersion int `json:"expect_version,omitempty"`
}

type memoryEnvelope struct {
	Memory Memory `json:"memory"`
}

// Update writes a corrected version of a memory (change "correct"). A correction is
// authoritative: confidence becomes 1 and a pending memory becomes active.
func (c *Client) Update(ctx context.Context, memoryID string, req UpdateRequest) (Memory, error) {
	if req.Content == nil {
		return Memory{}, fmt.Errorf("engram: Update: Content is required")
	}
	var out memoryEnvelope
	err := c.do(ctx, "PATCH", memoryPath(memoryID), req, &out)
	return out.Memory, err
}

type reasonBody struct {
	Reason string `json:"reason,omitempty"`
}

// Deprecate marks a memory deprecated: it is kept, with its history, but no longer
// retrieved.
func (c *Client) Deprecate(ctx context.Context, memoryID, reason string) (Memory, error) {
	var out memoryEnvelope
	err := c.do(ctx, "POST", memoryPath(memoryID, "deprecate"), reasonBody{Reason: reason}, &out)
	return out.Memory, err
}

type rollbackBody struct {
	Version int    `json:"version"`
	Reason  string `json:"reason,omitempty"`
}

// Rollback writes a new version of a memory equal to its version n.
func (c *Client) Rollback(ctx context.Context, memoryID string, n int, reason string) (Memory, error) {
	var out memoryEnvelope
	err := c.do(ctx, "POST", memoryPath(memoryID, "rollback"), rollbackBody{Version: n, Reason: reason}, &out)
	return out.Memory, err
}

// Restore brings an archived memory back to active (409 not_archived otherwise).
func (c *Client) Restore(ctx context.Context, memoryID string) (Memory, error) {
	var out memoryEnvelope
	err := c.do(ctx, "POST", memoryPath(memoryID, "restore"), nil, &out)
	return out.Memory, err
}

// MemoryDeletion reports a hard deletion of one memory.
type MemoryDeletion struct {
	MemoryID   string `json:"memory_id"`
	Versions   int    `json:"versions"`
	Lineage    int    `json:"lineage"`
	Embeddings int    `json:"embeddings"`
}

// DeleteMemory hard-deletes a memory, as Forget does, and reports what went with it.
func (c *Client) DeleteMemory(ctx context.Context, memoryID string) (MemoryDeletion, error) {
	var out MemoryDeletion
	err := c.do(ctx, "DELETE", memoryPath(memoryID), nil, &out)
	return out, err
}

// ListRequest filters a listing of memories; zero fields do not filter.
type ListRequest struct {
	UserID     string
	AgentID    string
	Types      []string
	Categories []string
	// Statuses defaults to every status.
	Statuses []string
	Key      string
	// UpdatedAfter keeps memories updated strictly after this time.
	UpdatedAfter *time.Time
	// Metadata keeps memories whose metadata has each key with this string value.
	Metadata map[string]string
	// Limit is the page size (1-500; 0: the server's 50).
	Limit int
	// Cursor continues a listing: the NextCursor of the page before, with the same
	// filters.
	Cursor string
}

func (r ListRequest) query() string {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("user_id", r.UserID)
	set("agent_id", r.AgentID)
	for _, t := range r.Types {
		v.Add("type", t)
	}
	for _, t := range r.Categories {
		v.Add("category", t)
	}
	for _, t := range r.Statuses {
		v.Add("status", t)
	}
	set("key", r.Key)
	if r.UpdatedAfter != nil {
		v.Set("updated_after", r.UpdatedAfter.Format(time.RFC3339Nano))
	}
	for k, s := range r.Metadata {
		v.Set("metadata["+k+"]", s)
	}
	if r.Limit > 0 {
		v.Set("limit", strconv.Itoa(r.Limit))
	}
	set("cursor", r.Cursor)
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// MemoryPage is one page of a listing. NextCursor is empty on the last page.
type MemoryPage struct {
	Memories   []Memory `json:"memories"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// ListMemories reads one page of the tenant's memories, oldest change first
// (updated_at, then id). A memory created or changed while a caller pages through
// sorts after the pages already read, so it is met on a later page (only a write
// stamped before that page was read but committed after it can land behind the cursor).
func (c *Client) ListMemories(ctx context.Context, req ListRequest) (MemoryPage, error) {
	var out MemoryPage
	err := c.do(ctx, "GET", "/v1/memories"+req.query(), nil, &out)
	return out, err
}

// AllMemories iterates over every memory of a listing, reading page after page; it
// stops at the first error, which it yields.
func (c *Client) AllMemories(ctx context.Context, req ListRequest) iter.Seq2[Memory, error] {
	return func(yield func(Memory, error) bool) {
		for {
			page, err := c.ListMemories(ctx, req)
			if err != nil {
				yield(Memory{}, err)
				return
			}
			for _, m := range page.Memories {
				if !yield(m, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			req.Cursor = page.NextCursor
		}
	}
}

// UserDeletion reports what DeleteUser removed.
type UserDeletion struct {
	Tenant           string `json:"tenant"`
	UserID           string `json:"user_id"`
	Memories         int    `json:"memories"`
	Versions         int    `json:"versions"`
	Lineage          int    `json:"lineage"`
	ForeignLineage   int    `json:"foreign_lineage"`
	Embeddings       int    `json:"embeddings"`
	Ledger           int    `json:"ledger"`
	Turns            int    `json:"turns"`
	Retrievals       int    `json:"retrievals"`
	SessionSummaries int    `json:"session_summaries"`
	TaskStates       int    `json:"task_states"`      // tenant tasks named by the user's turns
	UserTaskStates   int    `json:"user_task_states"` // the user's own tasks
	TurnMessages     int    `json:"turn_messages"`
	CandidateMsgs    int    `json:"candidate_messages"`
	DeadLetters      int    `json:"dead_letters"`
	// Compacted lists the tables rewritten after the deletion, so that the deleted
	// rows' bytes leave the table files (CompactSeconds: how long it took).
	Compacted      []string `json:"compacted,omitempty"`
	CompactSeconds float64  `json:"compact_seconds,omitempty"`
	Skipped        []string `json:"skipped,omitempty"`
}

func userPath(userID string, rest ...string) string {
	p := "/v1/users/" + url.PathEscape(userID)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// DeleteUser deletes everything engram holds about a user (the right to erasure):
// memories with their history, turns, retrieval records, session summaries, working
// memory and the user's messages in the streams. The audit log keeps ids and hashes.
func (c *Client) DeleteUser(ctx context.Context, userID string) (UserDeletion, error) {
	var out UserDeletion
	err := c.do(ctx, "DELETE", userPath(userID), nil, &out)
	return out, err
}

// UserMemoriesDeletion reports what DeleteUserMemories removed.
type UserMemoriesDeletion struct {
	Tenant        string        `json:"tenant"`
	UserID        string        `json:"user_id"`
	Memories      int           `json:"memories"`
	Versions      int           `json:"versions"`
	Lineage       int           `json:"lineage"`
	Embeddings    int           `json:"embeddings"`
	CandidateMsgs int           `json:"candidate_messages"`
	TurnsKept     bool          `json:"turns_kept"`
	Turns         int           `json:"turns"`
	Erasure       *UserDeletion `json:"erasure,omitempty"`
}

// DeleteUserMemories forgets every memory of a user, each hard-deleted as
// DeleteMemory does. The user's turns are kept unless withTurns, which makes it
// DeleteUser.
func (c *Client) DeleteUserMemories(ctx context.Context, userID string, withTurns bool) (UserMemoriesDeletion, error) {
	var out UserMemoriesDeletion
	path := userPath(userID, "memories")
	if withTurns {
		path += "?turns=true"
	}
	err := c.do(ctx, "DELETE", path, nil, &out)
	return out, err
}

// Retrieval is the record of one search or context call: what was returned, with
// the score each item was ranked by (nil where it was not ranked).
type Retrieval struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"` // search | context
	QueryHash    string     `json:"query_hash"`
	UserID       string     `json:"user_id,omitempty"`
	SessionID    string     `json:"session_id,omitempty"`
	MemoryIDs    []string   `json:"memory_ids"`
	TurnIDs      []string   `json:"turn_ids"`
	MemoryScores []*float64 `json:"memory_scores"`
	TurnScores   []*float64 `json:"turn_scores"`
	CreatedAt    time.Time  `json:"created_at"`
}

// GetRetrieval reads the record of a search or context call by its RetrievalID.
func (c *Client) GetRetrieval(ctx context.Context, retrievalID string) (Retrieval, error) {
	var out Retrieval
	err := c.do(ctx, "GET", "/v1/retrievals/"+url.PathEscape(retrievalID), nil, &out)
	return out, err
}

// Readiness is the answer of GET /readyz: "ok", "degraded" (an optional dependency,
// such as a model endpoint, is down) or "unavailable", with each check's state.
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// Ready asks whether the server can serve (GET /readyz). An unavailable server
// answers 503: the error is an *APIError and Readiness still holds the checks.
func (c *Client) Ready(ctx context.Context) (Readiness, error) {
	var out Readiness
	_, err := c.attempt(ctx, "GET", "/readyz", "", nil, &out)
	var apiErr *APIError
	if errors.As(err, &apiErr) && len(apiErr.body) > 0 {
		_ = json.Unmarshal(apiErr.body, &out)
	}
	return out, err
}

// Live asks whether the server process is up (GET /healthz); nil when it is.
func (c *Client) Live(ctx context.Context) error {
	return c.do(ctx, "GET", "/healthz", nil, nil)
}

// Metrics reads the server's Prometheus exposition (GET /metrics), as text.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	var b []byte
	err := c.doRaw(ctx, "GET", "/metrics", "", nil, &b)
	return string(b), err
}
