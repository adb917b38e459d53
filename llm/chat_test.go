package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/llm/fakeopenai"
)

var testSchema = &llm.JSONSchema{
	Name: "memories",
	Schema: map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"memories": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		"required":             []string{"memories"},
		"additionalProperties": false,
	},
}

func jsonReq(onWait func(time.Duration)) llm.ChatRequest {
	return llm.ChatRequest{
		System:   "Extract memories.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "I prefer meetings in the morning."}},
		Schema:   testSchema,
		OnWait:   onWait,
	}
}

func newChat(t *testing.T, s *fakeopenai.Server, mod func(*llm.ChatConfig)) *llm.ChatClient {
	t.Helper()
	cfg := llm.ChatConfig{
		BaseURL: s.URL(), APIKey: "k", Model: "test-model",
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.NewChat(cfg, nil)
	if err != nil {
		t.Fatalf("NewChat: %v", err)
	}
	return c
}

// bodyField decodes one top-level field of the i-th recorded request body.
func bodyField(t *testing.T, s *fakeopenai.Server, i int, field string) (json.RawMessage, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(s.Requests()[i].Body, &m); err != nil {
		t.Fatalf("request %d body: %v", i, err)
	}
	v, ok := m[field]
	return v, ok
}

func TestChatComplete(t *testing.T) {
	t.Parallel()
	const ok = `{"memories":["prefers morning meetings"]}`
	type result struct {
		resp  llm.ChatResponse
		err   error
		waits []time.Duration
	}
	tests := []struct {
		name    string
		cfg     func(*llm.ChatConfig)
		replies []fakeopenai.Reply
		check   func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result)
	}{
		{
			name:    "json schema sent with temperature 0",
			replies: []fakeopenai.Reply{{Content: ok}},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if r.err != nil || r.resp.Content != ok || r.resp.Attempts != 1 || r.resp.JSONMode != llm.JSONModeSchema {
					t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
				}
				if r.resp.Model != "test-model" || r.resp.PromptTokens == 0 || r.resp.CompletionTokens == 0 {
					t.Fatalf("missing model or usage: %+v", r.resp)
				}
				if temp, has := bodyField(t, s, 0, "temperature"); !has || string(temp) != "0" {
					t.Fatalf("temperature = %s (present %v), want 0", temp, has)
				}
				req := s.ChatRequests()[0]
				rf := req.ResponseFormat
				if rf == nil || rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema || rf.JSONSchema == nil ||
					!rf.JSONSchema.Strict || rf.JSONSchema.Name != "memories" {
					t.Fatalf("response_format = %+v", rf)
				}
				if b, _ := json.Marshal(rf.JSONSchema.Schema); !strings.Contains(string(b), `"additionalProperties":false`) {
					t.Fatalf("schema not sent verbatim: %s", b)
				}
				if req.Messages[0].Role != "system" || req.Messages[0].Content != "Extract memories." || req.Messages[1].Role != "user" {
					t.Fatalf("messages = %+v", req.Messages)
				}
				if st := c.Stats(); st != (llm.ChatStats{Calls: 1}) {
					t.Fatalf("stats = %+v", st)
				}
			},
		},
		{
			name: "falls back to json_object when json_schema is rejected, and remembers",
			replies: []fakeopenai.Reply{
				{Status: 400, Content: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."},
				{Content: ok},
				{Content: ok},
			},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if r.err != nil || r.resp.JSONMode != llm.JSONModeObject || r.resp.Attempts != 2 {
					t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
				}
				if _, err := c.Complete(context.Background(), jsonReq(nil)); err != nil {
					t.Fatalf("second call: %v", err)
				}
				reqs := s.ChatRequests()
				if len(reqs) != 3 {
					t.Fatalf("chat calls = %d, want 3 (fallback remembered)", len(reqs))
				}
				for _, req := range reqs[1:] {
					if req.ResponseFormat == nil || req.ResponseFormat.Type != openai.ChatCompletionResponseFormatTypeJSONObject {
						t.Fatalf("response_format = %+v, want json_object", req.ResponseFormat)
					}
					if !strings.Contains(req.Messages[0].Content, "JSON schema") || !strings.Contains(req.Messages[0].Content, `"memories"`) {
						t.Fatalf("schema not in system prompt: %q", req.Messages[0].Content)
					}
				}
				if c.JSONMode() != llm.JSONModeObject || c.Stats().Fallbacks != 1 || c.Stats().Retries != 0 {
					t.Fatalf("mode = %s, stats = %+v", c.JSONMode(), c.Stats())
				}
			},
		},
		{
			name:    "drops temperature when the model rejects it",
			replies: []fakeopenai.Reply{{Status: 400, Content: "Unsupported value: 'temperature' does not support 0 with this model."}, {Content: ok}},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.ChatClient, r result) {
				if r.err != nil || r.resp.Attempts != 2 {
					t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
				}
				if _, has := bodyField(t, s, 1, "temperature"); has {
					t.Fatal("temperature still sent after rejection")
				}
				if rf := s.ChatRequests()[1].ResponseFormat; rf == nil || rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema {
					t.Fatalf("response format changed: %+v", rf)
				}
			},
		},
		{
			name:    "429 honours Retry-After",
			replies: []fakeopenai.Reply{{Status: 429, Headers: map[string]string{"Retry-After": "1"}}, {Content: ok}},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if r.err != nil || r.resp.Attempts != 2 {
					t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
				}
				reqs := s.Requests()
				if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 950*time.Millisecond {
					t.Fatalf("retried after %s, want >= 1s", gap)
				}
				if len(r.waits) != 1 || r.waits[0] != time.Second {
					t.Fatalf("OnWait got %v, want [1s]", r.waits)
				}
				if st := c.Stats(); st.Retries != 1 || st.Failures != 0 {
					t.Fatalf("stats = %+v", st)
				}
			},
		},
		{
			name:    "500 then success is retried",
			replies: []fakeopenai.Reply{{Status: 500}, {Status: 502, Body: "<html>bad gateway</html>"}, {Content: ok}},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if r.err != nil || r.resp.Attempts != 3 || s.ChatCalls() != 3 || len(r.waits) != 2 {
					t.Fatalf("resp = %+v, err = %v, waits = %v", r.resp, r.err, r.waits)
				}
				if c.Stats().Retries != 2 {
					t.Fatalf("stats = %+v", c.Stats())
				}
			},
		},
		{
			name:    "400 is not retried",
			replies: []fakeopenai.Reply{{Status: 400, Content: "messages: too long"}},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if !errors.Is(r.err, llm.ErrPermanent) || llm.IsRetryable(r.err) {
					t.Fatalf("err = %v, want permanent", r.err)
				}
				if s.ChatCalls() != 1 || len(r.waits) != 0 || r.resp.Attempts != 1 {
					t.Fatalf("calls = %d, waits = %v", s.ChatCalls(), r.waits)
				}
				if st := c.Stats(); st.Failures != 1 || st.Calls != 1 {
					t.Fatalf("stats = %+v", st)
				}
			},
		},
		{
			name:    "401 is not retried",
			replies: []fakeopenai.Reply{{Status: 401, Content: "bad key"}},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.ChatClient, r result) {
				if !errors.Is(r.err, llm.ErrPermanent) || s.ChatCalls() != 1 {
					t.Fatalf("err = %v, calls = %d", r.err, s.ChatCalls())
				}
			},
		},
		{
			name:    "timeout is retried",
			cfg:     func(c *llm.ChatConfig) { c.Timeout = 200 * time.Millisecond },
			replies: []fakeopenai.Reply{{Delay: 5 * time.Second, Content: "late"}, {Content: ok}},
			check: func(t *testing.T, _ *fakeopenai.Server, _ *llm.ChatClient, r result) {
				if r.err != nil || r.resp.Content != ok || r.resp.Attempts != 2 || len(r.waits) != 1 {
					t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
				}
			},
		},
		{
			name:    "gives up after MaxRetries with a retryable error",
			cfg:     func(c *llm.ChatConfig) { c.MaxRetries = 2 },
			replies: []fakeopenai.Reply{{Status: 503}, {Status: 503}, {Status: 503}, {Content: ok}},
			check: func(t *testing.T, s *fakeopenai.Server, c *llm.ChatClient, r result) {
				if r.err == nil || errors.Is(r.err, llm.ErrPermanent) || !llm.IsRetryable(r.err) {
					t.Fatalf("err = %v, want retryable", r.err)
				}
				if s.ChatCalls() != 3 || r.resp.Attempts != 3 || c.Stats().Failures != 1 {
					t.Fatalf("calls = %d, resp = %+v", s.ChatCalls(), r.resp)
				}
			},
		},
		{
			name:    "Retry-After beyond the cap ends the call, retryable",
			cfg:     func(c *llm.ChatConfig) { c.MaxRetryAfter = time.Second },
			replies: []fakeopenai.Reply{{Status: 429, Headers: map[string]string{"Retry-After": "3600"}}},
			check: func(t *testing.T, s *fakeopenai.Server, _ *llm.ChatClient, r result) {
				if r.err == nil || !llm.IsRetryable(r.err) || s.ChatCalls() != 1 || len(r.waits) != 0 {
					t.Fatalf("err = %v, calls = %d", r.err, s.ChatCalls())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := fakeopenai.New(t)
			s.QueueChat(tt.replies...)
			c := newChat(t, s, tt.cfg)
			var r result
			r.resp, r.err = c.Complete(context.Background(), jsonReq(func(d time.Duration) { r.waits = append(r.waits, d) }))
			tt.check(t, s, c, r)
		})
	}
}

func TestChatJSONModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode     string
		schema   bool
		wantType openai.ChatCompletionResponseFormatType // "" = no response_format
	}{
		{llm.JSONModeSchema, true, openai.ChatCompletionResponseFormatTypeJSONSchema},
		{llm.JSONModeObject, true, openai.ChatCompletionResponseFormatTypeJSONObject},
		{llm.JSONModeNone, true, ""},
		{llm.JSONModeSchema, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			s := fakeopenai.New(t)
			s.QueueChat(fakeopenai.Reply{Content: "{}"})
			c := newChat(t, s, func(c *llm.ChatConfig) { c.JSONMode = tt.mode })
			req := jsonReq(nil)
			if !tt.schema {
				req.Schema = nil
			}
			if _, err := c.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := s.ChatRequests()[0]
			var gotType openai.ChatCompletionResponseFormatType
			if got.ResponseFormat != nil {
				gotType = got.ResponseFormat.Type
			}
			if gotType != tt.wantType {
				t.Fatalf("response_format type = %q, want %q", gotType, tt.wantType)
			}
			inPrompt := strings.Contains(got.Messages[0].Content, "JSON schema")
			if want := tt.schema && tt.mode != llm.JSONModeSchema; inPrompt != want {
				t.Fatalf("schema in prompt = %v, want %v", inPrompt, want)
			}
		})
	}
}

