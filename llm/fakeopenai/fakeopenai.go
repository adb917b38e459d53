// Package fakeopenai is an httptest server that speaks the parts of the OpenAI HTTP API engram
// uses (POST /v1/chat/completions and POST /v1/embeddings). Tests script its replies and inspect
// the requests it received, so LLM behaviour is faked at the HTTP boundary, exactly where real
// providers (OpenAI, DeepSeek, Qwen, Ollama, vLLM) would sit.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultEmbedDims is the length of the default embedding vectors: small so tests can reason
// about them.
const DefaultEmbedDims = 8

// noScriptedReply is the message of the 500 sent when a chat request arrives with nothing
// scripted, so a test that forgot to script a reply fails loudly instead of seeing plausible data.
const noScriptedReply = "fakeopenai: no scripted reply"

// Reply scripts one response.
//
// Status 0 means 200. For a 200 chat reply, Content becomes choices[0].message.content. For an
// error status (>= 400) without Body, an OpenAI-style error object is sent whose message is
// Content (or the status text). Body, when set, is sent verbatim instead (any status). Delay
// holds the reply back; it ends early if the client goes away.
type Reply struct {
	Status  int
	Headers map[string]string
	Content string
	Body    string
	Delay   time.Duration
}

// Request is one received HTTP request.
type Request struct {
	Method string
	Path   string
	Time   time.Time
	Header http.Header
	Body   []byte
}

// Server is the fake. All methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	chatQueue  []Reply
	embedQueue []Reply
	chatFunc   func(req openai.ChatCompletionRequest) Reply
	embedFunc  func(model, input string) []float32
	embedDims  int
	reverse    bool
	requests   []Request
	chatReqs   []openai.ChatCompletionRequest
	embedReqs  []openai.EmbeddingRequest
	seq        int
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{embedDims: DefaultEmbedDims}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to give an OpenAI client (it includes /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// QueueChat appends scripted chat replies, consumed one per request in order.
func (s *Server) QueueChat(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQueue = append(s.chatQueue, replies...)
}

// SetChatFunc sets the reply computed for chat requests once the queue is empty.
func (s *Server) SetChatFunc(f func(req openai.ChatCompletionRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatFunc = f
}

// QueueEmbed appends scripted embedding replies (typically error statuses, or a raw Body),
// consumed one per request before the embedding function is used.
func (s *Server) QueueEmbed(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedQueue = append(s.embedQueue, replies...)
}

// SetEmbedFunc sets how each input is embedded. The default is a deterministic hash-based unit
// vector of SetEmbedDims dimensions.
func (s *Server) SetEmbedFunc(f func(model, input string) []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFunc = f
}

// SetEmbedDims sets the length of the default embedding vectors.
func (s *Server) SetEmbedDims(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedDims = n
}

// SetEmbedReverseOrder makes embedding responses list data in reverse order (with correct
// index fields), as servers are allowed to, so clients must order by index.
func (s *Server) SetEmbedReverseOrder(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reverse = on
}

// Requests returns every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the decoded chat completion requests, in arrival order.
func (s *Server) ChatRequests() []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), s.chatReqs...)
}

// ChatCalls is the number of chat completion requests received.
func (s *Server) ChatCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chatReqs)
}

// EmbedRequests returns the decoded embedding requests, in arrival order. Input holds a string
// or a []any of strings, as decoded from JSON.
func (s *Server) EmbedRequests() []openai.EmbeddingRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]openai.EmbeddingRequest(nil), s.embedReqs...)
}

