package lifecycle

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/google/uuid"
)

// OpsAPI serves Ops over HTTP. Requests must carry an httpapi.Principal (the Tokens
// middleware sets it); the tenant comes from it, and row-level security makes other
// tenants' memories answer 404.
type OpsAPI struct {
	ops *Ops
	log *slog.Logger
}

// NewOpsAPI makes the HTTP operations API. emb re-embeds corrected content (nil
// allowed); a nil logger discards.
func NewOpsAPI(store *memory.Store, emb Embedder, logger *slog.Logger) *OpsAPI {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &OpsAPI{ops: NewOps(store, emb), log: logger.With("component", "ops-api")}
}

// maxOpsBody bounds request bodies of the operations API.
const maxOpsBody = 64 << 10

// Register adds the routes to mux:
//
//	GET   /v1/memories/{id}             memory + versions + lineage; ?as_of=RFC3339 → the version then believed
//	GET   /v1/memories/{id}/history     versions, oldest first
//	PATCH /v1/memories/{id}             {content, category?, importance?, reason?, expect_version?} → correct
//	POST  /v1/memories/{id}/deprecate   {reason?}
//	POST  /v1/memories/{id}/rollback    {version, reason?}
func (a *OpsAPI) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/memories/{id}", a.get)
	mux.HandleFunc("GET /v1/memories/{id}/history", a.history)
	mux.HandleFunc("PATCH /v1/memories/{id}", a.correct)
	mux.HandleFunc("POST /v1/memories/{id}/deprecate", a.deprecate)
	mux.HandleFunc("POST /v1/memories/{id}/rollback", a.rollback)
}

// memoryRequest authenticates a request on /v1/memories/{id} and parses its id.
func memoryRequest(w http.ResponseWriter, r *http.Request) (httpapi.Principal, uuid.UUID, bool) {
	p, ok := principal(w, r)
	if !ok {
		return p, uuid.Nil, false
	}
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", "id must be a UUID", "id")
		return p, uuid.Nil, false
	}
	return p, id, true
}

func actorOf(p httpapi.Principal) string {
	if p.Name == "" {
		return "api"
	}
	return "api:" + p.Name
}

// writeFailure maps an error of the memory operations (ops and lifecycle) to a
// response; the error kinds are disjoint, so both APIs share one mapping.
func writeFailure(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var fe *memory.FieldError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &fe):
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", fe.Reason(), fe.Field)
	case errors.Is(err, memory.ErrNotFound):
		httpapi.WriteError(w, http.StatusNotFound, "not_found", "no such memory", "")
	case errors.Is(err, memory.ErrVersionMismatch):
		httpapi.WriteError(w, http.StatusConflict, "version_mismatch", err.Error(), "expect_version")
	case errors.Is(err, errConflict):
		httpapi.WriteError(w, http.StatusConflict, "conflict", err.Error(), "")
	case errors.Is(err, ErrNotArchived):
		httpapi.WriteError(w, http.StatusConflict, "not_archived", err.Error(), "")
	case errors.As(err, &mbe):
		httpapi.WriteError(w, http.StatusRequestEntityTooLarge, "too_large", err.Error(), "")
	case errors.Is(err, ErrBadExport), errors.Is(err, memory.ErrInvalid):
		httpapi.WriteError(w, http.StatusBadRequest, "invalid", err.Error(), "")
	case r.Context().Err() != nil:
		// The client went away; nobody reads this.
		httpapi.WriteError(w, http.StatusServiceUnavailable, "cancelled", "request cancelled", "")
	default:
		log.Error("memory operation failed", "method", r.Method, "path", r.URL.Path, "err", err)
		httpapi.WriteError(w, http.StatusInternalServerError, "internal", "internal error", "")
	}
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

func (a *OpsAPI) get(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	if raw := r.URL.Query().Get("as_of"); raw != "" || r.URL.Query().Has("as_of") {
		at, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", "as_of must be an RFC 3339 time", "as_of")
			return
		}
		v, err := a.ops.AsOf(r.Context(), p.Tenant, id, at)
		if err != nil {
			writeFailure(w, r, a.log, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, asOfResponse{MemoryID: id, AsOf: at, Version: v})
		return
	}
	d, err := a.ops.Get(r.Context(), p.Tenant, id)
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
}

func (a *OpsAPI) history(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	vs, err := a.ops.History(r.Context(), p.Tenant, id)
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, historyResponse{MemoryID: id, Versions: vs})
}

type correctBody struct {
	Content       *string  `json:"content"`
	Category      *string  `json:"category"`
	Importance    *float64 `json:"importance"`
	Reason        string   `json:"reason"`
	ExpectVersion int      `json:"expect_version"`
}

func (a *OpsAPI) correct(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	var b correctBody
	if !httpapi.DecodeJSON(w, r, maxOpsBody, &b) {
		return
	}
	if b.Content == nil {
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", "content is required", "content")
		return
	}
	c := Correction{Content: *b.Content, Importance: b.Importance, Reason: b.Reason, ExpectVersion: b.ExpectVersion}
	if b.Category != nil {
		cat := memory.Category(*b.Category)
		c.Category = &cat
	}
	m, err := a.ops.Correct(r.Context(), p.Tenant, id, c, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
}

type deprecateBody struct {
	Reason string `json:"reason"`
}

func (a *OpsAPI) deprecate(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	var b deprecateBody
	if r.ContentLength != 0 && !httpapi.DecodeJSON(w, r, maxOpsBody, &b) {
		return
	}
	m, err := a.ops.Deprecate(r.Context(), p.Tenant, id, b.Reason, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
}

type rollbackBody struct {
	Version *float64 `json:"version"`
	Reason  string   `json:"reason"`
}

func (a *OpsAPI) rollback(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	var b rollbackBody
	if !httpapi.DecodeJSON(w, r, maxOpsBody, &b) {
		return
	}
	if b.Version == nil || *b.Version != math.Trunc(*b.Version) || *b.Version < 1 || *b.Version > math.MaxInt32 {
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", "version must be a version number (1 or more)", "version")
		return
	}
	m, err := a.ops.Rollback(r.Context(), p.Tenant, id, int(*b.Version), b.Reason, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
}
