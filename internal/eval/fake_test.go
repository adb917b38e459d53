package eval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// fakeSystem is an in-memory stand-in for engram: it stores turns per tenant and
// "retrieves" by substring matching. Context returns every stored user-role turn
// of the asking user; Search returns that user's turns containing a query word,
// unless a scripted ranking is given for the query and mode.
type fakeSystem struct {
	mu       sync.Mutex
	tenants  map[string]*fakeTenant
	failName string // NewTenant fails for this name
	llmCalls int    // reported by every tenant
	// scripted maps mode → query → ranked items (LoCoMo tests); the key
	// "<mode>/memories" answers searches of the memories layer alone.
	scripted map[string]map[string][]SearchItem
	memories []StoredMemory // what every tenant's Memories returns
	ctxText  string         // fixed context text when set
	ctxToks  int
}

func newFakeSystem() *fakeSystem { return &fakeSystem{tenants: map[string]*fakeTenant{}} }

func (s *fakeSystem) NewTenant(_ context.Context, name string) (Tenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == s.failName {
		return nil, errors.New("fake: tenant unavailable")
	}
	if _, dup := s.tenants[name]; dup {
		return nil, fmt.Errorf("fake: tenant %s reused", name)
	}
	t := &fakeTenant{sys: s}
	s.tenants[name] = t
	return t, nil
}

type fakeTenant struct {
	sys     *fakeSystem
	mu      sync.Mutex
	turns   []Turn
	drains  int
	closed  bool
	queries []SearchQuery
}

func (t *fakeTenant) AddTurns(_ context.Context, turns []Turn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("fake: closed")
	}
	t.turns = append(t.turns, turns...)
	return nil
}

func (t *fakeTenant) Drain(context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drains++
	return nil
}

func (t *fakeTenant) Context(_ context.Context, q ContextQuery) (ContextResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sys.ctxText != "" {
		return ContextResult{Text: t.sys.ctxText, Tokens: t.sys.ctxToks}, nil
	}
	var lines []string
	for _, tu := range t.turns {
		if tu.UserID == q.UserID && tu.Role == "user" {
			lines = append(lines, tu.Content)
		}
	}
	return ContextResult{Text: strings.Join(lines, "\n"), Tokens: len(lines)}, nil
}

func (t *fakeTenant) Search(_ context.Context, q SearchQuery) (SearchResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queries = append(t.queries, q)
	mode := q.Mode
	if mode == "" {
		mode = modeHybrid
	}
	if len(q.Layers) == 1 && q.Layers[0] == LayerMemories {
		if byQuery, ok := t.sys.scripted[mode+"/"+LayerMemories]; ok {
			items := byQuery[q.Query]
			return SearchResult{Items: items[:min(len(items), q.TopK)]}, nil
		}
	}
	if byQuery, ok := t.sys.scripted[mode]; ok {
		items := byQuery[q.Query]
		return SearchResult{Items: items[:min(len(items), q.TopK)]}, nil
	}
	type hit struct {
		turn  Turn
		score int
	}
	var hits []hit
	for _, tu := range t.turns {
		if tu.UserID != q.UserID {
			continue
		}
		score := 0
		for _, w := range strings.Fields(strings.ToLower(q.Query)) {
			if len(w) > 2 && strings.Contains(strings.ToLower(tu.Content), w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{tu, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	var res SearchResult
	for i, h := range hits {
		if i == q.TopK {
			break
		}
		res.Items = append(res.Items, SearchItem{ID: h.turn.TurnID, Kind: KindTurn, Content: h.turn.Content,
			TurnIDs: []string{h.turn.TurnID}, Score: float64(h.score)})
	}
	return res, nil
}

func (t *fakeTenant) Memories(context.Context, string) ([]StoredMemory, error) {
	return t.sys.memories, nil
}

func (t *fakeTenant) LLMCalls(context.Context) (int, error) { return t.sys.llmCalls, nil }

func (t *fakeTenant) Close(context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	return nil
}

// wordTokens is a test TokenCounter: one token per whitespace-separated word.
func wordTokens(s string) int { return len(strings.Fields(s)) }
