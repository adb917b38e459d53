package bench

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// instantModel is an OpenAI-compatible chat endpoint that answers at once, so that the
// latency benchmark's LLM path measures engram, not a model: an extraction request gets
// one memory per NEW user turn (its content), a judge request the decision "add". It
// records how long it took to answer each turn's call, which the benchmark subtracts.
type instantModel struct {
	srv   *http.Server
	ln    net.Listener
	wg    sync.WaitGroup
	calls atomic.Int64

	mu    sync.Mutex
	spent map[string]time.Duration // turn id → the answer time of the call that extracted it
}

func startInstantModel() (*instantModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the latency model endpoint: %w", err)
	}
	m := &instantModel{ln: ln, spent: map[string]time.Duration{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.chat)
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	m.wg.Go(func() { _ = m.srv.Serve(ln) })
	return m, nil
}

func (m *instantModel) URL() string { return "http://" + m.ln.Addr().String() + "/v1" }

func (m *instantModel) close() {
	_ = m.srv.Close()
	m.wg.Wait()
}

func (m *instantModel) timeFor(turnID string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent[turnID]
}

// modelTurn is a turn as the extraction prompt lists it.
type modelTurn struct {
	ID         string `json:"id"`
	Role       string `json:"role"`
	OccurredAt string `json:"occurred_at"`
	Content    string `json:"content"`
}

func (m *instantModel) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	m.calls.Add(1)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var prompt string
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			prompt = msg.Content
			break
		}
	}
	var content string
	var ids []string
	if _, section, ok := strings.Cut(prompt, "NEW turns"); ok {
		type memory struct {
			Type          string   `json:"type"`
			Category      string   `json:"category"`
			Key           *string  `json:"key"`
			Content       string   `json:"content"`
			Importance    float64  `json:"importance"`
			Confidence    float64  `json:"confidence"`
			SourceTurnIDs []string `json:"source_turn_ids"`
			ValidFrom     string   `json:"valid_from"`
			ExpireAt      *string  `json:"expire_at"`
			Speaker       string   `json:"speaker"`
		}
		mems := []memory{}
		for line := range strings.SplitSeq(section, "\n") {
			var t modelTurn
			if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &t) != nil {
				continue
			}
			ids = append(ids, t.ID)
			if t.Role == "user" {
				mems = append(mems, memory{Type: "semantic", Category: "preference", Content: t.Content, Importance: 0.6,
					Confidence: 0.9, SourceTurnIDs: []string{t.ID}, ValidFrom: t.OccurredAt, Speaker: "user"})
			}
		}
		b, _ := json.Marshal(map[string]any{"memories": mems})
		content = string(b)
	} else {
		content = `{"decision":"add","target_id":"","merged_content":"","reason":"benchmark"}`
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-bench-%d", m.calls.Load()), "object": "chat.completion",
		"created": time.Now().Unix(), "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(content) / 4,
			"total_tokens": (len(prompt) + len(content)) / 4},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
	spent := time.Since(start)
	m.mu.Lock()
	for _, id := range ids {
		m.spent[id] = spent
	}
	m.mu.Unlock()
}
