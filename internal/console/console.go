// Package console is engram's web console under /console/: the tenant's users and
// memories, a memory's versions, lineage and audit, the retrieval log, pending
// memories, dead letters and consolidation runs, with the manual operations.
//
// It is server-rendered (html/template over embedded files, no JavaScript, no
// network), mounted by the HTTP edge (internal/httpapi). Its actions call the same
// services as the API (lifecycle.Ops, lifecycle.Lifecycle, streams.DLQ), so they
// write the same versions and audit entries under the signed-in token's name.
//
// Security: a person signs in with a tenant API token, exchanged for a random
// session id held only in this process (a restart signs everyone out) and sent as an
// HttpOnly, SameSite=Strict cookie (Secure over TLS) that expires. A session keeps
// the token's hash and re-checks it on every request: it ends when the token is
// revoked or removed, and no later than the token expires. Every
// state-changing form carries the session's CSRF token. Every read names the
// session's tenant, so row-level security bounds the console as it bounds the API;
// dead letters, which are not in the database, are filtered on their tenant here.
// Logs name routes and errors, never memory content or queries.
package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
)

//go:embed templates/*.html static/*
var files embed.FS

// Prefix is where the console is mounted.
const Prefix = "/console"

// What the console needs of each service; engram's own types satisfy them.

// Memories is the manual operations on one memory (*lifecycle.Ops).
type Memories interface {
	Get(ctx context.Context, tenant string, id uuid.UUID) (memory.Detail, error)
	Correct(ctx context.Context, tenant string, id uuid.UUID, c lifecycle.Correction, actor string) (memory.Memory, error)
	Deprecate(ctx context.Context, tenant string, id uuid.UUID, reason, actor string) (memory.Memory, error)
	Rollback(ctx context.Context, tenant string, id uuid.UUID, version int, reason, actor string) (memory.Memory, error)
}

// Lifecycle is restore and hard deletion (*lifecycle.Lifecycle).
type Lifecycle interface {
	Restore(ctx context.Context, tenant string, id uuid.UUID, actor string) (memory.Memory, error)
	DeleteMemory(ctx context.Context, tenant string, id uuid.UUID, actor string) (lifecycle.MemoryDeletion, error)
}

// Retriever is the read path (*retriever.Retriever).
type Retriever interface {
	Search(ctx context.Context, tenant string, req retriever.SearchRequest) (retriever.SearchResponse, error)
	Context(ctx context.Context, tenant string, req retriever.ContextRequest) (retriever.ContextResponse, error)
	GetRetrieval(ctx context.Context, tenant string, id uuid.UUID) (retriever.Retrieval, error)
}

// DeadLetters is the DLQ (*streams.DLQ). It spans tenants: the console filters.
type DeadLetters interface {
	List(ctx context.Context, f streams.DLQFilter) ([]streams.DLQEntry, error)
	Get(ctx context.Context, id uint64) (streams.DLQEntry, error)
	Replay(ctx context.Context, f streams.DLQFilter) (streams.ReplayResult, error)
	Delete(ctx context.Context, id uint64) error
}

// Reader is the console's own reads (*memory.Store, memory/console.go), and the
// transaction its own audit entries are written in (dead-letter actions, which no
// service audits).
type Reader interface {
	InTx(ctx context.Context, tenant string, fn func(*memory.Tx) error) error
	ConsoleUsers(ctx context.Context, tenant string) ([]memory.UserCounts, error)
	ConsoleMemories(ctx context.Context, tenant string, f memory.MemoryFilter) ([]memory.Memory, error)
	ConsoleMemoriesByID(ctx context.Context, tenant string, ids []uuid.UUID) ([]memory.Memory, error)
	ConsoleDistilledFrom(ctx context.Context, tenant string, id uuid.UUID) ([]memory.Memory, error)
	ConsoleTurns(ctx context.Context, tenant string, ids []string) ([]memory.Turn, error)
	ConsoleAudit(ctx context.Context, tenant string, id uuid.UUID) ([]memory.AuditRecord, error)
	ConsoleRuns(ctx context.Context, tenant string, limit int) ([]memory.TenantRun, error)
}

