package retriever

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
)

// maxRequestBytes bounds search and context bodies (a query is at most 4000 bytes).
const maxRequestBytes = 64 << 10

// TaskStates is the working-memory store the API writes through.
type TaskStates interface {
	TaskStateReader
	Put(ctx context.Context, tenant, taskID string, state json.RawMessage) (TaskState, error)
	Delete(ctx context.Context, tenant, taskID string) error
	MaxBytes() int
}

// API serves the read endpoints. The caller wraps the mux with authentication
// (httpapi.Tokens.Middleware); every handler takes the tenant from the principal.
type API struct {
	r      *Retriever
	tasks  TaskStates // nil: task endpoints answer 503
	logger *slog.Logger
}

// NewAPI makes the API. tasks may be nil when no KV bucket is configured.
func NewAPI(r *Retriever, tasks TaskStates, logger *slog.Logger) *API {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &API{r: r, tasks: tasks, logger: logger}
}

// Register adds the retriever's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/search", a.search)
	mux.HandleFunc("POST /v1/context", a.context)
	mux.HandleFunc("PUT /v1/tasks/{task_id}/state", a.putTask)
	mux.HandleFunc("GET /v1/tasks/{task_id}/state", a.getTask)
	mux.HandleFunc("DELETE /v1/tasks/{task_id}/state", a.deleteTask)
	mux.HandleFunc("GET /v1/retrievals/{id}", a.getRetrieval)
}

func tenantOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok || p.Tenant == "" {
		httpapi.WriteError(w, http.StatusUnauthorized, "unauthenticated", "no authenticated tenant", "Authorization")
		return "", false
	}
	return p.Tenant, true
}

func (a *API) search(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok {
		return
	}
	var req SearchRequest
	if !httpapi.DecodeJSON(w, r, maxRequestBytes, &req) {
		return
	}
	resp, err := a.r.Search(r.Context(), tenant, req)
	if err != nil {
		a.fail(w, r, "search", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

func (a *API) context(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok {
		return
	}
	var req ContextRequest
	if !httpapi.DecodeJSON(w, r, maxRequestBytes, &req) {
		return
	}
	resp, err := a.r.Context(r.Context(), tenant, req)
	if err != nil {
		a.fail(w, r, "context", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

func (a *API) taskStore(w http.ResponseWriter) bool {
	if a.tasks == nil {
		httpapi.WriteError(w, http.StatusServiceUnavailable, "unavailable", "working memory is not configured", "")
		return false
	}
	return true
}

func (a *API) putTask(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok || !a.taskStore(w) {
		return
	}
	var state json.RawMessage
	if !httpapi.DecodeJSON(w, r, int64(a.tasks.MaxBytes()), &state) {
		return
	}
	st, err := a.tasks.Put(r.Context(), tenant, r.PathValue("task_id"), state)
	if err != nil {
		a.fail(w, r, "put task state", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (a *API) getTask(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok || !a.taskStore(w) {
		return
	}
	st, err := a.tasks.Get(r.Context(), tenant, r.PathValue("task_id"))
	if err != nil {
		a.fail(w, r, "get task state", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (a *API) deleteTask(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok || !a.taskStore(w) {
		return
	}
	if err := a.tasks.Delete(r.Context(), tenant, r.PathValue("task_id")); err != nil {
		a.fail(w, r, "delete task state", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) getRetrieval(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantOf(w, r)
	if !ok {
		return
	}
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", "id must be a UUID", "id")
		return
	}
	rec, err := a.r.GetRetrieval(r.Context(), tenant, id)
	if err != nil {
		a.fail(w, r, "get retrieval", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rec)
}

// fail maps an error to its HTTP answer; unexpected errors are logged, not shown.
func (a *API) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var fe *memory.FieldError
	switch {
	case errors.As(err, &fe):
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", fe.Reason(), fe.Field)
	case errors.Is(err, ErrTaskNotFound):
		httpapi.WriteError(w, http.StatusNotFound, "not_found", "no state for this task (never set, deleted or expired)", "task_id")
	case errors.Is(err, memory.ErrNotFound):
		httpapi.WriteError(w, http.StatusNotFound, "not_found", "not found", "id")
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads the answer.
	default:
		a.logger.ErrorContext(r.Context(), what+" failed", "error", err)
		httpapi.WriteError(w, http.StatusInternalServerError, "internal", what+" failed", "")
	}
}
