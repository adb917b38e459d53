package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram/client"
)

// TestInProcessToken: the in-process API authenticates as the MCP request's own
// bearer token and refuses a request without one.
func TestInProcessToken(t *testing.T) {
	t.Parallel()
	var seen string
	edge := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"candidate_id":"c1","duplicate":false}`))
	})
	api := InProcess(edge)
	for _, tc := range []struct {
		auth string
		ok   bool
	}{
		{"Bearer egm_abc", true},
		{"bearer  egm_abc ", true},
		{"", false},
		{"Basic egm_abc", false},
		{"Bearer ", false},
	} {
		h := http.Header{}
		if tc.auth != "" {
			h.Set("Authorization", tc.auth)
		}
		c, err := api(h)
		if (err == nil) != tc.ok {
			t.Errorf("Authorization %q: error %v, want ok=%v", tc.auth, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		seen = ""
		r, err := c.Remember(context.Background(), client.RememberRequest{UserID: "u", Content: "x"})
		if err != nil || r.CandidateID != "c1" || seen != "Bearer egm_abc" {
			t.Errorf("Authorization %q: %+v %v, the edge saw %q", tc.auth, r, err, seen)
		}
	}
	if _, err := api(nil); err == nil {
		t.Error("a tool call without HTTP headers (not from /mcp) reached the edge")
	}
}

// TestSDKLogger: the SDK's per-session info lines stay out of engram's log; its
// warnings do not.
func TestSDKLogger(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	l := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Info("server session connected")
	l.With("k", "v").Warn("calling tools/call: broken")
	if out := buf.String(); strings.Contains(out, "session connected") || !strings.Contains(out, "broken") ||
		!strings.Contains(out, "component=mcp") || !strings.Contains(out, "k=v") {
		t.Errorf("log:\n%s", out)
	}
}