// Authenticator finds the principal of an API token by its hash (httpapi.TokenHash),
// and when the token expires (*httpapi.Tokens). Sessions keep the hash and re-check
// it on every request, so they end when their token does.
type Authenticator interface {
	CheckHash(hash [32]byte) (httpapi.Principal, time.Time, error)
}

// The services engram runs satisfy the interfaces.
var (
	_ Memories      = (*lifecycle.Ops)(nil)
	_ Lifecycle     = (*lifecycle.Lifecycle)(nil)
	_ Retriever     = (*retriever.Retriever)(nil)
	_ DeadLetters   = (*streams.DLQ)(nil)
	_ Reader        = (*memory.Store)(nil)
	_ Authenticator = (*httpapi.Tokens)(nil)
)

// Config is what the console serves. Every service is required.
type Config struct {
	Tokens    Authenticator
	Reader    Reader
	Memories  Memories
	Lifecycle Lifecycle
	Retriever Retriever
	DLQ       DeadLetters
	// SessionTTL is how long a sign-in lasts. Default 8h.
	SessionTTL time.Duration
	// Logger receives failures (routes and errors, never content); nil discards.
	Logger *slog.Logger
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Console is the http.Handler of /console/.
type Console struct {
	cfg      Config
	log      *slog.Logger
	pages    map[string]*template.Template
	sessions *sessions
	mux      *http.ServeMux
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	switch {
	case cfg.Tokens == nil:
		return nil, errors.New("console: Tokens is required")
	case cfg.Reader == nil || cfg.Memories == nil || cfg.Lifecycle == nil || cfg.Retriever == nil || cfg.DLQ == nil:
		return nil, errors.New("console: Reader, Memories, Lifecycle, Retriever and DLQ are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 8 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, log: log.With("component", "console"), pages: map[string]*template.Template{},
		sessions: newSessions(cfg.SessionTTL, cfg.Now), mux: http.NewServeMux()}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: listing templates: %w", err)
	}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t, err := template.New("").Funcs(templateFuncs()).ParseFS(files, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: parsing %s: %w", n, err)
		}
		c.pages[n[len("templates/"):]] = t
	}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	static, _ := fs.Sub(files, "static")
	c.mux.Handle("GET "+Prefix+"/static/", http.StripPrefix(Prefix+"/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET "+Prefix+"/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/users", http.StatusSeeOther)
	})
	c.mux.HandleFunc("GET "+Prefix+"/login", c.loginPage)
	c.mux.HandleFunc("POST "+Prefix+"/login", c.login)
	c.handle("POST /logout", c.logout)

	c.handle("GET /users", c.users)
	c.handle("GET /memories", c.memories)
	c.handle("GET /search", c.search)
	c.handle("GET /context", c.contextCall)
	c.handle("GET /memories/{id}", c.memory)
	c.handle("POST /memories/{id}/correct", c.correct)
	c.handle("POST /memories/{id}/deprecate", c.deprecate)
	c.handle("POST /memories/{id}/rollback", c.rollback)
	c.handle("POST /memories/{id}/restore", c.restore)
	c.handle("POST /memories/{id}/delete", c.deleteMemory)
	c.handle("GET /retrievals", c.retrieval)
	c.handle("GET /retrievals/{id}", c.retrieval)
	c.handle("GET /pending", c.pending)
	c.handle("POST /pending/{id}/confirm", c.confirmPending)
	c.handle("POST /pending/{id}/reject", c.rejectPending)
	c.handle("GET /dlq", c.dlq)
	c.handle("GET /dlq/{id}", c.dlqEntry)
	c.handle("POST /dlq/{id}/replay", c.dlqReplay)
	c.handle("POST /dlq/purge", c.dlqPurge)
	c.handle("GET /runs", c.runs)
	c.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error.html", nil, view{Title: "Not found", Message: "No such page."})
	})
}

// ServeHTTP serves the console with headers that keep its pages to themselves: no
// scripts, no framing, no caching, no referrer.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "+
		"frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// page is a console handler for a signed-in session.
