package httpapi

import (
	"fmt"
	"net/http"

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
}

func newBodyBudget(total int64) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(total), total: total}
}

// reserve takes room for r's body, at most limit bytes; release gives it back once the
// body (and what was decoded from it) is no longer needed.
func (b *bodyBudget) reserve(r *http.Request, limit int64) (release func(), err error) {
	n := limit
	if r.ContentLength >= 0 && r.ContentLength < limit {
		n = r.ContentLength
	}
	n = min(max(n, 1), b.total) // a body as large as the limit always fits alone
	if !b.sem.TryAcquire(n) {
		p := newProblem(http.StatusServiceUnavailable, ingest.CodeUnavailable,
			fmt.Sprintf("too many large request bodies in flight (limit %d bytes); retry later", b.total), "")
		p.header = retryAfter()
		return func() {}, p
	}
	return func() { b.sem.Release(n) }, nil
}
