package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// defaultBaseURL is OpenAI's API; any OpenAI-compatible server works (DeepSeek, Qwen, Ollama's
// /v1, vLLM).
const defaultBaseURL = "https://api.openai.com/v1"

// JSON output modes, from most to least enforced.
const (
	// JSONModeSchema sends response_format json_schema (strict): the server enforces the schema.
	JSONModeSchema = "schema"
	// JSONModeObject sends response_format json_object and puts the schema in the system prompt.
	JSONModeObject = "object"
	// JSONModeNone sends no response_format; the schema is only described in the system prompt.
	JSONModeNone = "none"
)

// Message roles.
const (
	RoleSystem    = openai.ChatMessageRoleSystem
	RoleUser      = openai.ChatMessageRoleUser
	RoleAssistant = openai.ChatMessageRoleAssistant
)

// ChatConfig configures a ChatClient. Zero values take the documented defaults.
type ChatConfig struct {
	BaseURL string // default DefaultBaseURL
	APIKey  string // optional: local servers (Ollama, vLLM) often need none
	Model   string // required
	// Timeout bounds each attempt, not the whole call (default DefaultTimeout, 60s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt (default DefaultMaxRetries, 4;
	// negative disables retries).
	MaxRetries int
	// InitialBackoff and MaxBackoff shape the exponential backoff (defaults 500ms and 30s).
	InitialBackoff, MaxBackoff time.Duration
	// MaxRetryAfter caps the server's Retry-After obeyed within a call (default 2m).
	MaxRetryAfter time.Duration
	// JSONMode is JSONModeSchema (default), JSONModeObject or JSONModeNone; it applies to
	// requests that carry a schema. The client falls back (schema → object → none) by itself
	// when the server rejects a response_format.
	JSONMode string
}

// Message is one chat message.
type Message struct {
	Role    string // RoleUser, RoleAssistant or RoleSystem; empty means RoleUser
	Content string
}

// JSONSchema asks for JSON output that follows a schema.
type JSONSchema struct {
	Name        string // [A-Za-z0-9_-], up to 64 characters; default "response"
	Description string
	// Schema is the JSON Schema: json.RawMessage or []byte as is, anything else (e.g. a
	// map[string]any) is marshalled. Strict mode requires every object to list all its
	// properties as required and set additionalProperties false.
	Schema any
}

// ChatRequest is one completion request. Temperature is always 0: engram wants repeatable
// extractions, not creativity.
type ChatRequest struct {
	System   string
	Messages []Message
	Schema   *JSONSchema // nil for free text
	// OnWait, if set, is called before each retry sleep with its length (callers holding a
	// JetStream message send InProgress). Without it, a WithWaitNotifier callback is used.
	OnWait func(d time.Duration)
}

// ChatResponse is the model's reply.
type ChatResponse struct {
	Content          string
	Model            string // as reported by the server
	FinishReason     string // "stop", "length" (truncated) …
	JSONMode         string // the mode the successful request used
	PromptTokens     int
	CompletionTokens int
	Attempts         int // HTTP attempts made, including fallbacks
}

// ChatClient talks to an OpenAI-compatible chat completions endpoint. It is safe for
// concurrent use.
type ChatClient struct {
	client *openai.Client
	model  string
	policy retryPolicy
	logger *slog.Logger

	// mode is the JSON mode in force (a jsonModeLevel); it only ever degrades, when the server
	// rejects a response_format, and the degradation lasts for the client's lifetime.
	mode atomic.Int32
	// omitTemperature is set once the server rejects temperature 0 (some reasoning models only
	// accept their default).
	omitTemperature atomic.Bool

	calls, retries, failures, fallbacks atomic.Int64
	observe                             Observer // nil: calls are not reported
}

// JSON mode levels, ordered so that degrading means decreasing.
const (
	levelNone int32 = iota
	levelObject
	levelSchema
)

func modeLevel(mode string) (int32, error) {
	switch mode {
	case "", JSONModeSchema:
		return levelSchema, nil
	case JSONModeObject:
		return levelObject, nil
	case JSONModeNone:
		return levelNone, nil
	}
	return 0, fmt.Errorf("json mode %q is invalid: want %q, %q or %q", mode, JSONModeSchema, JSONModeObject, JSONModeNone)
}

func levelName(l int32) string {
	return [...]string{JSONModeNone, JSONModeObject, JSONModeSchema}[l]
}

// NewChat makes a chat client. A nil logger discards logs.
func NewChat(cfg ChatConfig, logger *slog.Logger) (*ChatClient, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: chat config: model is required")
	}
	level, err := modeLevel(cfg.JSONMode)
	if err != nil {
		return nil, fmt.Errorf("llm: chat config: %w", err)
	}
	policy, err := newRetryPolicy(cfg.Timeout, cfg.MaxRetries, cfg.InitialBackoff, cfg.MaxBackoff, cfg.MaxRetryAfter)
	if err != nil {
		return nil, fmt.Errorf("llm: chat config: %w", err)
	}
	oc, err := newOpenAIClient(cfg.BaseURL, cfg.APIKey)
	if err != nil {
		return nil, fmt.Errorf("llm: chat config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &ChatClient{client: oc, model: cfg.Model, policy: policy, logger: logger.With("component", "llm.chat")}
	c.mode.Store(level)
	return c, nil
}

func newOpenAIClient(baseURL, apiKey string) (*openai.Client, error) {
	if baseURL == "" {
		baseURL = defaultBaseURL
	}
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil, fmt.Errorf("base URL %q must start with http:// or https://", baseURL)
	}
	oc := openai.DefaultConfig(apiKey)
	oc.BaseURL = strings.TrimRight(baseURL, "/")
	oc.HTTPClient = newDoer()
	return openai.NewClientWithConfig(oc), nil
}

