package httpapi

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// The OpenAPI document (openapi.json) is generated from this file: one entry per
// operation, with the Go types of its request and response bodies, whose JSON
// schemas come from the types themselves (github.com/google/jsonschema-go).
// TestOpenAPIRoutes checks the operations against the routing table of routes.go.

// param is a query parameter.
type param struct {
	name, description string
	schema            map[string]any
	deepObject        bool // an object written name[key]=value
}

// response is a success answer.
type response struct {
	status      int
	description string
	content     string // default application/json; "" with body nil: no body
	body        any    // a value of the body's Go type, a schema (map[string]any), or nil
}

type operation struct {
	method, path          string
	id, summary, tag      string
	description           string
	public                bool
	query                 []param
	body                  any // request body: a value of its Go type or a schema; nil: none
	bodyContent           string
	bodyOptional          bool
	required              []string       // the request body's required fields, where its Go type does not say
	props                 map[string]any // property schemas of the request body, where its Go type does not say
	responses             []response
	errors                []int  // error answers besides 401 (token routes) and 503
	pending               string // the helper whose branch adds the route; the lead removes the mark at merge
	noExample, noResponse bool   // no recorded example (HTML, metrics, routes of other branches)
}

// Named schemas in components/schemas: these types are referenced, not inlined.
// Request types keep additionalProperties: false (the edge refuses unknown fields);
// response types allow more properties, so clients keep working when a field is added.
var (
	requestSchemas = map[string]any{
		"Turn":            client.Turn{},
		"ToolCall":        client.ToolCall{},
		"RememberRequest": ingest.RememberRequest{},
		"SearchRequest":   retriever.SearchRequest{},
		"ContextRequest":  retriever.ContextRequest{},
	}
	responseSchemas = map[string]any{
		"Memory":               memory.Memory{},
		"Version":              memory.Version{},
		"Lineage":              memory.Lineage{},
		"MemoryDetail":         memory.Detail{},
		"MemoryAsOf":           asOfResponse{},
		"History":              historyResponse{},
		"MemoryChange":         memoryResponse{},
		"TurnsResponse":        TurnsResponse{},
		"TurnOutcome":          ingest.TurnOutcome{},
		"FieldError":           memory.FieldError{},
		"RememberResult":       ingest.RememberResult{},
		"SearchResponse":       retriever.SearchResponse{},
		"SearchResult":         retriever.Result{},
		"ScoreComponents":      retriever.Components{},
		"ContextResponse":      retriever.ContextResponse{},
		"ContextSection":       retriever.Section{},
		"Retrieval":            retriever.Retrieval{},
		"TaskState":            retriever.TaskState{},
		"MemoryDeletion":       lifecycle.MemoryDeletion{},
		"UserDeletion":         lifecycle.UserDeletion{},
		"ImportReport":         lifecycle.ImportReport{},
		"Error":                Error{},
		"ErrorBody":            ErrorBody{},
		"Liveness":             liveness{},
		"Readiness":            readiness{},
		"MemoryList":           listResponse{},
		"UserMemoriesDeletion": lifecycle.UserMemoriesDeletion{},
	}
)

// The shapes of answers written from maps (edge.go), for their schemas.
type liveness struct {
	Status string `json:"status" jsonschema:"ok"`
}

type readiness struct {
	Status string            `json:"status" jsonschema:"ok, degraded (a model endpoint is away) or unavailable"`
	Checks map[string]string `json:"checks" jsonschema:"each dependency's state: ok, or why not"`
}

// extraTypeSchemas are the schemas of types whose JSON is not their Go shape, and
// the enumerations of the memory model (from its own lists, so they stay true).
var extraTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[uuid.UUID]():       {Type: "string", Format: "uuid"},
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	reflect.TypeFor[memory.Type]():     enum(memory.Types()),
	reflect.TypeFor[memory.Category](): enum(memory.Categories()),
	reflect.TypeFor[memory.Status]():   enum(memory.Statuses()),
	reflect.TypeFor[memory.Scope]():    enum(memory.Scopes()),
	reflect.TypeFor[memory.Source]():   enum(memory.Sources()),
	reflect.TypeFor[memory.Change]():   enum(memory.Changes()),
}

