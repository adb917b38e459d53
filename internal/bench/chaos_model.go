package bench

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// chaosDims is the embedding size the chaos model answers when healthy.
const chaosDims = 64

// faultyModel is an OpenAI-compatible embeddings endpoint that answers deterministic
// vectors, or, while faulty, cycles through the failures a real endpoint shows: 500,
// 429 with Retry-After, vectors of the wrong size and a connection dropped without an
// answer.
type faultyModel struct {
	srv      *http.Server
	ln       net.Listener
	faulty   atomic.Bool
	requests atomic.Int64
	faults   atomic.Int64
	wg       sync.WaitGroup
}

func startFaultyModel() (*faultyModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the chaos model endpoint: %w", err)
	}
	m := &faultyModel{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", m.embeddings)
	m.srv = &http.Server{Handler: mux}
	m.wg.Go(func() { _ = m.srv.Serve(ln) })
	return m, nil
}

// URL is the base URL for ENGRAM_EMBED_BASE_URL.
func (m *faultyModel) URL() string { return "http://" + m.ln.Addr().String() + "/v1" }

func (m *faultyModel) close() {
	_ = m.srv.Close()
	m.wg.Wait()
}

func (m *faultyModel) embeddings(w http.ResponseWriter, r *http.Request) {
	n := m.requests.Add(1)
	var req struct {
		Input any    `json:"input"`
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request body"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	switch v := req.Input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, x := range v {
			s, _ := x.(string)
			inputs = append(inputs, s)
		}
	}
	dims := chaosDims
	if m.faulty.Load() {
		m.faults.Add(1)
		switch n % 4 {
		case 0:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"message":"chaos: internal error","type":"server_error"}}`))
			return
		case 1:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"chaos: rate limited","type":"rate_limit"}}`))
			return
		case 2:
			dims = chaosDims / 2 // a reply of the wrong size
		case 3:
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close() // nothing answered
					return
				}
			}
		}
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	for i, in := range inputs {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: chaosVector(in, dims)})
		out.Usage.PromptTokens += len(in)/4 + 1
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// chaosVector is a deterministic unit vector of input: the same text always embeds
// the same, so redelivered work is idempotent.
func chaosVector(input string, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%d:%s", i, input)
		x := float64(h.Sum64()%2001)/1000 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm == 0 {
		v[0], norm = 1, 1
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}
