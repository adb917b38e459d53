package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"time"
)

// runProbe is the container health check (the image has no shell or curl): GET a
// URL, exit 0 on a 2xx answer.
func runProbe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "probe", "probe [--timeout 2s] [URL]   (default http://127.0.0.1:8080/readyz)")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one URL, got %d arguments", len(pos))
	}
	url := "http://127.0.0.1:8080/readyz"
	if len(pos) > 0 {
		url = pos[0]
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive, got %s", *timeout)
	}
	// http.NewRequest accepts any scheme and a missing host; the client would only
	// fail on them after the fact, as if the server were down.
	if u, err := neturl.Parse(url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("bad URL %q: want http:// or https:// and a host", url)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usagef("bad URL %q: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probing %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("probing %s: HTTP %d: %s", url, resp.StatusCode, body)
	}
	return nil
}
