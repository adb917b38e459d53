package redact_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/internal/redact/redacttest"
	"github.com/engramhq/engram/memory"
)

// TestTurnIdempotent: the TURNS consumer redacts what ingest redacted already; the
// second pass must change nothing, so the stored content hash of a redelivered or
// HTTP-ingested turn is the one it would have had.
func TestTurnIdempotent(t *testing.T) {
	t.Parallel()
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range redacttest.Corpus(t, 1, 2) {
		in := memory.Turn{Content: c.Text, Tool: &memory.ToolCall{Name: "shell", Status: "failure", Error: c.Text},
			Metadata: map[string]any{"note": c.Text, "n": []any{c.Text, 1.5}}}
		once := in
		if kinds := r.Turn(&once); len(kinds) == 0 {
			t.Errorf("case %d (%s): nothing found", i, c.Kind)
			continue
		}
		if in.Tool.Error != c.Text || in.Metadata["note"] != c.Text {
			t.Fatalf("case %d: the caller's tool call or metadata was written through", i)
		}
		for _, s := range c.Secrets {
			if strings.Contains(once.Content, s) || strings.Contains(once.Tool.Error, s) || strings.Contains(fmt.Sprint(once.Metadata), s) {
				t.Errorf("case %d (%s): a secret survived redaction", i, c.Kind)
			}
		}
		twice := once
		if kinds := r.Turn(&twice); len(kinds) != 0 {
			t.Errorf("case %d (%s): redacting again found %v", i, c.Kind, kinds)
		}
		if twice.Content != once.Content || !reflect.DeepEqual(twice.Tool, once.Tool) || !reflect.DeepEqual(twice.Metadata, once.Metadata) ||
			!bytes.Equal(memory.ContentHash(twice.Content), memory.ContentHash(once.Content)) {
			t.Errorf("case %d (%s): redacting again changed the turn", i, c.Kind)
		}
	}
}
