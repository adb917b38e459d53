package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	Accepted   int           `json:"accepted" jsonschema:"turns stored now"`
	Duplicates int           `json:"duplicates" jsonschema:"turns stored before (same turn_id)"`
	Rejected   int           `json:"rejected" jsonschema:"turns refused as invalid: fix them and resend with their turn_id"`
	Failed     int           `json:"failed" jsonschema:"turns not stored, or not known to be: resend them with their turn_id"`
	TurnIDs    []string      `json:"turn_ids" jsonschema:"the id of each turn, in order"`
	Results    []turnOutcome `json:"results" jsonschema:"each turn's outcome, in order"`
}

type turnOutcome struct {
	Index  int    `json:"index" jsonschema:"the turn's position in turns"`
	TurnID string `json:"turn_id" jsonschema:"the turn's id: resend the turn with it, so it is stored once"`
	Status string `json:"status" jsonschema:"accepted or duplicate (stored), rejected (invalid: see field and reason), failed (not stored) or unknown (no answer: it may be stored)"`
	Field  string `json:"field,omitempty" jsonschema:"for a rejected turn, the argument at fault, e.g. turns[1].content"`
	Reason string `json:"reason,omitempty" jsonschema:"why the turn was rejected or failed"`
}

// statusUnknown is a turn engram gave no outcome for (the call stopped before or
// while sending it): it may or may not be stored.
const statusUnknown = "unknown"

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
		// The ids are assigned here, not in the SDK, so that every outcome, a failure's
		// included, can name them: a resend with them is then stored once.
		id := a.TurnID
		if id == "" {
			u, err := uuid.NewV7()
			if err != nil {
				return nil, addTurnsResult{}, fmt.Errorf("assigning a turn id: %w", err)
			}
			id = u.String()
		}
		turns[i] = client.Turn{TurnID: id, UserID: in.UserID, AgentID: in.AgentID, SessionID: in.SessionID,
			TaskID: in.TaskID, Role: client.Role(a.Role), Content: a.Content, Name: a.Name}
		if a.OccurredAt != nil {
			turns[i].OccurredAt = *a.OccurredAt
		}
	}
	r, err := api.AddTurns(ctx, turns...)
	out := turnOutcomes(turns, r)
	if err == nil && out.Accepted+out.Duplicates == len(turns) {
		return nil, out, nil
	}
	// Some turns are not stored. The answer is an error, yet it lists every turn's id
	// and outcome: a model that resends the batch as it was would store the accepted
	// turns again under new ids.
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: addTurnsFailure(out, err)}}}, out, nil
}

// turnOutcomes reports every turn of the call, in order, whether or not engram
// answered for it.
func turnOutcomes(turns []client.Turn, r client.AddResult) addTurnsResult {
	out := addTurnsResult{TurnIDs: make([]string, len(turns)), Results: make([]turnOutcome, len(turns))}
	for i, tu := range turns {
		out.TurnIDs[i] = tu.TurnID
		out.Results[i] = turnOutcome{Index: i, TurnID: tu.TurnID, Status: statusUnknown}
	}
	for _, tr := range r.Results {
		if tr.Index < 0 || tr.Index >= len(turns) {
			continue
		}
		o := &out.Results[tr.Index]
		o.Status = tr.Status
		if tr.Error != nil {
			o.Field, o.Reason = tr.Error.Field, tr.Error.Message
			if o.Reason == "" {
				o.Reason = tr.Error.Code
			}
		}
	}
	for _, o := range out.Results {
		switch o.Status {
		case client.StatusAccepted:
			out.Accepted++
		case client.StatusDuplicate:
			out.Duplicates++
		case client.StatusRejected:
			out.Rejected++
		default: // failed or unknown: not known to be stored
			out.Failed++
		}
	}
	return out
}

