package httpapi

import (
	"math"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// maxOpsBody bounds request bodies of the memory operations.
const maxOpsBody = 64 << 10

// memoryID parses the {id} of /v1/memories/{id}.
func memoryID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, newProblem(http.StatusBadRequest, "invalid_field", "id must be a UUID", "id")
	}
	return id, nil
}

// userID parses the {user_id} of /v1/users/{user_id}.
func userID(r *http.Request) (string, error) {
	user := r.PathValue("user_id")
	if err := streams.ValidateID("user_id", user); err != nil {
		return "", newProblem(http.StatusBadRequest, "invalid_field", err.Error(), "user_id")
	}
	return user, nil
}

// asOfResponse is the answer to ?as_of.
type asOfResponse struct {
	MemoryID uuid.UUID      `json:"memory_id"`
	AsOf     time.Time      `json:"as_of"`
	Version  memory.Version `json:"version"`
}

// historyResponse lists a memory's versions.
type historyResponse struct {
	MemoryID uuid.UUID        `json:"memory_id"`
	Versions []memory.Version `json:"versions"`
}

// memoryResponse wraps a memory after a change.
type memoryResponse struct {
	Memory memory.Memory `json:"memory"`
}

// getMemory serves GET /v1/memories/{id}: the memory with its versions and lineage,
// or with ?as_of=RFC3339 the version then believed.
func (e *edge) getMemory(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	if raw := r.URL.Query().Get("as_of"); raw != "" || r.URL.Query().Has("as_of") {
		at, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return newProblem(http.StatusBadRequest, "invalid_field", "as_of must be an RFC 3339 time", "as_of")
		}
		v, err := e.memories.AsOf(r.Context(), p.Tenant, id, at)
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, asOfResponse{MemoryID: id, AsOf: at, Version: v})
		return nil
	}
	d, err := e.memories.Get(r.Context(), p.Tenant, id)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, d)
	return nil
}

// history serves GET /v1/memories/{id}/history: versions, oldest first.
func (e *edge) history(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	vs, err := e.memories.History(r.Context(), p.Tenant, id)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, historyResponse{MemoryID: id, Versions: vs})
	return nil
}

type correctBody struct {
	Content       *string  `json:"content"`
	Category      *string  `json:"category"`
	Importance    *float64 `json:"importance"`
	Reason        string   `json:"reason"`
	ExpectVersion int      `json:"expect_version"`
}

// correct serves PATCH /v1/memories/{id}.
func (e *edge) correct(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	var b correctBody
	if pr := decodeJSON(w, r, maxOpsBody, &b); pr != nil {
		return pr
	}
	if b.Content == nil {
		return newProblem(http.StatusBadRequest, "invalid_field", "content is required", "content")
	}
	cat := ""
	if b.Category != nil {
		cat = *b.Category
	}
	if err := memory.CheckTexts(memory.Field{Name: "content", Value: *b.Content}, memory.Field{Name: "category", Value: cat},
		memory.Field{Name: "reason", Value: b.Reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	c := lifecycle.Correction{Content: *b.Content, Importance: b.Importance, Reason: b.Reason, ExpectVersion: b.ExpectVersion}
	if b.Category != nil {
		cat := memory.Category(*b.Category)
		c.Category = &cat
	}
	m, err := e.memories.Correct(r.Context(), p.Tenant, id, c, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
	return nil
}

type deprecateBody struct {
	Reason string `json:"reason"`
}

// deprecate serves POST /v1/memories/{id}/deprecate; the body is optional.
func (e *edge) deprecate(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	var b deprecateBody
	if pr := decodeOptionalJSON(w, r, maxOpsBody, &b); pr != nil {
		return pr
	}
	if err := memory.CheckTexts(memory.Field{Name: "reason", Value: b.Reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	m, err := e.memories.Deprecate(r.Context(), p.Tenant, id, b.Reason, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
	return nil
}

type rollbackBody struct {
	Version *float64 `json:"version"`
	Reason  string   `json:"reason"`
}

// rollback serves POST /v1/memories/{id}/rollback.
func (e *edge) rollback(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	var b rollbackBody
	if pr := decodeJSON(w, r, maxOpsBody, &b); pr != nil {
		return pr
	}
	if b.Version == nil || *b.Version != math.Trunc(*b.Version) || *b.Version < 1 || *b.Version > math.MaxInt32 {
		return newProblem(http.StatusBadRequest, "invalid_field", "version must be a version number (1 or more)", "version")
	}
	if err := memory.CheckTexts(memory.Field{Name: "reason", Value: b.Reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	m, err := e.memories.Rollback(r.Context(), p.Tenant, id, int(*b.Version), b.Reason, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
	return nil
}

// deleteMemory serves DELETE /v1/memories/{id}: hard deletion.
func (e *edge) deleteMemory(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	d, err := e.lifecycle.DeleteMemory(r.Context(), p.Tenant, id, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, d)
	return nil
}

// restore serves POST /v1/memories/{id}/restore: archived → active.
func (e *edge) restore(w http.ResponseWriter, r *http.Request, p Principal) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if err := e.forbidMemory(r, p, id); err != nil {
		return err
	}
	m, err := e.lifecycle.Restore(r.Context(), p.Tenant, id, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
	return nil
}

// deleteUser serves DELETE /v1/users/{user_id}: everything of the user.
func (e *edge) deleteUser(w http.ResponseWriter, r *http.Request, p Principal) error {
	user, err := userID(r)
	if err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", user); err != nil {
		return err
	}
	d, err := e.lifecycle.DeleteUser(r.Context(), p.Tenant, user, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, d)
	return nil
}

// export serves GET /v1/users/{user_id}/export as JSON Lines. Once the first byte
// is out the status cannot change: a failure then ends the body early, without the
// closing "end" line, which is how a reader (and Import) tells a cut export.
func (e *edge) export(w http.ResponseWriter, r *http.Request, p Principal) error {
	user, err := userID(r)
	if err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", user); err != nil {
		return err
	}
	cw := &startWriter{w: w}
	if _, err := e.lifecycle.Export(r.Context(), p.Tenant, user, cw, actorOf(p)); err != nil {
		if !cw.started {
			return err
		}
		e.log.ErrorContext(r.Context(), "export failed midway", "user", user, "err", err)
	}
	return nil
}

// startWriter sets the export's headers on its first write, so that an error before
// any output can still be answered with a status.
type startWriter struct {
	w       http.ResponseWriter
	started bool
}

func (s *startWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "application/x-ndjson")
		s.w.Header().Set("Content-Disposition", `attachment; filename="engram-export.jsonl"`)
		s.w.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

// importUser serves POST /v1/users/{user_id}/import: the body is an export.
func (e *edge) importUser(w http.ResponseWriter, r *http.Request, p Principal) error {
	user, err := userID(r)
	if err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", user); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, e.maxImport)
	rep, err := e.lifecycle.Import(r.Context(), p.Tenant, user, body, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, rep)
	return nil
}
