package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/redact"
)

// A secret pasted into a correction is stored as its placeholder, like every other
// text engram stores.
func TestCorrectionIsRedacted(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t)
	id := e.seed("acme", "u1", "The user deploys on Fridays", time.Now().Add(-time.Hour))
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ops := NewOps(e.store, nil)
	ops.SetRedactor(r)
	key := "AKIA" + strings.Repeat("Q7", 8)
	m, err := ops.Correct(e.ctx, "acme", id, Correction{Content: "The user deploys with key " + key, Reason: "key " + key}, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Content, key) || !strings.Contains(m.Content, "[REDACTED:aws_access_key]") {
		t.Fatalf("corrected content %q", m.Content)
	}
	if n := e.count("acme", `SELECT count(*) FROM memory_versions WHERE content LIKE '%'||$1||'%' OR reason LIKE '%'||$1||'%'`, key); n != 0 {
		t.Fatalf("%d versions hold the key", n)
	}
}
