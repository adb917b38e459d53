// Package eval measures engram end to end: a golden set of hand-written cases
// (expectations and prohibitions on what engram returns after ingesting a few
// sessions), and LoCoMo evidence recall, context size and, optionally, LLM-judged
// answer accuracy. It drives engram only through the System interface, so the same
// harness runs in process, against a server, or against a fake in tests.
package eval

import (
	"context"
	"math"
	"time"
	"unicode"
)

// Tool is the tool call a tool turn records.
type Tool struct {
	Name   string `json:"name"`
	Status string `json:"status"` // success | failure
	Error  string `json:"error,omitempty"`
}

// Turn is one turn as the harness publishes it: the fields of engram's turn event.
type Turn struct {
	TurnID     string         `json:"turn_id"`
	UserID     string         `json:"user_id"`
	AgentID    string         `json:"agent_id,omitempty"`
	SessionID  string         `json:"session_id"`
	TaskID     string         `json:"task_id,omitempty"`
	Role       string         `json:"role"` // user | assistant | tool | system
	Content    string         `json:"content"`
	Tool       *Tool          `json:"tool,omitempty"`
	OccurredAt time.Time      `json:"occurred_at"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// System is the engram under test.
type System interface {
	// NewTenant returns a fresh, isolated tenant for one golden case or one LoCoMo
	// conversation. name is a readable label (a case name, a conversation id); the
	// system must make the tenant unique itself if runs can share storage.
	NewTenant(ctx context.Context, name string) (Tenant, error)
}

// Tenant is one isolated tenant of the system under test.
type Tenant interface {
	// AddTurns publishes turns in order, as a client of the ingest API would.
	AddTurns(ctx context.Context, turns []Turn) error
	// Drain returns once every turn added so far is fully processed (extracted,
	// resolved, searchable). It must wait on the pipeline, not sleep a fixed time.
	Drain(ctx context.Context) error
	// Context assembles a token-budgeted context block (POST /v1/context).
	Context(ctx context.Context, q ContextQuery) (ContextResult, error)
	// Search runs a ranked search (POST /v1/search).
	Search(ctx context.Context, q SearchQuery) (SearchResult, error)
	// LLMCalls is how many LLM calls this tenant's ingestion has made so far
	// (0 with the offline extractor).
	LLMCalls(ctx context.Context) (int, error)
	// Close releases the tenant (and may delete its data).
	Close(ctx context.Context) error
}

// ContextQuery is a context request. BudgetTokens 0 means engram's default budget.
type ContextQuery struct {
	UserID       string
	AgentID      string
	SessionID    string
	TaskID       string
	Query        string
	BudgetTokens int
}

// ContextResult is an assembled context block.
type ContextResult struct {
	Text      string
	Tokens    int // as engram's budget counts them
	MemoryIDs []string
}

// Search modes.
const (
	modeHybrid  = "hybrid"
	modeKeyword = "keyword"
	modeVector  = "vector"
)

// Search layers.
const (
	LayerMemories = "memories"
	LayerTurns    = "turns"
)

// SearchQuery is a search request. Empty Layers means engram's default; empty
// Mode means hybrid.
type SearchQuery struct {
	UserID string
	Query  string
	TopK   int
	Layers []string
	Mode   string // "hybrid" (default), "keyword" or "vector"
}

// SearchItem is one ranked search result.
type SearchItem struct {
	ID      string
	Kind    string // "memory" or "turn"
	Content string
	// TurnIDs are the turns the result stands for: a turn result's own id, a memory
	// result's lineage source turn ids. Evidence recall is computed from them.
	TurnIDs []string
	Score   float64
}

// Item kinds.
const (
	KindMemory = "memory"
	KindTurn   = "turn"
)

// SearchResult is a ranked list, best first.
type SearchResult struct {
	Items  []SearchItem
	Tokens int // tokens of the returned contents; 0 lets the harness count them
}

// TokenCounter counts tokens the way engram's context budget does. Pass engram's
// own estimator (retriever.EstimateTokens) so that the harness's baselines and
// engram's numbers are in the same unit.
type TokenCounter func(string) int

// Completer is a chat model: one system prompt and one user message in, the reply
// out. An empty system prompt means none.
type Completer interface {
	Complete(ctx context.Context, system, user string) (string, error)
}

// roughTokens is the fallback TokenCounter when the caller gives none: about 4
// bytes per token for Latin text and 1.25 tokens per Han character, which is
// near cl100k on everyday text. Reports made with it say so ("tokens_estimator").
func roughTokens(s string) int {
	var han, other int
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		} else if r < 128 {
			other++
		} else {
			other += 2
		}
	}
	return int(math.Ceil(float64(han)*1.25 + float64(other)/4))
}

// counter returns tc, or the rough fallback and its name.
func counter(tc TokenCounter) (TokenCounter, string) {
	if tc == nil {
		return roughTokens, "rough (4 bytes or 0.8 Han characters per token)"
	}
	return tc, "engram"
}
