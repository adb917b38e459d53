package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/engramhq/engram/ingest"
)

// Observer receives what the edge measures, for metrics. It is given route patterns,
// statuses, durations and counts: never a tenant's content or a user id.
type Observer interface {
	// Request is one answered request; route is the table's "METHOD pattern".
	Request(route string, status int, took time.Duration)
	// Turns is the outcome of one POST /v1/turns body that was decoded.
	Turns(res ingest.TurnsResult)
	// Retrieval is one search or context call (op "search" or "context") that reached
	// the retriever; results is the number of memories returned.
	Retrieval(op string, took time.Duration, results int, err error)
}

// noObserver is the Observer of an edge configured without one.
type noObserver struct{}

func (noObserver) Request(string, int, time.Duration)          {}
func (noObserver) Turns(ingest.TurnsResult)                    {}
func (noObserver) Retrieval(string, time.Duration, int, error) {}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observed wraps a route's handler to report its status and duration.
func (e *edge) observed(rt route, h http.Handler) http.Handler {
	name := strings.TrimSpace(rt.method + " " + rt.pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		e.obs.Request(name, sw.status, time.Since(start))
	})
}
