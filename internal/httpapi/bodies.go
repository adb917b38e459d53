package httpapi

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/engramhq/engram/ingest"
)

// bodyBudget bounds the bytes of large request bodies held at once across every
// request: each POST /v1/turns reserves its Content-Length (its whole limit when the
// length is unknown) before reading, and a request that does not fit is answered 503
// with Retry-After at once instead of being buffered. Without it four concurrent 32 MB
// batches pushed the API to 574 MB.
type bodyBudget struct {
	sem   *semaphore.Weighted
	total int64
	held  atomic.Int64 // what reservations hold now (the semaphore does not say)
}

func newBodyBudget(total int64) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(total), total: total}
}

// reservation is the room one request body holds in a bodyBudget.
type reservation struct {
	b *bodyBudget
	n int64
}

// reserve takes room for r's body, at most limit bytes; release gives it back once the
// body (and what was decoded from it) is no longer needed.
func (b *bodyBudget) reserve(r *http.Request, limit int64) (*reservation, error) {
	n := limit
	if r.ContentLength >= 0 && r.ContentLength < limit {
		n = r.ContentLength
	}
	n = min(max(n, 1), b.total) // a body as large as the limit always fits alone
	if !b.sem.TryAcquire(n) {
		p := newProblem(http.StatusServiceUnavailable, ingest.CodeUnavailable,
			fmt.Sprintf("too many large request bodies in flight (limit %d bytes); retry later", b.total), "")
		p.header = retryAfter()
		return &reservation{}, p
	}
	b.held.Add(n)
	return &reservation{b: b, n: n}, nil
}

// keep gives back all but n bytes of the reservation: a body of unknown length
// reserved the whole limit and turned out to be n bytes long.
func (r *reservation) keep(n int64) {
	n = max(n, 1)
	if r.b == nil || n >= r.n {
		return
	}
	r.b.sem.Release(r.n - n)
	r.b.held.Add(n - r.n)
	r.n = n
}

// release gives the whole reservation back; it may be called more than once.
func (r *reservation) release() {
	if r.b != nil {
		r.b.sem.Release(r.n)
		r.b.held.Add(-r.n)
		r.b = nil
	}
}
