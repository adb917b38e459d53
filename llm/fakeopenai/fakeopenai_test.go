package fakeopenai_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/llm/fakeopenai"
)

func client(s *fakeopenai.Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL()
	return openai.NewClientWithConfig(cfg)
}

func TestChatScriptedThenFuncThenDefault(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	c := client(s)
	ctx := context.Background()
	req := openai.ChatCompletionRequest{
		Model:    "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	}

	s.QueueChat(fakeopenai.Reply{Content: `{"a":1}`}, fakeopenai.Reply{Status: 429, Headers: map[string]string{"Retry-After": "3"}})
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatalf("scripted reply: %v", err)
	}
	if got := resp.Choices[0].Message.Content; got != `{"a":1}` {
		t.Fatalf("content = %q", got)
	}
	if resp.Model != "m" || resp.ID == "" || resp.Object != "chat.completion" || resp.Usage.TotalTokens == 0 {
		t.Fatalf("incomplete response: %+v", resp)
	}

	_, err = c.CreateChatCompletion(ctx, req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests {
		t.Fatalf("want 429 APIError, got %v", err)
	}
	if got := resp.Header(); got == nil {
		t.Fatal("no headers recorded")
	}

	_, err = c.CreateChatCompletion(ctx, req)
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Message != "fakeopenai: no scripted reply" {
		t.Fatalf("want 500 no scripted reply, got %v", err)
	}

	s.SetChatFunc(func(r openai.ChatCompletionRequest) fakeopenai.Reply {
		return fakeopenai.Reply{Content: "echo " + r.Messages[0].Content}
	})
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil || resp.Choices[0].Message.Content != "echo hi" {
		t.Fatalf("chat func: %v %+v", err, resp)
	}

	if s.ChatCalls() != 4 || len(s.ChatRequests()) != 4 || len(s.Requests()) != 4 {
		t.Fatalf("calls = %d, requests = %d", s.ChatCalls(), len(s.Requests()))
	}
	if got := s.Requests()[0]; got.Path != "/v1/chat/completions" || got.Time.IsZero() || len(got.Body) == 0 ||
		got.Header.Get("Authorization") != "Bearer test-key" {
		t.Fatalf("request record = %+v", got)
	}
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	c := client(s)
	ctx := context.Background()
	s.SetEmbedReverseOrder(true)
	s.QueueEmbed(fakeopenai.Reply{Status: 503})

	req := openai.EmbeddingRequestStrings{Input: []string{"a", "b", "c"}, Model: "e"}
	if _, err := c.CreateEmbeddings(ctx, req); err == nil {
		t.Fatal("queued 503 not returned")
	}
	resp, err := c.CreateEmbeddings(ctx, req)
	if err != nil {
		t.Fatalf("embeddings: %v", err)
	}
	if len(resp.Data) != 3 || resp.Data[0].Index != 2 {
		t.Fatalf("want 3 reversed items, got %+v", resp.Data)
	}
	for _, d := range resp.Data {
		want := fakeopenai.DefaultEmbedding(req.Input[d.Index], fakeopenai.DefaultEmbedDims)
		if len(d.Embedding) != fakeopenai.DefaultEmbedDims {
			t.Fatalf("dims = %d", len(d.Embedding))
		}
		var norm float64
		for i, x := range d.Embedding {
			norm += float64(x) * float64(x)
			if x != want[i] {
				t.Fatalf("not deterministic at %d", i)
			}
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Fatalf("norm = %v", norm)
		}
	}

	s.SetEmbedFunc(func(_, in string) []float32 { return []float32{float32(len(in))} })
	resp, err = c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"xyz"}, Model: "e"})
	if err != nil || resp.Data[0].Embedding[0] != 3 {
		t.Fatalf("embed func: %v %+v", err, resp)
	}
	if got := s.EmbedRequests(); len(got) != 3 || got[2].Model != "e" {
		t.Fatalf("embed requests = %+v", got)
	}
}