type page func(w http.ResponseWriter, r *http.Request, s session) error

// handle registers a page behind the session check (and, for POST, the CSRF check).
func (c *Console) handle(route string, p page) {
	method, path, _ := cutSpace(route)
	c.mux.HandleFunc(method+" "+Prefix+path, func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		if !ok {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
				return
			}
			c.render(w, r, http.StatusUnauthorized, "error.html", nil, view{Title: "Signed out",
				Message: "Your session has ended; sign in again."})
			return
		}
		if r.Method != http.MethodGet {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			// Parsed here, so that a form too large or unreadable is said to be, not
			// taken for one without its CSRF token.
			if err := r.ParseForm(); err != nil {
				c.formError(w, r, &s, err)
				return
			}
		}
		if r.Method != http.MethodGet && !validCSRF(s.csrf, r.PostFormValue("csrf")) {
			c.render(w, r, http.StatusForbidden, "error.html", &s, view{Title: "Refused",
				Message: "The form's CSRF token is missing or stale; reload the page and try again."})
			return
		}
		if err := p(w, r, s); err != nil {
			c.fail(w, r, &s, err)
		}
	})
}

// maxForm bounds a posted form: a correction is at most 8000 characters.
const maxForm = 256 << 10

// formError answers a form that could not be parsed: 413 when it is too large, 400
// otherwise.
func (c *Console) formError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, msg := http.StatusBadRequest, "form: cannot be read."
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("form: is larger than the limit of %d bytes.", mbe.Limit)
	}
	c.render(w, r, status, "error.html", s, view{Title: http.StatusText(status), Message: msg})
}

func cutSpace(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}

// fail answers an error as a page. Only the route and the error reach the log; the
// error texts of engram's services name ids and fields, not content.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, msg := http.StatusInternalServerError, "Something went wrong; the server log has the details."
	var fe *memory.FieldError
	switch {
	case errors.As(err, &fe):
		status, msg = http.StatusBadRequest, fe.Error()
	case errors.Is(err, memory.ErrNotFound), errors.Is(err, errNotFound):
		status, msg = http.StatusNotFound, "Not found."
	case errors.Is(err, memory.ErrVersionMismatch), errors.Is(err, lifecycle.ErrConflict):
		status, msg = http.StatusConflict, "The memory changed meanwhile; reload and try again."
	case errors.Is(err, lifecycle.ErrNotArchived):
		status, msg = http.StatusConflict, "The memory is not archived."
	case errors.Is(err, memory.ErrInvalid):
		status, msg = http.StatusBadRequest, err.Error()
	}
	if status == http.StatusInternalServerError {
		c.log.Error("console request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	c.render(w, r, status, "error.html", s, view{Title: http.StatusText(status), Message: msg})
}

var errNotFound = errors.New("not found")

// view is what every page template gets; Data is the page's own.
type view struct {
	Title   string
	Message string
	Flash   string
	Tenant  string
	Actor   string
	CSRF    string
	Nav     string
	Data    any
}

// render executes a page into a buffer first, so a template failure is a clean 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, s *session, v view) {
	t, ok := c.pages[name]
	if !ok {
		c.log.Error("console: no such template", "template", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if s != nil {
		v.Tenant, v.Actor, v.CSRF = s.tenant, s.actor, s.csrf
	}
	if v.Flash == "" {
		v.Flash = flash(r.URL.Query().Get("done")) // fixed texts: a link cannot put words on a page
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.log.Error("console: rendering", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// flash is the message an action's redirect may show (?done=...).
func flash(done string) string {
	switch done {
	case "corrected":
		return "Corrected: a new version was written."
	case "deprecated":
		return "Deprecated: a new version was written."
	case "rolledback":
		return "Rolled back: a new version was written."
	case "restored":
		return "Restored: a new version was written."
	case "deleted":
		return "The memory was deleted."
	case "confirmed":
		return "The pending memory was confirmed."
	case "rejected":
		return "The pending memory was rejected."
	case "replayed":
		return "The dead letter was replayed."
	case "purged":
		return "The dead letters were purged."
	}
	return ""
}
