package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram/client"
)

// The tools' arguments and results. Their jsonschema tags are the descriptions a
// model reads; fields without omitempty are required.

type rememberArgs struct {
	UserID     string         `json:"user_id" jsonschema:"the stable id of the user the memory is about"`
	Content    string         `json:"content" jsonschema:"one self-contained sentence, e.g. 'The user prefers meetings after 10am'"`
	Category   string         `json:"category,omitempty" jsonschema:"preference, fact, constraint, event, skill, decision, profile, goal, relationship, task or other"`
	Key        string         `json:"key,omitempty" jsonschema:"a normalised slot such as 'meeting.avoid_time': a new memory with the same key supersedes the old value"`
	Type       string         `json:"type,omitempty" jsonschema:"semantic (stable facts and preferences, the default), episodic (what happened) or procedural (how to do something)"`
	AgentID    string         `json:"agent_id,omitempty" jsonschema:"the agent the memory belongs to, when it is agent-specific"`
	SessionID  string         `json:"session_id,omitempty" jsonschema:"the session the memory was learnt in"`
	Importance *float64       `json:"importance,omitempty" jsonschema:"0 to 1; how much the memory matters"`
	Metadata   map[string]any `json:"metadata,omitempty" jsonschema:"free-form JSON kept with the memory"`
	ID         string         `json:"id,omitempty" jsonschema:"an idempotency id: the same id is remembered once"`
}

type rememberResult struct {
	CandidateID string `json:"candidate_id" jsonschema:"the id of the candidate that carries the memory into engram"`
	Duplicate   bool   `json:"duplicate" jsonschema:"true when the same id was remembered before"`
}

func (t tools) remember(ctx context.Context, req *mcp.CallToolRequest, in rememberArgs) (*mcp.CallToolResult, rememberResult, error) {
	api, err := t.client(req)
	if err != nil {
		return nil, rememberResult{}, err
	}
	r, err := api.Remember(ctx, client.RememberRequest{ID: in.ID, UserID: in.UserID, AgentID: in.AgentID, SessionID: in.SessionID,
		Type: in.Type, Category: in.Category, Key: in.Key, Content: in.Content, Importance: in.Importance, Metadata: in.Metadata})
	if err != nil {
		return nil, rememberResult{}, err
	}
	return nil, rememberResult{CandidateID: r.CandidateID, Duplicate: r.Duplicate}, nil
}

type turnArg struct {
	Role       string     `json:"role" jsonschema:"user, assistant, tool or system"`
	Content    string     `json:"content" jsonschema:"what was said"`
	Name       string     `json:"name,omitempty" jsonschema:"the speaker's name, so memories say 'Ana moved to Porto' rather than 'The user moved to Porto'"`
	TurnID     string     `json:"turn_id,omitempty" jsonschema:"an idempotency id; one is assigned when empty"`
	OccurredAt *time.Time `json:"occurred_at,omitempty" jsonschema:"when it was said (RFC 3339); default now"`
}

type addTurnsArgs struct {
	UserID    string    `json:"user_id" jsonschema:"the stable id of the user in the conversation"`
	SessionID string    `json:"session_id" jsonschema:"the conversation's id"`
	AgentID   string    `json:"agent_id,omitempty" jsonschema:"the agent's id; default 'default'"`
	TaskID    string    `json:"task_id,omitempty" jsonschema:"the task the turns belong to"`
	Turns     []turnArg `json:"turns" jsonschema:"the turns in the order they were said"`
}

type addTurnsResult struct {
	Accepted   int      `json:"accepted" jsonschema:"turns stored now"`
	Duplicates int      `json:"duplicates" jsonschema:"turns stored before (same turn_id)"`
	TurnIDs    []string `json:"turn_ids" jsonschema:"the id of each turn, in order"`
}

func (t tools) addTurns(ctx context.Context, req *mcp.CallToolRequest, in addTurnsArgs) (*mcp.CallToolResult, addTurnsResult, error) {
	if len(in.Turns) == 0 {
		return nil, addTurnsResult{}, fmt.Errorf("turns: give at least one turn")
	}
	api, err := t.client(req)
	if err != nil {
		return nil, addTurnsResult{}, err
	}
	turns := make([]client.Turn, len(in.Turns))
	for i, a := range in.Turns {
		turns[i] = client.Turn{TurnID: a.TurnID, UserID: in.UserID, AgentID: in.AgentID, SessionID: in.SessionID,
			TaskID: in.TaskID, Role: client.Role(a.Role), Content: a.Content, Name: a.Name}
		if a.OccurredAt != nil {
			turns[i].OccurredAt = *a.OccurredAt
		}
	}
	r, err := api.AddTurns(ctx, turns...)
	if err != nil {
		return nil, addTurnsResult{}, err
	}
	out := addTurnsResult{Accepted: r.Accepted, Duplicates: r.Duplicates, TurnIDs: make([]string, 0, len(r.Results))}
	for _, tr := range r.Results {
		out.TurnIDs = append(out.TurnIDs, tr.TurnID)
	}
	return nil, out, nil
}

