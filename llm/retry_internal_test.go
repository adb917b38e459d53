package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{"fraction", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second, true},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"ms wins", map[string]string{"Retry-After": "2", "Retry-After-Ms": "150"}, 150 * time.Millisecond, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("retryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestIsRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unknown error", errors.New("x"), true},
		{"wrapped permanent", errors.Join(ErrPermanent, errors.New("x")), false},
		{"429", &openai.APIError{HTTPStatusCode: 429}, true},
		{"408", &openai.RequestError{HTTPStatusCode: 408}, true},
		{"500", &openai.RequestError{HTTPStatusCode: 500}, true},
		{"400", &openai.APIError{HTTPStatusCode: 400}, false},
		{"404", &openai.RequestError{HTTPStatusCode: 404}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := IsRetryable(tt.err); got != tt.want {
				t.Fatalf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestIsOutage(t *testing.T) {
	t.Parallel()
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unknown error", errors.New("x"), false},
		{"permanent", fmt.Errorf("%w: bad request", ErrPermanent), false},
		{"invalid reply", fmt.Errorf("embedding: %w: 8 dims, want 4", ErrInvalidReply), true},
		{"canceled", fmt.Errorf("embedding: %w", context.Canceled), false},
		{"deadline", fmt.Errorf("attempt timed out: %w", context.DeadlineExceeded), true},
		{"refused", fmt.Errorf("embedding: %w", refused), true},
		{"429", &openai.APIError{HTTPStatusCode: 429}, true},
		{"503", &openai.RequestError{HTTPStatusCode: 503}, true},
		{"401", &openai.APIError{HTTPStatusCode: 401}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := IsOutage(tt.err); got != tt.want {
				t.Fatalf("IsOutage(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"prefer", "prefers", "preferred", "preferring"},
		{"meeting", "meetings", "meet"},
		{"like", "likes", "liked", "liking"},
		{"party", "parties"},
		{"call", "calls", "called"},
	}
	for _, g := range groups {
		want := string(stem([]byte(g[0])))
		for _, w := range g[1:] {
			if got := string(stem([]byte(w))); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, got, g[0], want)
			}
		}
	}
	for _, w := range []string{"bus", "this", "class", "thing", "string"} {
		if got := string(stem([]byte(w))); len(got) < 3 {
			t.Errorf("stem(%q) = %q: overstemmed", w, got)
		}
	}
}
