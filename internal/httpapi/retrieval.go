package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// maxReadBody bounds search and context bodies (a query is at most 4000 bytes).
const maxReadBody = 64 << 10

// search serves POST /v1/search.
func (e *edge) search(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req retriever.SearchRequest
	if pr := decodeJSON(w, r, maxReadBody, &req); pr != nil {
		return pr
	}
	if err := checkSearch(req); err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", req.UserID); err != nil {
		return err
	}
	start := time.Now()
	resp, err := e.retriever.Search(r.Context(), p.Tenant, req)
	e.obs.Retrieval("search", time.Since(start), len(resp.Results), err)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, resp)
	return nil
}

// context serves POST /v1/context.
func (e *edge) context(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req retriever.ContextRequest
	if pr := decodeJSON(w, r, maxReadBody, &req); pr != nil {
		return pr
	}
	if err := checkContext(req); err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", req.UserID); err != nil {
		return err
	}
	start := time.Now()
	resp, err := e.retriever.Context(r.Context(), p.Tenant, req)
	e.obs.Retrieval("context", time.Since(start), len(resp.MemoryIDs), err)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, resp)
	return nil
}

// getRetrieval serves GET /v1/retrievals/{id}.
func (e *edge) getRetrieval(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return newProblem(http.StatusBadRequest, "invalid_field", "id must be a UUID", "id")
	}
	rec, err := e.retriever.GetRetrieval(r.Context(), p.Tenant, id)
	if err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", rec.UserID); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, rec)
	return nil
}

// taskOwner is the user a task route acts for: the user_id query parameter, or ""
// for a task of the tenant. A token limited to users may act only on its users' tasks:
// without a user_id, a tenant task could be any user's working memory.
func taskOwner(r *http.Request, p Principal) (string, error) {
	userID := r.URL.Query().Get("user_id")
	if err := memory.CheckIDs(memory.Field{Name: "user_id", Value: userID}); err != nil {
		return "", err
	}
	if err := forbidUser(p, "user_id", userID); err != nil {
		return "", err
	}
	return userID, nil
}

// putTask serves PUT /v1/tasks/{task_id}/state.
func (e *edge) putTask(w http.ResponseWriter, r *http.Request, p Principal) error {
	userID, err := taskOwner(r, p)
	if err != nil {
		return err
	}
	var state json.RawMessage
	if pr := decodeJSON(w, r, int64(e.tasks.MaxBytes()), &state); pr != nil {
		return pr
	}
	st, err := e.tasks.PutFor(r.Context(), p.Tenant, userID, r.PathValue("task_id"), state)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, st)
	return nil
}

// getTask serves GET /v1/tasks/{task_id}/state.
func (e *edge) getTask(w http.ResponseWriter, r *http.Request, p Principal) error {
	userID, err := taskOwner(r, p)
	if err != nil {
		return err
	}
	st, err := e.tasks.GetFor(r.Context(), p.Tenant, userID, r.PathValue("task_id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, st)
	return nil
}

// deleteTask serves DELETE /v1/tasks/{task_id}/state.
func (e *edge) deleteTask(w http.ResponseWriter, r *http.Request, p Principal) error {
	userID, err := taskOwner(r, p)
	if err != nil {
		return err
	}
	if err := e.tasks.DeleteFor(r.Context(), p.Tenant, userID, r.PathValue("task_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
