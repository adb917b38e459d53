package extractor_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/extractor"
	"github.com/engramhq/engram/llm/fakeopenai"
	openai "github.com/sashabaranov/go-openai"
)

// TestLongTurnIsReadAsABoundedPrefix: the gate and the extractor read only the first
// MaxExtractBytes of a very long turn (the model's prompt stays small), while the stored
// turn keeps every byte.
func TestLongTurnIsReadAsABoundedPrefix(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.fake.SetChatFunc(func(openai.ChatCompletionRequest) fakeopenai.Reply { return fakeopenai.Reply{Content: reply()} })
	content := "Please note that I always take the early train to work. " +
		strings.Repeat("log line without anything to remember in it; ", 200<<10/45) // under the 256 KiB a turn may hold
	h.mustHandle(userTurn("long1", "s1", 0, content))
	reqs := h.fake.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests, want 1", len(reqs))
	}
	size := 0
	for _, m := range reqs[0].Messages {
		size += len(m.Content)
	}
	if size > 2*extractor.MaxExtractBytes {
		t.Fatalf("the prompt holds %d bytes of a %d-byte turn: the turn was not bounded", size, len(content))
	}
	if !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "early train") {
		t.Fatal("the turn's beginning is missing from the prompt")
	}
	turns, err := h.store.ConsoleTurns(testCtx(t), tenant, []string{"long1"})
	if err != nil || len(turns) != 1 || len(turns[0].Content) != len(content) {
		t.Fatalf("stored turn: %d turns, %v; want the whole %d bytes", len(turns), err, len(content))
	}
}