// addTurnsFailure is the text of an add_turns call that did not store every turn.
func addTurnsFailure(out addTurnsResult, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "engram stored %d of %d turns (%d accepted, %d duplicate, %d rejected, %d failed or unknown).",
		out.Accepted+out.Duplicates, len(out.Results), out.Accepted, out.Duplicates, out.Rejected, out.Failed)
	if err != nil {
		var rej *client.RejectedError
		if !errors.As(err, &rej) {
			fmt.Fprintf(&b, " Error: %v.", err)
		}
	}
	b.WriteString(" Do not resend the batch without these turn ids: resend only the rejected (fixed) and failed turns, " +
		"or the whole batch, each turn with its turn_id below; a turn resent with its turn_id is stored once.\n")
	for _, o := range out.Results {
		fmt.Fprintf(&b, "turn %d (turn_id %s): %s", o.Index, o.TurnID, o.Status)
		if o.Field != "" {
			fmt.Fprintf(&b, ": %s", o.Field)
		}
		if o.Reason != "" {
			fmt.Fprintf(&b, ": %s", o.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
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
	TaskID       string `json:"task_id,omitempty" jsonschema:"the current task: its working state is included (this user's task, else the tenant's of the same id)"`
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
	UserID string `json:"user_id,omitempty" jsonschema:"the user the task is done for. Give it whenever you serve a user: the state is then that user's, shown only in their get_context and erased with them (a token limited to users needs it). Without it the task is the whole tenant's and every user's get_context with this task_id shows it"`
}

type taskSetArgs struct {
	TaskID string         `json:"task_id" jsonschema:"the task's id"`
	UserID string         `json:"user_id,omitempty" jsonschema:"the user the task is done for. Give it whenever you serve a user: the state is then that user's, shown only in their get_context and erased with them (a token limited to users needs it). Without it the task is the whole tenant's and every user's get_context with this task_id shows it"`
	State  map[string]any `json:"state" jsonschema:"the whole working state, a JSON object; it replaces the previous one"`
}

type taskResult struct {
	TaskID    string         `json:"task_id"`
	UserID    string         `json:"user_id,omitempty" jsonschema:"the user whose task it is; empty for a task of the tenant"`
	State     map[string]any `json:"state"`
	Revision  uint64         `json:"revision" jsonschema:"grows with every write"`
	UpdatedAt time.Time      `json:"updated_at"`
	ExpiresAt time.Time      `json:"expires_at" jsonschema:"when the state expires unless written again"`
}

// checkTaskID refuses the task ids a URL path cannot carry: "" and the dot segments,
// which the router would clean away into "no route" rather than an error naming
// task_id. The edge checks the rest.
func checkTaskID(id string) error {
	switch id {
	case "":
		return errors.New("task_id: must not be empty")
	case ".", "..":
		return fmt.Errorf("task_id: %q is not a task id (a dot segment cannot name a task)", id)
	}
	return nil
}

func taskOut(ts client.TaskState) (taskResult, error) {
	out := taskResult{TaskID: ts.TaskID, UserID: ts.UserID, Revision: ts.Revision, UpdatedAt: ts.UpdatedAt, ExpiresAt: ts.ExpiresAt}
	if err := json.Unmarshal(ts.State, &out.State); err != nil {
		return taskResult{}, fmt.Errorf("decoding the task state: %w", err)
	}
	return out, nil
}

func (t tools) taskGet(ctx context.Context, req *mcp.CallToolRequest, in taskArgs) (*mcp.CallToolResult, taskResult, error) {
	if err := checkTaskID(in.TaskID); err != nil {
		return nil, taskResult{}, err
	}
	api, err := t.client(req)
	if err != nil {
		return nil, taskResult{}, err
	}
	var ts client.TaskState
	if in.UserID != "" {
		ts, err = api.UserTaskState(ctx, in.UserID, in.TaskID)
	} else {
		ts, err = api.TaskState(ctx, in.TaskID)
	}
	if err != nil {
		return nil, taskResult{}, err
	}
	out, err := taskOut(ts)
	return nil, out, err
}

func (t tools) taskSet(ctx context.Context, req *mcp.CallToolRequest, in taskSetArgs) (*mcp.CallToolResult, taskResult, error) {
	if err := checkTaskID(in.TaskID); err != nil {
		return nil, taskResult{}, err
	}
	if in.State == nil {
		return nil, taskResult{}, fmt.Errorf("state: give a JSON object")
	}
	api, err := t.client(req)
	if err != nil {
		return nil, taskResult{}, err
	}
	var ts client.TaskState
	if in.UserID != "" {
		ts, err = api.PutUserTaskState(ctx, in.UserID, in.TaskID, in.State)
	} else {
		ts, err = api.PutTaskState(ctx, in.TaskID, in.State)
	}
	if err != nil {
		return nil, taskResult{}, err
	}
	out, err := taskOut(ts)
	return nil, out, err
}