type searchArgs struct {
	Query        string     `json:"query" jsonschema:"what to look for, in the user's words"`
	UserID       string     `json:"user_id" jsonschema:"whose memories to search"`
	AgentID      string     `json:"agent_id,omitempty" jsonschema:"narrow to this agent's and unscoped memories"`
	SessionID    string     `json:"session_id,omitempty" jsonschema:"the current session (with include_turns, its turns rank first)"`
	Types        []string   `json:"types,omitempty" jsonschema:"only these types: episodic, semantic, procedural"`
	Categories   []string   `json:"categories,omitempty" jsonschema:"only these categories, e.g. preference, constraint"`
	TopK         int        `json:"top_k,omitempty" jsonschema:"how many results; default 10"`
	AsOf         *time.Time `json:"as_of,omitempty" jsonschema:"answer from history: what was believed at this time (RFC 3339)"`
	IncludeTurns bool       `json:"include_turns,omitempty" jsonschema:"also search past conversation turns"`
}

type searchHit struct {
	ID        string     `json:"id" jsonschema:"the memory id (or turn id for a turn)"`
	Layer     string     `json:"layer" jsonschema:"memories or turns"`
	Content   string     `json:"content"`
	Score     float64    `json:"score"`
	Type      string     `json:"type,omitempty"`
	Category  string     `json:"category,omitempty"`
	Key       string     `json:"key,omitempty"`
	Status    string     `json:"status,omitempty"`
	ValidFrom *time.Time `json:"valid_from,omitempty"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	SessionID string     `json:"session_id,omitempty"`
	Role      string     `json:"role,omitempty"`
}

type searchResult struct {
	RetrievalID string      `json:"retrieval_id" jsonschema:"the id under which engram logged what this search returned"`
	Results     []searchHit `json:"results" jsonschema:"best first"`
}

func (t tools) search(ctx context.Context, req *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, searchResult, error) {
	api, err := t.client(req)
	if err != nil {
		return nil, searchResult{}, err
	}
	sr := client.SearchRequest{Query: in.Query, UserID: in.UserID, AgentID: in.AgentID, SessionID: in.SessionID,
		Types: in.Types, Categories: in.Categories, TopK: in.TopK, AsOf: in.AsOf}
	if in.IncludeTurns {
		sr.Layers = []string{"memories", "turns"}
	}
	r, err := api.Search(ctx, sr)
	if err != nil {
		return nil, searchResult{}, err
	}
	out := searchResult{RetrievalID: r.RetrievalID, Results: make([]searchHit, 0, len(r.Results))}
	for _, h := range r.Results {
		out.Results = append(out.Results, searchHit{ID: h.ID, Layer: h.Layer, Content: h.Content, Score: h.Score, Type: h.Type,
			Category: h.Category, Key: h.Key, Status: h.Status, ValidFrom: h.ValidFrom, ValidTo: h.ValidTo,
			SessionID: h.SessionID, Role: h.Role})
	}
	return nil, out, nil
}

type contextArgs struct {
	Query        string `json:"query" jsonschema:"the request you are about to answer"`
	UserID       string `json:"user_id" jsonschema:"the user you are talking to"`
	AgentID      string `json:"agent_id,omitempty" jsonschema:"your agent id"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"the current session: its recent turns and summary are included"`
	TaskID       string `json:"task_id,omitempty" jsonschema:"the current task: its working state is included"`
	BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"the most tokens the block may take; default 1000"`
}

type contextResult struct {
	Text        string   `json:"text" jsonschema:"the context block; each memory line starts with [memory_ref: id]"`
	MemoryIDs   []string `json:"memory_ids" jsonschema:"the memories cited in the block, in order"`
	TokensUsed  int      `json:"tokens_used"`
	Budget      int      `json:"budget"`
	RetrievalID string   `json:"retrieval_id" jsonschema:"the id under which engram logged what this block holds"`
}

