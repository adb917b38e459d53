package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Config is what the edge serves. A nil service makes its routes answer 503.
type Config struct {
	// Tokens authenticates every /v1/ request. nil: no token is valid.
	Tokens    *Tokens
	Turns     Turns
	Memories  Memories
	Lifecycle Lifecycle
	Retriever Retriever
	Tasks     Tasks
	// Health is what GET /readyz checks (GET /healthz only says the process is up).
	Health Health
	// Console serves /console/ (internal/console); nil answers 503 there.
	Console http.Handler
	// MCP builds the handler of /mcp (internal/mcpserver) over the edge itself, so that
	// its tools call the routes in-process; nil answers 503 there.
	MCP func(api http.Handler) http.Handler
	// Metrics serves GET /metrics (Prometheus exposition); nil: the route answers 503.
	Metrics http.Handler
	// Observer is told every request's route, status and duration, ingest outcomes and
	// retrieval latencies; nil observes nothing.
	Observer Observer
	// Logger receives failed requests (never their content); nil discards.
	Logger *slog.Logger
	// MaxImportBytes bounds an import body. Default 1 GiB.
	MaxImportBytes int64
	// MaxBodyBytesInFlight bounds the turns request bodies held at once across all
	// requests; beyond it POST /v1/turns answers 503 with Retry-After. Default: the
	// turns service's MaxBodyBytes (one largest body, or many small ones).
	MaxBodyBytesInFlight int64
}

// edge is the HTTP handler New builds.
type edge struct {
	turns     Turns
	memories  Memories
	lifecycle Lifecycle
	retriever Retriever
	tasks     Tasks
	healthy   Health
	console   http.Handler
	metrics   http.Handler
	mcp       http.Handler
	obs       Observer
	log       *slog.Logger
	maxImport int64
	bodies    *bodyBudget

	mux     *http.ServeMux
	noRoute http.Handler
}

// New builds the edge: the routes of routes.go, /v1/ behind bearer-token
// authentication, and JSON answers for unknown routes (404) and wrong methods (405).
func New(cfg Config) http.Handler {
	e := &edge{turns: cfg.Turns, memories: cfg.Memories, lifecycle: cfg.Lifecycle, retriever: cfg.Retriever,
		tasks: cfg.Tasks, healthy: cfg.Health, console: cfg.Console, metrics: cfg.Metrics, obs: cfg.Observer,
		log: cfg.Logger, maxImport: cfg.MaxImportBytes, mux: http.NewServeMux()}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.obs == nil {
		e.obs = noObserver{}
	}
	e.log = e.log.With("component", "http")
	if e.maxImport <= 0 {
		e.maxImport = 1 << 30
	}
	if cfg.MCP != nil {
		e.mcp = cfg.MCP(e)
	}
	inFlight := cfg.MaxBodyBytesInFlight
	if inFlight <= 0 && cfg.Turns != nil {
		inFlight = cfg.Turns.MaxBodyBytes()
	}
	e.bodies = newBodyBudget(max(inFlight, 1<<20))
	tokens := cfg.Tokens
	if tokens == nil {
		tokens = &Tokens{}
	}
	for _, rt := range e.routes() {
		h := e.serve(rt)
		if !rt.public {
			h = tokens.Middleware(h)
		}
		h = e.observed(rt, h)
		pattern := rt.pattern
		if rt.method != "" {
			pattern = rt.method + " " + pattern
		}
		e.mux.Handle(pattern, h)
	}
	// Under /v1/ even a wrong route needs a token, so the table is not probed anonymously.
	noRoute := http.HandlerFunc(e.unrouted)
	e.noRoute = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			tokens.Middleware(noRoute).ServeHTTP(w, r)
			return
		}
		noRoute(w, r)
	})
	return e
}

func (e *edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := e.mux.Handler(r); pattern == "" {
		e.noRoute.ServeHTTP(w, r)
		return
	}
	e.mux.ServeHTTP(w, r)
}

// serve runs a route's handler: it checks the principal (on token routes) and the
// route's service, and answers the handler's error.
func (e *edge) serve(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Principal
		if !rt.public {
			var ok bool
			p, ok = PrincipalFrom(r.Context())
			if !ok || p.Tenant == "" {
				// The middleware should have refused the request; never act without a tenant.
				unauthorized(w, "no authenticated tenant")
				return
			}
		}
		if !e.has(rt.needs) {
			e.fail(w, r, rt.missing, newProblem(http.StatusServiceUnavailable, "unavailable", rt.needs.String()+" is not configured", ""))
			return
		}
		if err := rt.handle(w, r, p); err != nil {
			e.fail(w, r, rt.missing, err)
		}
	})
}

func (e *edge) has(s service) bool {
	switch s {
	case turnsService:
		return e.turns != nil
	case memoriesService:
		return e.memories != nil
	case lifecycleService:
		return e.lifecycle != nil
	case retrieverService:
		return e.retriever != nil
	case tasksService:
		return e.tasks != nil
	case healthService:
		return e.healthy != nil
	case metricsService:
		return e.metrics != nil
	case consoleService:
		return e.console != nil
	case mcpService:
		return e.mcp != nil
	}
	return true
}

// unrouted answers a request no route matches, as the mux would (404, or 405 with
// Allow when the path exists under other methods), in engram's JSON error shape.
func (e *edge) unrouted(w http.ResponseWriter, r *http.Request) {
	h, _ := e.mux.Handler(r)
	rec := &statusRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		allow := rec.header.Get("Allow")
		p := newProblem(http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow), "")
		p.header = http.Header{"Allow": []string{allow}}
		e.fail(w, r, Error{}, p)
		return
	}
	e.fail(w, r, Error{}, newProblem(http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path, ""))
}

// statusRecorder keeps the status and headers of the mux's own 404/405 answer and
// drops its plain-text body.
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header { return s.header }

func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}

// serveConsole hands a request under /console/ to the console, which answers it
// (in HTML) whatever the outcome.
func (e *edge) serveConsole(w http.ResponseWriter, r *http.Request, _ Principal) error {
	e.console.ServeHTTP(w, r)
	return nil
}

// serveMCP hands an authenticated request on /mcp to the MCP server, which answers
// it in the protocol's own terms.
func (e *edge) serveMCP(w http.ResponseWriter, r *http.Request, _ Principal) error {
	e.mcp.ServeHTTP(w, r)
	return nil
}

// live answers GET /healthz: the process is up and serving. It checks nothing else,
// so a liveness probe never restarts a node because a dependency is down.
func (e *edge) live(w http.ResponseWriter, _ *http.Request, _ Principal) error {
	WriteJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	return nil
}

// ready answers GET /readyz: 503 "unavailable" when a required dependency is down;
// otherwise 200, "ok" when every check says ok and "degraded" when an optional one
// (a model endpoint) does not; each check comes with its reason.
func (e *edge) ready(w http.ResponseWriter, r *http.Request, _ Principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	checks, ok := e.healthy.Check(ctx)
	status, code := "ok", http.StatusOK
	for _, v := range checks {
		if v != "ok" {
			status = "degraded"
		}
	}
	if !ok {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	WriteJSON(w, code, map[string]any{"status": status, "checks": checks})
	return nil
}

// serveMetrics answers GET /metrics with the configured exposition handler.
func (e *edge) serveMetrics(w http.ResponseWriter, r *http.Request, _ Principal) error {
	e.metrics.ServeHTTP(w, r)
	return nil
}
