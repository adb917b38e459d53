package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// SearchRequest asks for an owner's memories (and, with Layers, raw turns) that
// match a query. Zero fields take the server's defaults (top 10 active memories).
type SearchRequest struct {
	Query      string   `json:"query"`
	UserID     string   `json:"user_id,omitempty"`
	AgentID    string   `json:"agent_id,omitempty"`
	SessionID  string   `json:"session_id,omitempty"`
	Scope      string   `json:"scope,omitempty"`
	Types      []string `json:"types,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Statuses   []string `json:"statuses,omitempty"`
	// From and To bound TimeField: "valid_from" (default) or "updated_at".
	From      *time.Time `json:"from,omitempty"`
	To        *time.Time `json:"to,omitempty"`
	TimeField string     `json:"time_field,omitempty"`
	// AsOf answers from history: each memory's version valid at that time.
	AsOf      *time.Time `json:"as_of,omitempty"`
	TopK      int        `json:"top_k,omitempty"`
	Threshold float64    `json:"threshold,omitempty"`
	Layers    []string   `json:"layers,omitempty"`
	// Mode restricts recall to one side for diagnosis: "keyword" or "vector".
	// Empty means hybrid.
	Mode string `json:"mode,omitempty"`
	// Metadata keeps memories (and turns) whose metadata holds each key with an
	// equal value.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Components explain a result's score.
type Components struct {
	Vector     float64 `json:"vector"`
	Keyword    float64 `json:"keyword"`
	RRF        float64 `json:"rrf"`
	Recency    float64 `json:"recency"`
	Importance float64 `json:"importance"`
	Confidence float64 `json:"confidence"`
}

// SearchResult is one memory or turn.
type SearchResult struct {
	Layer           string     `json:"layer"`
	ID              string     `json:"id"`
	Content         string     `json:"content"`
	Score           float64    `json:"score"`
	Type            string     `json:"type,omitempty"`
	Category        string     `json:"category,omitempty"`
	Key             string     `json:"key,omitempty"`
	Status          string     `json:"status,omitempty"`
	Pending         bool       `json:"pending,omitempty"`
	Version         int        `json:"version,omitempty"`
	ValidFrom       *time.Time `json:"valid_from,omitempty"`
	ValidTo         *time.Time `json:"valid_to,omitempty"`
	UpdatedAt       *time.Time `json:"updated_at,omitempty"`
	Source          string     `json:"source,omitempty"`
	UserID          string     `json:"user_id,omitempty"`
	SourceTurnIDs   []string   `json:"source_turn_ids,omitempty"`
	SourceMemoryIDs []string   `json:"source_memory_ids,omitempty"`
	TurnID          string     `json:"turn_id,omitempty"`
	SessionID       string     `json:"session_id,omitempty"`
	OccurredAt      *time.Time `json:"occurred_at,omitempty"`
	Role            string     `json:"role,omitempty"`
	// Metadata is the memory's (or the turn's) metadata.
	Metadata   map[string]any `json:"metadata,omitempty"`
	Components Components     `json:"components"`
}

// SearchResponse lists results, best first; RetrievalID records what was returned.
type SearchResponse struct {
	RetrievalID string         `json:"retrieval_id"`
	Results     []SearchResult `json:"results"`
	// VectorCoverage is the share of the owner's memories with a vector in the
	// configured embedding model (nil when the vector side did not run): below 1 while
	// a new model is rolled in, those without are ranked by keyword and recency.
	VectorCoverage *float64 `json:"vector_coverage,omitempty"`
}

// Search ranks an owner's memories against a query.
func (c *Client) Search(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	var out SearchResponse
	err := c.do(ctx, "POST", "/v1/search", req, &out)
	return out, err
}

// ContextRequest asks for a token-budgeted context block.
type ContextRequest struct {
	UserID       string `json:"user_id"`
	AgentID      string `json:"agent_id,omitempty"`
	SessionID    string `json:"session_id,omitempty"`
	TaskID       string `json:"task_id,omitempty"`
	Query        string `json:"query"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	// IncludePending adds unconfirmed memories, marked "(unconfirmed)".
	IncludePending bool `json:"include_pending,omitempty"`
}

// ContextSection is one layer of a context block.
type ContextSection struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	Lines  int    `json:"lines"`
}

// ContextResponse is the block to put in a prompt: every memory line cites its id.
type ContextResponse struct {
	Text      string           `json:"text"`
	Sections  []ContextSection `json:"sections"`
	MemoryIDs []string         `json:"memory_ids"`
	// TurnIDs are the turns the block quotes: the session's recent turns and, when no
	// memory matched the query, the user's earlier words it fell back to.
	TurnIDs     []string `json:"turn_ids,omitempty"`
	TokensUsed  int      `json:"tokens_used"`
	Budget      int      `json:"budget"`
	RetrievalID string   `json:"retrieval_id"`
	// VectorCoverage is as in SearchResponse.
	VectorCoverage *float64 `json:"vector_coverage,omitempty"`
}