func TestChatCancelDuringWait(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	s.QueueChat(fakeopenai.Reply{Status: 429, Headers: map[string]string{"Retry-After": "30"}})
	c := newChat(t, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Complete(ctx, jsonReq(func(time.Duration) { cancel() }))
	if !errors.Is(err, context.Canceled) || !llm.IsRetryable(err) {
		t.Fatalf("err = %v, want context.Canceled (retryable)", err)
	}
}

func TestChatWaitNotifierFromContext(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	s.QueueChat(fakeopenai.Reply{Status: 500}, fakeopenai.Reply{Content: "{}"})
	c := newChat(t, s, nil)
	var n atomic.Int32
	ctx := llm.WithWaitNotifier(context.Background(), func(time.Duration) { n.Add(1) })
	if _, err := c.Complete(ctx, jsonReq(nil)); err != nil || n.Load() != 1 {
		t.Fatalf("err = %v, notifications = %d", err, n.Load())
	}
}

func TestChatConcurrent(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	var mu sync.Mutex
	attempts := map[string]int{}
	// Each call's first attempt is rate limited with its own Retry-After, its second
	// succeeds: every call must obey its own limit, however the calls interleave.
	s.SetChatFunc(func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		msg := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		attempts[msg]++
		n := attempts[msg]
		mu.Unlock()
		if n == 1 {
			return fakeopenai.Reply{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "0"}}
		}
		return fakeopenai.Reply{Content: msg}
	})
	c := newChat(t, s, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			msg := strings.Repeat("x", i+1)
			resp, err := c.Complete(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Content: msg}}})
			if err != nil || resp.Content != msg {
				t.Errorf("call %d: %v %q", i, err, resp.Content)
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Calls != 16 || st.Failures != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestNewChatValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  llm.ChatConfig
		want string
	}{
		{"no model", llm.ChatConfig{}, "model is required"},
		{"bad mode", llm.ChatConfig{Model: "m", JSONMode: "yaml"}, "json mode"},
		{"bad url", llm.ChatConfig{Model: "m", BaseURL: "localhost:11434"}, "base URL"},
		{"negative timeout", llm.ChatConfig{Model: "m", Timeout: -1}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := llm.NewChat(tt.cfg, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestChatRejectsBadRequests(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	c := newChat(t, s, nil)
	for _, req := range []llm.ChatRequest{
		{},
		{Messages: []llm.Message{{Content: "x"}}, Schema: &llm.JSONSchema{Schema: "not json"}},
	} {
		if _, err := c.Complete(context.Background(), req); !errors.Is(err, llm.ErrPermanent) {
			t.Fatalf("err = %v, want permanent", err)
		}
	}
	if s.ChatCalls() != 0 {
		t.Fatalf("sent %d requests", s.ChatCalls())
	}
}