func (t tools) context(ctx context.Context, req *mcp.CallToolRequest, in contextArgs) (*mcp.CallToolResult, contextResult, error) {
	api, err := t.client(req)
	if err != nil {
		return nil, contextResult{}, err
	}
	r, err := api.Context(ctx, client.ContextRequest{Query: in.Query, UserID: in.UserID, AgentID: in.AgentID,
		SessionID: in.SessionID, TaskID: in.TaskID, BudgetTokens: in.BudgetTokens})
	if err != nil {
		return nil, contextResult{}, err
	}
	out := contextResult{Text: r.Text, MemoryIDs: r.MemoryIDs, TokensUsed: r.TokensUsed, Budget: r.Budget, RetrievalID: r.RetrievalID}
	if out.MemoryIDs == nil {
		out.MemoryIDs = []string{}
	}
	// The block itself is the text a model reads; the structured result has the ids.
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}}, out, nil
}

type memoryArgs struct {
	MemoryID string `json:"memory_id" jsonschema:"the memory's id (a UUID, as in [memory_ref: id])"`
}

// checkID refuses a memory id that is not a UUID, naming the tool's own argument.
func (in memoryArgs) checkID() error {
	if _, err := uuid.Parse(in.MemoryID); err != nil {
		return fmt.Errorf("memory_id: %q is not a memory id (a UUID, as in [memory_ref: id])", in.MemoryID)
	}
	return nil
}

type forgetResult struct {
	Deleted string `json:"deleted" jsonschema:"the id of the deleted memory"`
}

func (t tools) forget(ctx context.Context, req *mcp.CallToolRequest, in memoryArgs) (*mcp.CallToolResult, forgetResult, error) {
	if err := in.checkID(); err != nil {
		return nil, forgetResult{}, err
	}
	api, err := t.client(req)
	if err != nil {
		return nil, forgetResult{}, err
	}
	if err := api.Forget(ctx, in.MemoryID); err != nil {
		return nil, forgetResult{}, err
	}
	return nil, forgetResult{Deleted: in.MemoryID}, nil
}

type historyResult struct {
	MemoryID string           `json:"memory_id"`
	Versions []client.Version `json:"versions" jsonschema:"oldest first"`
}

func (t tools) history(ctx context.Context, req *mcp.CallToolRequest, in memoryArgs) (*mcp.CallToolResult, historyResult, error) {
	if err := in.checkID(); err != nil {
		return nil, historyResult{}, err
	}
	api, err := t.client(req)
	if err != nil {
		return nil, historyResult{}, err
	}
	vs, err := api.History(ctx, in.MemoryID)
	if err != nil {
		return nil, historyResult{}, err
	}
	if vs == nil {
		vs = []client.Version{}
	}
	return nil, historyResult{MemoryID: in.MemoryID, Versions: vs}, nil
}

type taskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the task's id"`
}

type taskSetArgs struct {
	TaskID string         `json:"task_id" jsonschema:"the task's id"`
	State  map[string]any `json:"state" jsonschema:"the whole working state, a JSON object; it replaces the previous one"`
}

type taskResult struct {
	TaskID    string         `json:"task_id"`
	State     map[string]any `json:"state"`
	Revision  uint64         `json:"revision" jsonschema:"grows with every write"`
	UpdatedAt time.Time      `json:"updated_at"`
	ExpiresAt time.Time      `json:"expires_at" jsonschema:"when the state expires unless written again"`
}

func taskOut(ts client.TaskState) (taskResult, error) {
	out := taskResult{TaskID: ts.TaskID, Revision: ts.Revision, UpdatedAt: ts.UpdatedAt, ExpiresAt: ts.ExpiresAt}
	if err := json.Unmarshal(ts.State, &out.State); err != nil {
		return taskResult{}, fmt.Errorf("decoding the task state: %w", err)
	}
	return out, nil
}

func (t tools) taskGet(ctx context.Context, req *mcp.CallToolRequest, in taskArgs) (*mcp.CallToolResult, taskResult, error) {
	api, err := t.client(req)
	if err != nil {
		return nil, taskResult{}, err
	}
	ts, err := api.TaskState(ctx, in.TaskID)
	if err != nil {
		return nil, taskResult{}, err
	}
	out, err := taskOut(ts)
	return nil, out, err
}

func (t tools) taskSet(ctx context.Context, req *mcp.CallToolRequest, in taskSetArgs) (*mcp.CallToolResult, taskResult, error) {
	api, err := t.client(req)
	if err != nil {
		return nil, taskResult{}, err
	}
	if in.State == nil {
		return nil, taskResult{}, fmt.Errorf("state: give a JSON object")
	}
	ts, err := api.PutTaskState(ctx, in.TaskID, in.State)
	if err != nil {
		return nil, taskResult{}, err
	}
	out, err := taskOut(ts)
	return nil, out, err
}