// Context assembles the memory context for a query within a token budget.
func (c *Client) Context(ctx context.Context, req ContextRequest) (ContextResponse, error) {
	var out ContextResponse
	err := c.do(ctx, "POST", "/v1/context", req, &out)
	return out, err
}

// RememberRequest states a memory explicitly. It goes through the same resolver as
// extracted memories, so it deduplicates and supersedes like them.
type RememberRequest struct {
	// ID makes the call idempotent; empty means a fresh one.
	ID         string         `json:"id,omitempty"`
	UserID     string         `json:"user_id"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id,omitempty"`
	Type       string         `json:"type,omitempty"`
	Category   string         `json:"category,omitempty"`
	Key        string         `json:"key,omitempty"`
	Content    string         `json:"content"`
	Importance *float64       `json:"importance,omitempty"`
	ValidFrom  *time.Time     `json:"valid_from,omitempty"`
	ExpireAt   *time.Time     `json:"expire_at,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// RememberResponse names the candidate that carries the memory.
type RememberResponse struct {
	CandidateID string `json:"candidate_id"`
	Duplicate   bool   `json:"duplicate"`
}

// Remember publishes an explicit memory; it is durable when this returns.
func (c *Client) Remember(ctx context.Context, req RememberRequest) (RememberResponse, error) {
	var out RememberResponse
	err := c.do(ctx, "POST", "/v1/memories", req, &out)
	return out, err
}

// Forget hard-deletes a memory with its versions, embeddings and lineage; the audit
// log keeps only its id and a content hash.
func (c *Client) Forget(ctx context.Context, memoryID string) error {
	return c.do(ctx, "DELETE", "/v1/memories/"+url.PathEscape(memoryID), nil, nil)
}

// Version is one entry of a memory's history.
type Version struct {
	MemoryID    string     `json:"memory_id"`
	Version     int        `json:"version"`
	Change      string     `json:"change"`
	Content     string     `json:"content"`
	OldContent  string     `json:"old_content,omitempty"`
	Status      string     `json:"status"`
	Category    string     `json:"category"`
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

// History returns a memory's versions, oldest first.
func (c *Client) History(ctx context.Context, memoryID string) ([]Version, error) {
	var out struct {
		Versions []Version `json:"versions"`
	}
	err := c.do(ctx, "GET", "/v1/memories/"+url.PathEscape(memoryID)+"/history", nil, &out)
	return out.Versions, err
}

// TaskState is a task's working memory: a user's task (UserID set) or the tenant's.
type TaskState struct {
	TaskID    string          `json:"task_id"`
	UserID    string          `json:"user_id,omitempty"`
	State     json.RawMessage `json:"state"`
	Revision  uint64          `json:"revision"`
	UpdatedAt time.Time       `json:"updated_at"`
	ExpiresAt time.Time       `json:"expires_at"`
}

// PutTaskState replaces a task's working memory (a JSON object); it expires after
// the server's TTL without writes.
func (c *Client) PutTaskState(ctx context.Context, taskID string, state any) (TaskState, error) {
	var out TaskState
	if state == nil {
		return out, fmt.Errorf("engram: task state must be a JSON object, not nil")
	}
	err := c.do(ctx, "PUT", "/v1/tasks/"+url.PathEscape(taskID)+"/state", state, &out)
	return out, err
}

// TaskState reads a task's working memory.
func (c *Client) TaskState(ctx context.Context, taskID string) (TaskState, error) {
	var out TaskState
	err := c.do(ctx, "GET", "/v1/tasks/"+url.PathEscape(taskID)+"/state", nil, &out)
	return out, err
}

// DeleteTaskState removes a task's working memory.
func (c *Client) DeleteTaskState(ctx context.Context, taskID string) error {
	return c.do(ctx, "DELETE", "/v1/tasks/"+url.PathEscape(taskID)+"/state", nil, nil)
}

// The task routes without a user act on tasks of the tenant, which a token limited to
// users may not touch; with one, on the user's task, which is erased with the user and
// which a context for the user shows (before a tenant task of the same id).

func userTaskPath(userID, taskID string) string {
	return "/v1/tasks/" + url.PathEscape(taskID) + "/state?user_id=" + url.QueryEscape(userID)
}

// PutUserTaskState replaces the working memory of a task of userID.
func (c *Client) PutUserTaskState(ctx context.Context, userID, taskID string, state any) (TaskState, error) {
	var out TaskState
	if state == nil {
		return out, fmt.Errorf("engram: task state must be a JSON object, not nil")
	}
	err := c.do(ctx, "PUT", userTaskPath(userID, taskID), state, &out)
	return out, err
}

// UserTaskState reads the working memory of a task of userID.
func (c *Client) UserTaskState(ctx context.Context, userID, taskID string) (TaskState, error) {
	var out TaskState
	err := c.do(ctx, "GET", userTaskPath(userID, taskID), nil, &out)
	return out, err
}

// DeleteUserTaskState removes the working memory of a task of userID.
func (c *Client) DeleteUserTaskState(ctx context.Context, userID, taskID string) error {
	return c.do(ctx, "DELETE", userTaskPath(userID, taskID), nil, nil)
}
