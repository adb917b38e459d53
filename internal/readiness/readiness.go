// Package readiness checks what a node depends on for GET /readyz: each check runs
// with a short timeout, its result is cached briefly (probes and scrapes do not
// hammer PostgreSQL or a model endpoint), and it reports a reason. Required checks
// (PostgreSQL, NATS) make the node unready; optional ones (model endpoints) only make
// it degraded, because turns wait safely in TURNS while a model is away.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/llm"
)

// Check is one dependency.
type Check struct {
	Name     string // "postgres", "nats", "llm", "embedding"
	Required bool   // false: a failure degrades, it does not make the node unready
	Probe    func(ctx context.Context) error
	// Detail, instead of Probe, reports a state that is not a dependency failure (the
	// embedding model's vector coverage): its reason is shown as is, "ok" or not, and
	// it is never required nor counted as a failure.
	Detail func(ctx context.Context) string
}

// Config tunes a Checker.
type Config struct {
	Timeout time.Duration // per probe, default 1s
	TTL     time.Duration // how long a result is reused, default 5s
	Logger  *slog.Logger
	// OnFailure is told each failed probe's dependency and kind (for a metric).
	OnFailure func(dependency, kind string)
}

// Checker runs the checks; safe for concurrent use.
type Checker struct {
	checks []Check
	cfg    Config
	log    *slog.Logger

	mu    sync.Mutex
	cache map[string]result
}

type result struct {
	at     time.Time
	reason string // "ok" or "<kind>: <error>"
}

// New makes a Checker.
func New(cfg Config, checks ...Check) *Checker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{checks: checks, cfg: cfg, log: cfg.Logger.With("component", "readiness"), cache: map[string]result{}}
}

// Check runs (or reuses) every check: each dependency's reason ("ok" when healthy) and
// whether every required one is ok. It implements httpapi.Health.
func (c *Checker) Check(ctx context.Context) (map[string]string, bool) {
	out := make(map[string]string, len(c.checks))
	ok := true
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ch := range c.checks {
		wg.Go(func() {
			r := c.run(ctx, ch)
			mu.Lock()
			defer mu.Unlock()
			out[ch.Name] = r
			if r != "ok" && ch.Required && ch.Detail == nil {
				ok = false
			}
		})
	}
	wg.Wait()
	return out, ok
}

func (c *Checker) run(ctx context.Context, ch Check) string {
	c.mu.Lock()
	prev, cached := c.cache[ch.Name]
	c.mu.Unlock()
	if cached && time.Since(prev.at) < c.cfg.TTL {
		return prev.reason
	}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	if ch.Detail != nil {
		reason := ch.Detail(pctx)
		c.mu.Lock()
		c.cache[ch.Name] = result{at: time.Now(), reason: reason}
		c.mu.Unlock()
		if !cached || prev.reason != reason {
			c.log.Info("readiness detail", "check", ch.Name, "detail", reason)
		}
		return reason
	}
	err := ch.Probe(pctx)
	reason := "ok"
	if err != nil {
		kind := Kind(err)
		reason = kind + ": " + oneLine(err.Error())
		if c.cfg.OnFailure != nil {
			c.cfg.OnFailure(ch.Name, kind)
		}
	}
	c.mu.Lock()
	c.cache[ch.Name] = result{at: time.Now(), reason: reason}
	c.mu.Unlock()
	// Log transitions only: a probe every few seconds must not flood the log.
	switch {
	case err != nil && (!cached || prev.reason == "ok"):
		c.log.Warn("dependency not ready", "dependency", ch.Name, "kind", Kind(err), "error", oneLine(err.Error()))
	case err == nil && cached && prev.reason != "ok":
		c.log.Info("dependency ready again", "dependency", ch.Name)
	}
	return reason
}

// Kind classifies a probe failure: unreachable (nothing answered: refused, reset, no
// route, unknown host), timeout, or error (something answered, wrongly).
func Kind(err error) string {
	switch llm.ErrorKind(err) {
	case llm.KindUnreachable:
		return "unreachable"
	case llm.KindTimeout:
		return "timeout"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "error"
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// HTTPProbe checks that an OpenAI-compatible endpoint answers: GET <base>/models with
// the API key. Any answer below 500 other than 401 and 403 counts as reachable (some
// servers have no /models route); a refused connection is "unreachable".
func HTTPProbe(client *http.Client, baseURL, apiKey string) func(ctx context.Context) error {
	if client == nil {
		client = &http.Client{}
	}
	url := strings.TrimRight(baseURL, "/") + "/models"
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return fmt.Errorf("GET %s: HTTP %d (check the API key)", url, resp.StatusCode)
		case resp.StatusCode >= 500:
			return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
		}
		return nil
	}
}
