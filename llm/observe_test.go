package llm_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/engramhq/engram/llm"
)

// TestRefusedConnectionIsUnreachable: a chat endpoint that refuses connections is
// reported to the observer as "unreachable", never as a busy server.
func TestRefusedConnectionIsUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := llm.NewChat(llm.ChatConfig{BaseURL: "http://" + addr + "/v1", Model: "m", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kind atomic.Value
	c.SetObserver(func(call llm.Call) { kind.Store(llm.ErrorKind(call.Err)) })
	_, err = c.Complete(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Content: "hi"}}})
	if err == nil {
		t.Fatal("no error from a refused connection")
	}
	if !llm.IsRetryable(err) {
		t.Errorf("a refused connection is not retryable: turns would be dead-lettered (%v)", err)
	}
	if got := llm.ErrorKind(err); got != llm.KindUnreachable {
		t.Errorf("ErrorKind = %q, want unreachable (%v)", got, err)
	}
	if got, _ := kind.Load().(string); got != llm.KindUnreachable {
		t.Errorf("observer saw %q, want unreachable", got)
	}
}
