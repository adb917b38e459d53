package lifecycle

import (
	"log/slog"
	"net/http"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
)

// LifecycleAPI serves Lifecycle over HTTP. Requests must carry an httpapi.Principal
// (the Tokens middleware sets it); the tenant comes from it, never from the request,
// and row-level security makes other tenants' memories answer 404.
type LifecycleAPI struct {
	lc  *Lifecycle
	log *slog.Logger
	// MaxImportBytes bounds an import body. Default 1 GiB.
	MaxImportBytes int64
}

// NewLifecycleAPI makes the HTTP API; a nil logger discards.
func NewLifecycleAPI(lc *Lifecycle, logger *slog.Logger) *LifecycleAPI {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &LifecycleAPI{lc: lc, log: logger.With("component", "lifecycle-api"), MaxImportBytes: 1 << 30}
}

// Register adds the routes to mux:
//
//	DELETE /v1/memories/{id}               hard delete → MemoryDeletion
//	POST   /v1/memories/{id}/restore       archived → active → {"memory": …}; 409 when not archived
//	DELETE /v1/users/{user_id}             delete everything of the user → UserDeletion
//	GET    /v1/users/{user_id}/export      JSON Lines (application/x-ndjson), see ExportRecord
//	POST   /v1/users/{user_id}/import      body: an export → ImportReport (idempotent)
func (a *LifecycleAPI) Register(mux *http.ServeMux) {
	mux.HandleFunc("DELETE /v1/memories/{id}", a.deleteMemory)
	mux.HandleFunc("POST /v1/memories/{id}/restore", a.restore)
	mux.HandleFunc("DELETE /v1/users/{user_id}", a.deleteUser)
	mux.HandleFunc("GET /v1/users/{user_id}/export", a.export)
	mux.HandleFunc("POST /v1/users/{user_id}/import", a.importUser)
}

func principal(w http.ResponseWriter, r *http.Request) (httpapi.Principal, bool) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok || p.Tenant == "" {
		httpapi.WriteError(w, http.StatusUnauthorized, "unauthenticated", "no authenticated tenant", "Authorization")
		return p, false
	}
	return p, true
}

func (a *LifecycleAPI) userRequest(w http.ResponseWriter, r *http.Request) (httpapi.Principal, string, bool) {
	p, ok := principal(w, r)
	if !ok {
		return p, "", false
	}
	user := r.PathValue("user_id")
	if err := streams.ValidateID("user_id", user); err != nil {
		httpapi.WriteError(w, http.StatusBadRequest, "invalid_field", err.Error(), "user_id")
		return p, "", false
	}
	return p, user, true
}

func (a *LifecycleAPI) deleteMemory(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	d, err := a.lc.DeleteMemory(r.Context(), p.Tenant, id, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
}

func (a *LifecycleAPI) restore(w http.ResponseWriter, r *http.Request) {
	p, id, ok := memoryRequest(w, r)
	if !ok {
		return
	}
	m, err := a.lc.Restore(r.Context(), p.Tenant, id, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, memoryResponse{Memory: m})
}

func (a *LifecycleAPI) deleteUser(w http.ResponseWriter, r *http.Request) {
	p, user, ok := a.userRequest(w, r)
	if !ok {
		return
	}
	d, err := a.lc.DeleteUser(r.Context(), p.Tenant, user, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
}

// export streams the JSON Lines. Once the first byte is out the status cannot change:
// a failure then ends the body early, without the closing "end" line, which is how
// a reader (and Import) tells a cut export.
func (a *LifecycleAPI) export(w http.ResponseWriter, r *http.Request) {
	p, user, ok := a.userRequest(w, r)
	if !ok {
		return
	}
	cw := &startWriter{w: w}
	if _, err := a.lc.Export(r.Context(), p.Tenant, user, cw, actorOf(p)); err != nil {
		if !cw.started {
			writeFailure(w, r, a.log, err)
			return
		}
		a.log.Error("export failed midway", "user", user, "err", err)
	}
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

func (a *LifecycleAPI) importUser(w http.ResponseWriter, r *http.Request) {
	p, user, ok := a.userRequest(w, r)
	if !ok {
		return
	}
	body := http.MaxBytesReader(w, r.Body, a.MaxImportBytes)
	rep, err := a.lc.Import(r.Context(), p.Tenant, user, body, actorOf(p))
	if err != nil {
		writeFailure(w, r, a.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
}