func enum[T ~string](vs []T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range vs {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

var (
	idParam      = "a memory's id (UUID)"
	schemaInt    = map[string]any{"type": "integer"}
	schemaStr    = map[string]any{"type": "string"}
	schemaTime   = map[string]any{"type": "string", "format": "date-time"}
	schemaNDJSON = map[string]any{"type": "string", "description": "JSON Lines: a header line, one line per memory and turn, and an end line"}
)

// operations is every operation of the API, in the order of routes.go.
// taskUserParam names the user whose task a working-memory route acts on.
var taskUserParam = param{name: "user_id", description: "the user the task belongs to; omitted: a task of the tenant", schema: schemaStr}

func operations() []operation {
	jsonObject := map[string]any{"type": "object", "description": "a JSON object; it replaces the task's state"}
	return []operation{
		{method: "GET", path: "/healthz", id: "liveness", tag: "operations", public: true,
			summary:     "Liveness: the process is up",
			description: "Checks nothing else, so a liveness probe never restarts a node because a dependency is down.",
			responses:   []response{{status: 200, description: "the process serves requests", body: liveness{}}}},
		{method: "GET", path: "/readyz", id: "readiness", tag: "operations", public: true,
			summary: "Readiness: PostgreSQL, NATS/JetStream and the model endpoints",
			description: "503 when PostgreSQL or NATS is down; 200 \"degraded\" when only a model endpoint is. " +
				"Each check comes with its reason.",
			responses: []response{{status: 200, description: "ready (ok or degraded)", body: readiness{}},
				{status: 503, description: "a required dependency is down", body: readiness{}}}},
		{method: "GET", path: "/metrics", id: "metrics", tag: "operations", public: true, noExample: true,
			summary:   "Prometheus metrics",
			responses: []response{{status: 200, description: "the Prometheus text exposition", content: "text/plain", body: schemaStr}}},

		{method: "POST", path: "/v1/turns", id: "addTurns", tag: "write",
			summary: "Add conversation turns",
			description: "One turn, {\"turns\": [...]} or a bare array of up to 1,000 turns. 202 once JetStream has " +
				"acknowledged every valid turn (invalid ones are reported per turn); 503 with Retry-After when any " +
				"turn was not acknowledged: resend with the same turn ids (acknowledged ones come back duplicate). " +
				"Memories are extracted asynchronously, in about a second.",
			body: map[string]any{"oneOf": []any{ref("Turn"),
				map[string]any{"type": "object", "required": []any{"turns"}, "additionalProperties": false,
					"properties": map[string]any{"turns": map[string]any{"type": "array", "items": ref("Turn"), "maxItems": 1000}}},
				map[string]any{"type": "array", "items": ref("Turn"), "maxItems": 1000}}},
			responses: []response{{status: 202, description: "every valid turn is durable", body: TurnsResponse{}},
				{status: 503, description: "some turns were not acknowledged; resend them with the same ids", body: TurnsResponse{}}},
			errors: []int{400, 413}},
		{method: "POST", path: "/v1/memories", id: "remember", tag: "write",
			summary: "Remember something explicitly",
			description: "Goes through the same resolver as extracted memories: deduplicated, versioned, superseding " +
				"one with the same key. 202 once JetStream has acknowledged it.",
			body:      ingest.RememberRequest{},
			responses: []response{{status: 202, description: "durable; resolved asynchronously", body: ingest.RememberResult{}}},
			errors:    []int{400}},

		{method: "GET", path: "/v1/memories", id: "listMemories", tag: "memories",
			summary: "List memories, filtered, in stable cursor pages",
			description: "Pages are ordered by (updated_at, id); next_cursor, passed back with the same filters, " +
				"continues the listing, so a memory created or changed meanwhile comes on a later page. " +
				"Every filter is optional; an unknown parameter is refused. A token limited to users must name one in user_id.",
			query: []param{{name: "user_id", description: "only this user's memories", schema: schemaStr},
				{name: "agent_id", description: "only this agent's memories", schema: schemaStr},
				{name: "type", description: "episodic, semantic or procedural; repeatable or comma-separated", schema: schemaStr},
				{name: "category", description: "repeatable or comma-separated", schema: schemaStr},
				{name: "status", description: "repeatable or comma-separated; default every status", schema: schemaStr},
				{name: "key", description: "only memories with this key", schema: schemaStr},
				{name: "updated_after", description: "only memories updated after this time", schema: schemaTime},
				{name: "metadata", description: "metadata[KEY]=VALUE: only memories whose metadata has this string value (jsonb containment)",
					schema: map[string]any{"type": "object", "additionalProperties": schemaStr}, deepObject: true},
				{name: "limit", description: "page size, 1 to 500 (default 50)", schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 500}},
				{name: "cursor", description: "next_cursor of the previous page", schema: schemaStr}},
			responses: []response{{status: 200, description: "one page", body: listResponse{}}},
			errors:    []int{400}},
		{method: "GET", path: "/v1/memories/{id}", id: "getMemory", tag: "memories",
			summary:     "A memory with its versions and lineage, or the version believed at a time",
			description: "With as_of, the answer is the version that was valid then (MemoryAsOf).",
			query:       []param{{name: "as_of", description: "an RFC 3339 time: answer with the version valid then", schema: schemaTime}},
			responses: []response{{status: 200, description: "the memory (MemoryDetail), or with as_of its version then (MemoryAsOf)",
				body: map[string]any{"oneOf": []any{ref("MemoryDetail"), ref("MemoryAsOf")}}}},
			errors: []int{400, 404}},
		{method: "GET", path: "/v1/memories/{id}/history", id: "memoryHistory", tag: "memories",
			summary:   "A memory's versions, oldest first",
			responses: []response{{status: 200, description: "the versions", body: historyResponse{}}},
			errors:    []int{400, 404}},
		{method: "PATCH", path: "/v1/memories/{id}", id: "correctMemory", tag: "memories",
			summary:     "Correct a memory by hand",
			description: "Writes a new version (change \"correct\") under the token's name. expect_version guards against lost updates.",
			body:        correctBody{}, required: []string{"content"},
			props: map[string]any{"content": map[string]any{"type": "string", "description": "the corrected content"},
				"expect_version": map[string]any{"type": "integer", "description": "refuse (409) unless the memory is at this version; 0: any"}},
			responses: []response{{status: 200, description: "the corrected memory", body: memoryResponse{}}},
			errors:    []int{400, 404, 409}},
		{method: "POST", path: "/v1/memories/{id}/deprecate", id: "deprecateMemory", tag: "memories",
			summary: "Deprecate a memory (it stays in history)", body: deprecateBody{}, bodyOptional: true,
			responses: []response{{status: 200, description: "the deprecated memory", body: memoryResponse{}}},
			errors:    []int{400, 404, 409}},
		{method: "POST", path: "/v1/memories/{id}/rollback", id: "rollbackMemory", tag: "memories",
			summary: "Roll a memory back to an earlier version's content", body: rollbackBody{}, required: []string{"version"},
			props:     map[string]any{"version": map[string]any{"type": "integer", "minimum": 1, "description": "the version whose content to restore"}},
			responses: []response{{status: 200, description: "the memory at its new version", body: memoryResponse{}}},
			errors:    []int{400, 404, 409}},

		{method: "DELETE", path: "/v1/memories/{id}", id: "deleteMemory", tag: "lifecycle",
			summary: "Hard-delete a memory",
			description: "With its versions, lineage and embeddings; the audit log keeps its id and a content hash only. " +
				"The turns it came from stay, marked forgotten: a context never offers their words in its place.",
			responses: []response{{status: 200, description: "what was deleted", body: lifecycle.MemoryDeletion{}}},
			errors:    []int{400, 404}},
		{method: "POST", path: "/v1/memories/{id}/restore", id: "restoreMemory", tag: "lifecycle",
			summary:   "Restore an archived memory",
			responses: []response{{status: 200, description: "the memory, active again", body: memoryResponse{}}},
			errors:    []int{400, 404, 409}},
		{method: "DELETE", path: "/v1/users/{user_id}", id: "deleteUser", tag: "lifecycle",
			summary:     "Erase everything of a user",
			description: "Memories, versions, lineage, embeddings, turns, retrieval logs, summaries, task states and the user's stream messages.",
			responses:   []response{{status: 200, description: "what was erased", body: lifecycle.UserDeletion{}}},
			errors:      []int{400}},
		{method: "DELETE", path: "/v1/users/{user_id}/memories", id: "deleteUserMemories", tag: "lifecycle",
			summary: "Forget a user's memories, keeping the turns unless asked",
			description: "Each memory is hard-deleted as DELETE /v1/memories/{id} does (one audit entry with its " +
				"content hash; ledger entries kept as dropped so the kept turns cannot bring it back) and the user's " +
				"candidates in flight are dropped. With turns=true it is DELETE /v1/users/{user_id} (erasure).",
			query:     []param{{name: "turns", description: "also delete the user's turns: the whole user", schema: map[string]any{"type": "boolean"}}},
			responses: []response{{status: 200, description: "what was deleted", body: lifecycle.UserMemoriesDeletion{}}},
			errors:    []int{400}},
		{method: "GET", path: "/v1/users/{user_id}/export", id: "exportUser", tag: "lifecycle",
			summary: "Export a user's memories (with versions and lineage) and turns as JSON Lines",
			description: "A body cut short by a failure lacks the closing end line, which is how a reader (and import) " +
				"tells it from a whole export.",
			responses: []response{{status: 200, description: "the export", content: "application/x-ndjson", body: schemaNDJSON}},
			errors:    []int{400}},
		{method: "POST", path: "/v1/users/{user_id}/import", id: "importUser", tag: "lifecycle",
			summary: "Import an export into a user", body: schemaNDJSON, bodyContent: "application/x-ndjson",
			responses: []response{{status: 200, description: "what was imported and skipped", body: lifecycle.ImportReport{}}},
			errors:    []int{400, 413}},

		{method: "POST", path: "/v1/search", id: "search", tag: "read",
			summary: "Hybrid search of an owner's memories (and turns)",
			description: "Vector, keyword and recency recall fused and reranked, filtered first by tenant and owner; " +
				"each result carries its score components. as_of answers from history.",
			body:      retriever.SearchRequest{},
			responses: []response{{status: 200, description: "results, best first", body: retriever.SearchResponse{}}},
			errors:    []int{400}},
		{method: "POST", path: "/v1/context", id: "context", tag: "read",
			summary: "A token-budgeted context block for a prompt",
			description: "Working memory, short-term (the session's turns and summary), procedural, semantic and " +
				"episodic sections; every memory line cites [memory_ref: id], every turn line [turn: id]. When no memory " +
				"matches the query by keyword, the episodic section may add the user's own earlier turns that match it " +
				"and that no memory came from (ENGRAM_CONTEXT_TURNS).",
			body:      retriever.ContextRequest{},
			responses: []response{{status: 200, description: "the block", body: retriever.ContextResponse{}}},
			errors:    []int{400}},
		{method: "GET", path: "/v1/retrievals/{id}", id: "getRetrieval", tag: "read",
			summary:   "What a search or context call returned, in order, with each score",
			responses: []response{{status: 200, description: "the retrieval log", body: retriever.Retrieval{}}},
			errors:    []int{400, 404}},
		{method: "PUT", path: "/v1/tasks/{task_id}/state", id: "putTaskState", tag: "working memory",
			summary: "Replace a task's working memory", body: jsonObject,
			description: "Kept in a NATS KV bucket; it expires after the TTL without writes. With user_id the task " +
				"is the user's (erased with the user); without, the tenant's, which a token limited to users may not touch (403).",
			query:     []param{taskUserParam},
			responses: []response{{status: 200, description: "the stored state", body: retriever.TaskState{}}},
			errors:    []int{400, 413}},
		{method: "GET", path: "/v1/tasks/{task_id}/state", id: "getTaskState", tag: "working memory",
			summary:   "Read a task's working memory",
			query:     []param{taskUserParam},
			responses: []response{{status: 200, description: "the state", body: retriever.TaskState{}}},
			errors:    []int{400, 404}},
		{method: "DELETE", path: "/v1/tasks/{task_id}/state", id: "deleteTaskState", tag: "working memory",
			summary:   "Delete a task's working memory",
			query:     []param{taskUserParam},
			responses: []response{{status: 204, description: "deleted"}},
			errors:    []int{400, 404}},

		{method: "POST", path: "/mcp", id: "mcp", tag: "mcp",
			summary: "MCP (Model Context Protocol) over streamable HTTP",
			description: "JSON-RPC 2.0 messages of MCP, stateless: every request stands alone and is authenticated by " +
				"its bearer token; the tools (remember, add_turns, search_memory, get_context, forget, memory_history, " +
				"task_state_get, task_state_set) act as that token's tenant. Send Accept: application/json, " +
				"text/event-stream. Other methods answer 405.",
			body: map[string]any{"type": "object", "description": "a JSON-RPC 2.0 request or notification",
				"required": []any{"jsonrpc", "method"}, "properties": map[string]any{
					"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"type": []any{"string", "integer"}},
					"method": schemaStr, "params": map[string]any{"type": "object"}}},
			responses: []response{{status: 200, description: "the JSON-RPC response", body: map[string]any{
				"type": "object", "description": "a JSON-RPC 2.0 response", "required": []any{"jsonrpc"},
				"properties": map[string]any{"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"type": []any{"string", "integer"}},
					"result": map[string]any{"type": "object"}, "error": map[string]any{"type": "object"}}}},
				{status: 202, description: "a notification was accepted (no body)"}},
			errors: []int{400, 405}},
		{method: "GET", path: "/openapi.json", id: "openapi", tag: "operations", public: true, noExample: true,
			summary:   "This document",
			responses: []response{{status: 200, description: "the OpenAPI 3.1 document", body: map[string]any{"type": "object"}}}},
		{method: "GET", path: "/console/", id: "console", tag: "operations", public: true, noExample: true,
			summary: "The web console (HTML, its own sign-in); it routes below this prefix",
			responses: []response{{status: 200, description: "an HTML page", content: "text/html", body: schemaStr},
				{status: 303, description: "to the sign-in page"},
				{status: 404, description: "no such console page (HTML)", content: "text/html", body: schemaStr}}},
	}
}

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}
