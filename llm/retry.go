package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Defaults shared by the chat client and the OpenAI embedder.
const (
	defaultTimeout        = 60 * time.Second
	defaultMaxRetries     = 4
	defaultInitialBackoff = 500 * time.Millisecond
	defaultMaxBackoff     = 30 * time.Second
	// defaultMaxRetryAfter caps how long a server's Retry-After is obeyed within one call; a
	// longer request ends the call with a retryable error so the caller can reschedule the work
	// instead of holding it.
	defaultMaxRetryAfter = 2 * time.Minute
)

// retryPolicy is the resolved retry configuration of one client.
type retryPolicy struct {
	timeout        time.Duration // per attempt
	maxRetries     int
	initialBackoff time.Duration
	maxBackoff     time.Duration
	maxRetryAfter  time.Duration
}

func newRetryPolicy(timeout time.Duration, maxRetries int, initial, maxB, maxRetryAfter time.Duration) (retryPolicy, error) {
	p := retryPolicy{timeout, maxRetries, initial, maxB, maxRetryAfter}
	switch {
	case p.timeout < 0:
		return p, errors.New("timeout must not be negative")
	case p.initialBackoff < 0:
		return p, errors.New("initial backoff must not be negative")
	case p.maxBackoff < 0:
		return p, errors.New("max backoff must not be negative")
	case p.maxRetryAfter < 0:
		return p, errors.New("max retry-after must not be negative")
	}
	if p.timeout == 0 {
		p.timeout = defaultTimeout
	}
	switch {
	case p.maxRetries == 0:
		p.maxRetries = defaultMaxRetries
	case p.maxRetries < 0:
		p.maxRetries = 0
	}
	if p.initialBackoff == 0 {
		p.initialBackoff = defaultInitialBackoff
	}
	if p.maxBackoff == 0 {
		p.maxBackoff = defaultMaxBackoff
	}
	if p.maxBackoff < p.initialBackoff {
		p.maxBackoff = p.initialBackoff
	}
	if p.maxRetryAfter == 0 {
		p.maxRetryAfter = defaultMaxRetryAfter
	}
	return p, nil
}

// waitNotifierKey carries a wait callback in a context.
type waitNotifierKey struct{}

// WithWaitNotifier returns a context that makes llm clients call fn(d) before each retry sleep
// of d. It is how callers holding a JetStream message keep it alive (InProgress) through
// Embedder.Embed, whose signature has no room for a callback. ChatRequest.OnWait takes
// precedence over it.
func WithWaitNotifier(ctx context.Context, fn func(d time.Duration)) context.Context {
	return context.WithValue(ctx, waitNotifierKey{}, fn)
}

func waitNotifier(ctx context.Context) func(time.Duration) {
	fn, _ := ctx.Value(waitNotifierKey{}).(func(time.Duration))
	return fn
}

// attemptKey carries the *attempt of one HTTP attempt in the request context.
type attemptKey struct{}

// attempt is per-HTTP-attempt state shared between the retry loop and the HTTP doer. It lives
// in the request context, so concurrent calls on one client never see each other's headers.
// The doer writes it during op, which returns before the loop reads it: no locking needed.
type attempt struct {
	zeroTemperature bool        // set temperature 0 explicitly in the JSON body
	sent            bool        // a request reached the HTTP layer
	header          http.Header // headers of the last response
}

// run calls op until it succeeds, fails permanently, or retries run out. Each attempt gets its
// own timeout. It returns the number of attempts made.
func (p retryPolicy) run(ctx context.Context, logger *slog.Logger, what string, onWait func(time.Duration),
	setup func(*attempt), op func(ctx context.Context) error,
) (int, error) {
	if onWait == nil {
		onWait = waitNotifier(ctx)
	}
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.initialBackoff),
		backoff.WithMaxInterval(p.maxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithMaxElapsedTime(0), // bounded by maxRetries instead
	)
	invalid := 0
	for attempts := 1; ; attempts++ {
		if err := ctx.Err(); err != nil {
			return attempts - 1, fmt.Errorf("%s: %w", what, err)
		}
		at := &attempt{}
		if setup != nil {
			setup(at)
		}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, attemptKey{}, at), p.timeout)
		err := op(actx)
		// A deadline that expired after a status was received does not make the error a timeout.
		timedOut := actx.Err() != nil && statusCode(err) == 0
		cancel()
		if err == nil {
			return attempts, nil
		}
		if ctx.Err() != nil {
			return attempts, fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		}
		switch {
		case timedOut:
			err = fmt.Errorf("attempt timed out after %s: %w", p.timeout, err)
		case !at.sent:
			// Rejected before anything was sent (client-side validation): retrying cannot help.
			return attempts, fmt.Errorf("%s: %w: %w", what, ErrPermanent, err)
		case errors.Is(err, ErrInvalidReply):
			if invalid++; invalid >= maxInvalidReplyAttempts {
				return attempts, fmt.Errorf("%s: reply still invalid after %d attempts: %w", what, invalid, err)
			}
		case errors.Is(err, ErrPermanent):
			return attempts, fmt.Errorf("%s: %w", what, err)
		case !IsRetryable(err):
			return attempts, fmt.Errorf("%s: %w: %w", what, ErrPermanent, err)
		}
		if attempts > p.maxRetries {
			return attempts, fmt.Errorf("%s: giving up after %d attempts: %w", what, attempts, err)
		}
		wait := b.NextBackOff()
		if ra, ok := retryAfter(at.header, time.Now()); ok {
			if ra > p.maxRetryAfter {
				return attempts, fmt.Errorf("%s: server asked to retry after %s (more than %s): %w",
					what, ra, p.maxRetryAfter, err)
			}
			wait = ra
		}
		logger.LogAttrs(ctx, slog.LevelWarn, "llm call failed, retrying",
			slog.String("call", what), slog.Int("attempt", attempts),
			slog.Duration("wait", wait), slog.String("kind", ErrorKind(err)), slog.String("error", err.Error()))
		if onWait != nil {
			onWait(wait)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return attempts, fmt.Errorf("%s: %w while waiting to retry (last error: %v)", what, serr, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads the server's requested delay: OpenAI's retry-after-ms, else Retry-After as
// seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// doer is the HTTP client handed to go-openai. go-openai drops response headers on errors, so
// the doer records them in the attempt found in the request context; and since go-openai's
// `temperature,omitempty` cannot express 0, the doer writes it into the body when asked.
type doer struct {
	client *http.Client
}

func newDoer() *doer {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16 // workers make concurrent calls to one host
	// No client timeout: each attempt has its own context deadline.
	return &doer{client: &http.Client{Transport: tr}}
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	at, _ := req.Context().Value(attemptKey{}).(*attempt)
	if at != nil {
		at.sent = true
	}
	if at != nil && at.zeroTemperature && req.Body != nil {
		var err error
		if req, err = withZeroTemperature(req); err != nil {
			return nil, err
		}
	}
	resp, err := d.client.Do(req)
	if at != nil && resp != nil {
		at.header = resp.Header
	}
	return resp, err
}

// withZeroTemperature returns a copy of req whose JSON body has "temperature": 0.
func withZeroTemperature(req *http.Request) (*http.Request, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("decoding request body to set temperature: %w", err)
	}
	fields["temperature"] = json.RawMessage("0")
	if body, err = json.Marshal(fields); err != nil {
		return nil, fmt.Errorf("encoding request body: %w", err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return out, nil
}
