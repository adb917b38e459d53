package httpapi

import "net/http"

// service names what a route needs; a route whose service is not configured
// answers 503.
type service int

const (
	none service = iota
	turnsService
	memoriesService
	lifecycleService
	retrieverService
	tasksService
	healthService
	metricsService
	consoleService
	mcpService
)

func (s service) String() string {
	switch s {
	case turnsService:
		return "ingest"
	case memoriesService:
		return "memory operations"
	case lifecycleService:
		return "lifecycle"
	case retrieverService:
		return "retrieval"
	case tasksService:
		return "working memory"
	case healthService:
		return "health checking"
	case metricsService:
		return "metrics"
	case consoleService:
		return "the console"
	case mcpService:
		return "the MCP server"
	}
	return "nothing"
}

// handler serves one route. p is the authenticated principal (zero on public
// routes). A returned error is answered by fail; on success the handler has
// written the answer.
type handler func(w http.ResponseWriter, r *http.Request, p Principal) error

// route is one line of the routing table.
type route struct {
	method, pattern string // an empty method matches every method
	public          bool   // no token needed
	needs           service
	missing         Error // the answer to memory.ErrNotFound; zero: "not found"
	handle          handler
}

// routes is engram's whole HTTP surface.
func (e *edge) routes() []route {
	noMemory := Error{Code: "not_found", Message: "no such memory"}
	noRecord := Error{Code: "not_found", Message: "not found", Field: "id"}
	return []route{
		// Operations: liveness (cheap), readiness (dependencies, cached) and Prometheus metrics.
		{method: "GET", pattern: "/healthz", public: true, handle: e.live},
		{method: "GET", pattern: "/readyz", public: true, needs: healthService, handle: e.ready},
		{method: "GET", pattern: "/metrics", public: true, needs: metricsService, handle: e.serveMetrics},

		// The write path: turns and explicit memories (ingest).
		{method: "POST", pattern: "/v1/turns", needs: turnsService, handle: e.postTurns},
		{method: "POST", pattern: "/v1/memories", needs: turnsService, handle: e.remember},

		// Manual operations on a memory (lifecycle.Ops).
		{method: "GET", pattern: "/v1/memories", needs: memoriesService, handle: e.listMemories},
		{method: "GET", pattern: "/v1/memories/{id}", needs: memoriesService, missing: noMemory, handle: e.getMemory},
		{method: "GET", pattern: "/v1/memories/{id}/history", needs: memoriesService, missing: noMemory, handle: e.history},
		{method: "PATCH", pattern: "/v1/memories/{id}", needs: memoriesService, missing: noMemory, handle: e.correct},
		{method: "POST", pattern: "/v1/memories/{id}/deprecate", needs: memoriesService, missing: noMemory, handle: e.deprecate},
		{method: "POST", pattern: "/v1/memories/{id}/rollback", needs: memoriesService, missing: noMemory, handle: e.rollback},

		// Deletion, restore, export and import (lifecycle.Lifecycle).
		{method: "DELETE", pattern: "/v1/memories/{id}", needs: lifecycleService, missing: noMemory, handle: e.deleteMemory},
		{method: "POST", pattern: "/v1/memories/{id}/restore", needs: lifecycleService, missing: noMemory, handle: e.restore},
		{method: "DELETE", pattern: "/v1/users/{user_id}", needs: lifecycleService, missing: noMemory, handle: e.deleteUser},
		{method: "DELETE", pattern: "/v1/users/{user_id}/memories", needs: lifecycleService, handle: e.deleteUserMemories},
		{method: "GET", pattern: "/v1/users/{user_id}/export", needs: lifecycleService, missing: noMemory, handle: e.export},
		{method: "POST", pattern: "/v1/users/{user_id}/import", needs: lifecycleService, missing: noMemory, handle: e.importUser},

		// The read path (retriever) and working memory.
		{method: "POST", pattern: "/v1/search", needs: retrieverService, missing: noRecord, handle: e.search},
		{method: "POST", pattern: "/v1/context", needs: retrieverService, missing: noRecord, handle: e.context},
		{method: "GET", pattern: "/v1/retrievals/{id}", needs: retrieverService, missing: noRecord, handle: e.getRetrieval},
		{method: "PUT", pattern: "/v1/tasks/{task_id}/state", needs: tasksService, missing: noRecord, handle: e.putTask},
		{method: "GET", pattern: "/v1/tasks/{task_id}/state", needs: tasksService, missing: noRecord, handle: e.getTask},
		{method: "DELETE", pattern: "/v1/tasks/{task_id}/state", needs: tasksService, missing: noRecord, handle: e.deleteTask},

		// MCP (internal/mcpserver): streamable HTTP, every method, behind the same bearer
		// token; its tools call the routes above in-process as that token.
		{pattern: "/mcp", needs: mcpService, handle: e.serveMCP},
		// The OpenAPI 3.1 document of this table (openapi.json), public like /healthz so
		// generators can fetch it.
		{method: "GET", pattern: "/openapi.json", public: true, handle: e.serveOpenAPI},

		// The console (internal/console): HTML pages with their own sign-in (a session
		// cookie exchanged for a token), so public here; it routes below its prefix.
		{pattern: "/console/", public: true, needs: consoleService, handle: e.serveConsole},
	}
}