// Model is the configured model name.
func (c *ChatClient) Model() string { return c.model }

// Complete runs one chat completion, retrying transient failures. Errors for which retrying
// cannot help wrap ErrPermanent.
func (c *ChatClient) Complete(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	c.calls.Add(1)
	start := time.Now()
	resp, err := c.complete(ctx, req)
	if c.observe != nil {
		c.observe(Call{Op: "chat", Model: c.model, Duration: time.Since(start), Err: err,
			PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens, Attempts: resp.Attempts})
	}
	if err != nil {
		c.failures.Add(1)
		return resp, fmt.Errorf("llm: chat completion with model %s: %w", c.model, err)
	}
	return resp, nil
}

func (c *ChatClient) complete(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if req.System == "" && len(req.Messages) == 0 {
		return ChatResponse{}, fmt.Errorf("%w: request has no messages", ErrPermanent)
	}
	var schema json.RawMessage
	if req.Schema != nil {
		var err error
		if schema, err = schemaJSON(req.Schema.Schema); err != nil {
			return ChatResponse{}, fmt.Errorf("%w: json schema: %w", ErrPermanent, err)
		}
	}

	var resp ChatResponse
	for {
		level := levelNone
		if schema != nil {
			level = c.mode.Load()
		}
		sendTemperature := !c.omitTemperature.Load()
		oreq := c.buildRequest(req, schema, level)

		var out openai.ChatCompletionResponse
		attempts, err := c.policy.run(ctx, c.logger, "chat completion", req.OnWait,
			func(a *attempt) { a.zeroTemperature = sendTemperature },
			func(actx context.Context) error {
				r, err := c.client.CreateChatCompletion(actx, oreq)
				if err != nil {
					return err
				}
				if len(r.Choices) == 0 {
					return errors.New("reply has no choices") // a glitch: worth another try
				}
				out = r
				return nil
			})
		resp.Attempts += attempts
		if attempts > 1 {
			c.retries.Add(int64(attempts - 1))
		}
		if err == nil {
			resp.Content = out.Choices[0].Message.Content
			resp.Model = orDefault(out.Model, c.model)
			resp.FinishReason = string(out.Choices[0].FinishReason)
			resp.JSONMode = levelName(level)
			resp.PromptTokens = out.Usage.PromptTokens
			resp.CompletionTokens = out.Usage.CompletionTokens
			if resp.FinishReason == string(openai.FinishReasonLength) {
				c.logger.WarnContext(ctx, "chat reply truncated by the token limit", "model", resp.Model)
			}
			return resp, nil
		}
		// Parameters some OpenAI-compatible servers reject: drop them and try again. Each
		// fallback strictly lowers what is sent, so this loop ends.
		if rejected(err) {
			switch {
			case level > levelNone && rejectsResponseFormat(err):
				c.degradeMode(level - 1)
				c.fallbacks.Add(1)
				c.logger.WarnContext(ctx, "server rejected the response format; falling back",
					"from", levelName(level), "to", levelName(level-1), "error", err.Error())
				continue
			case sendTemperature && rejectsTemperature(err):
				c.omitTemperature.Store(true)
				c.fallbacks.Add(1)
				c.logger.WarnContext(ctx, "server rejected temperature 0; using its default", "error", err.Error())
				continue
			}
		}
		return resp, err
	}
}

// degradeMode lowers the JSON mode to at most l (never raises it: another call may already have
// degraded further).
func (c *ChatClient) degradeMode(l int32) {
	for {
		cur := c.mode.Load()
		if cur <= l || c.mode.CompareAndSwap(cur, l) {
			return
		}
	}
}

func (c *ChatClient) buildRequest(req ChatRequest, schema json.RawMessage, level int32) openai.ChatCompletionRequest {
	system := req.System
	if schema != nil && level < levelSchema {
		// Without server-side enforcement the model must be told the shape; OpenAI's json_object
		// mode also insists that the prompt mention JSON.
		system = strings.TrimSpace(system + "\n\nRespond with a single JSON object only, no prose and no code fences, " +
			"conforming to this JSON schema:\n" + string(schema))
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages)+1)
	if system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: RoleSystem, Content: system})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: orDefault(m.Role, RoleUser), Content: m.Content})
	}
	oreq := openai.ChatCompletionRequest{Model: c.model, Messages: msgs}
	switch {
	case schema == nil:
	case level == levelSchema:
		oreq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: schemaName(req.Schema.Name), Description: req.Schema.Description,
				Schema: schema, Strict: true,
			},
		}
	case level == levelObject:
		oreq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return oreq
}

func schemaJSON(s any) (json.RawMessage, error) {
	var raw []byte
	switch v := s.(type) {
	case nil:
		return nil, errors.New("schema is empty")
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding: %w", err)
		}
		raw = b
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("must be a JSON object: %w", err)
	}
	return json.RawMessage(raw), nil
}

func schemaName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() == 64 {
			break
		}
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "response"
	}
	return b.String()
}

// rejected reports a permanent 400/422: the server refused the request as formed.
func rejected(err error) bool {
	code := statusCode(err)
	return errors.Is(err, ErrPermanent) && (code == http.StatusBadRequest || code == http.StatusUnprocessableEntity)
}

func rejectsResponseFormat(err error) bool {
	t := strings.ToLower(errorText(err))
	for _, s := range []string{"response_format", "json_schema", "json_object", "structured output", "response format"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func rejectsTemperature(err error) bool {
	return strings.Contains(strings.ToLower(errorText(err)), "temperature")
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