// DefaultEmbedding is the default deterministic unit vector for input.
func DefaultEmbedding(input string, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%d\x00%s", i, input)
		x := float64(int64(h.Sum64()>>11))/float64(1<<52) - 1 // in [-1, 1)
		v[i] = float32(x)
		norm += x * x
	}
	if norm == 0 {
		v[0], norm = 1, 1
	}
	n := math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: reading body: "+err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Time: time.Now(), Header: r.Header.Clone(), Body: body,
	})
	s.mu.Unlock()

	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "fakeopenai: only POST is served")
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		s.handleChat(w, r, body)
	case "/v1/embeddings":
		s.handleEmbed(w, r, body)
	default:
		writeError(w, http.StatusNotFound, "fakeopenai: no route for "+r.URL.Path)
	}
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, body []byte) {
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: decoding chat request: "+err.Error())
		return
	}
	s.mu.Lock()
	s.chatReqs = append(s.chatReqs, req)
	s.seq++
	id := s.seq
	var (
		reply Reply
		have  bool
	)
	if len(s.chatQueue) > 0 {
		reply, have = s.chatQueue[0], true
		s.chatQueue = s.chatQueue[1:]
	}
	f := s.chatFunc
	s.mu.Unlock()

	if !have {
		if f == nil {
			writeError(w, http.StatusInternalServerError, noScriptedReply)
			return
		}
		reply = f(req) // outside the lock: the func may call back into the server
	}
	if !wait(r, reply.Delay) {
		return
	}
	if writeOverride(w, reply) {
		return
	}
	promptTokens := 0
	for _, m := range req.Messages {
		promptTokens += approxTokens(m.Content)
	}
	completionTokens := approxTokens(reply.Content)
	resp := openai.ChatCompletionResponse{
		ID:      "chatcmpl-fake-" + strconv.Itoa(id),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []openai.ChatCompletionChoice{{
			Index:        0,
			Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply.Content},
			FinishReason: openai.FinishReasonStop,
		}},
		Usage: openai.Usage{
			PromptTokens: promptTokens, CompletionTokens: completionTokens,
			TotalTokens: promptTokens + completionTokens,
		},
		SystemFingerprint: "fp_fakeopenai",
	}
	writeJSON(w, statusOr200(reply.Status), resp)
}

// embeddingRequest mirrors openai.EmbeddingRequest but keeps the input raw, since it may be a
// string or an array.
type embeddingRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model"`
	User           string          `json:"user,omitempty"`
	EncodingFormat string          `json:"encoding_format,omitempty"`
	Dimensions     int             `json:"dimensions,omitempty"`
}

func (s *Server) handleEmbed(w http.ResponseWriter, r *http.Request, body []byte) {
	var raw embeddingRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: decoding embedding request: "+err.Error())
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(raw.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(raw.Input, &inputs); err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: input must be a string or an array of strings")
		return
	}
	var decodedInput any
	_ = json.Unmarshal(raw.Input, &decodedInput)

	s.mu.Lock()
	s.embedReqs = append(s.embedReqs, openai.EmbeddingRequest{
		Input: decodedInput, Model: openai.EmbeddingModel(raw.Model), User: raw.User,
		EncodingFormat: openai.EmbeddingEncodingFormat(raw.EncodingFormat), Dimensions: raw.Dimensions,
	})
	var (
		reply Reply
		have  bool
	)
	if len(s.embedQueue) > 0 {
		reply, have = s.embedQueue[0], true
		s.embedQueue = s.embedQueue[1:]
	}
	f, dims, reverse := s.embedFunc, s.embedDims, s.reverse
	s.mu.Unlock()

	if have {
		if !wait(r, reply.Delay) || writeOverride(w, reply) {
			return
		}
	}
	data := make([]openai.Embedding, len(inputs))
	tokens := 0
	for i, in := range inputs {
		var v []float32
		if f != nil {
			v = f(raw.Model, in)
		} else {
			v = DefaultEmbedding(in, dims)
		}
		data[i] = openai.Embedding{Object: "embedding", Embedding: v, Index: i}
		tokens += approxTokens(in)
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	writeJSON(w, statusOr200(reply.Status), openai.EmbeddingResponse{
		Object: "list", Data: data, Model: openai.EmbeddingModel(raw.Model),
		Usage: openai.Usage{PromptTokens: tokens, TotalTokens: tokens},
	})
}

// wait sleeps for d unless the client goes away first; it reports whether to go on.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeOverride writes the reply's headers, and writes the whole response when the reply is an
// error or a raw body; it reports whether it did so.
func writeOverride(w http.ResponseWriter, reply Reply) bool {
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	status := statusOr200(reply.Status)
	switch {
	case reply.Body != "":
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return true
	case status >= 400:
		msg := reply.Content
		if msg == "" {
			msg = http.StatusText(status)
		}
		writeError(w, status, msg)
		return true
	}
	return false
}

func statusOr200(s int) int {
	if s == 0 {
		return http.StatusOK
	}
	return s
}

func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": nil,
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"fakeopenai: encoding response","type":"server_error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// approxTokens is a rough token count (about four bytes a token), enough for usage fields.
func approxTokens(s string) int {
	if s == "" {
		return 0
	}
	return len(s)/4 + 1
}
