package metrics

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

func TestObservedFamilies(t *testing.T) {
	t.Parallel()
	m := New(nil)
	chat := m.ModelObserver("llm")
	chat(llm.Call{Op: "chat", Model: "m1", Duration: time.Second, PromptTokens: 100, CompletionTokens: 20})
	chat(llm.Call{Op: "chat", Model: "m1", Duration: time.Second, Err: syscall.ECONNREFUSED})
	m.ModelObserver("embedding")(llm.Call{Op: "embed", Model: "e1", Duration: time.Millisecond, PromptTokens: 7})
	m.ObserveDecision(consolidator.Decision{Kind: consolidator.KindConfirm}, 3*time.Millisecond, nil)
	m.ObserveDecision(consolidator.Decision{}, time.Millisecond, errors.New("db down"))
	m.Turns(ingest.TurnsResult{Accepted: 3, Duplicates: 1, Rejected: 2})
	m.Retrieval("context", 5*time.Millisecond, 4, nil)
	m.Request("POST /v1/turns", 202, time.Millisecond)
	m.DependencyCheckFailed("llm", "unreachable")

	want := `
# HELP engram_llm_errors_total Failed calls by model and kind (unreachable, timeout, rate_limited, server, client, canceled, invalid_reply, other).
# TYPE engram_llm_errors_total counter
engram_llm_errors_total{kind="unreachable",model="m1"} 1
# HELP engram_llm_tokens_total Tokens reported by the server, by model and direction (prompt, completion).
# TYPE engram_llm_tokens_total counter
engram_llm_tokens_total{direction="completion",model="m1"} 20
engram_llm_tokens_total{direction="prompt",model="m1"} 100
# HELP engram_resolver_decisions_total Candidates resolved, by decision kind (add, confirm, update, supersede, pending, promote, noop).
# TYPE engram_resolver_decisions_total counter
engram_resolver_decisions_total{kind="confirm"} 1
# HELP engram_resolver_errors_total Candidates whose resolution failed (retried or dead-lettered by the worker).
# TYPE engram_resolver_errors_total counter
engram_resolver_errors_total 1
# HELP engram_turns_received_total Turns received through the API by outcome: accepted, duplicate, rejected, failed (not acknowledged by JetStream).
# TYPE engram_turns_received_total counter
engram_turns_received_total{outcome="accepted"} 3
engram_turns_received_total{outcome="duplicate"} 1
engram_turns_received_total{outcome="rejected"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "engram_llm_errors_total",
		"engram_llm_tokens_total", "engram_resolver_decisions_total", "engram_resolver_errors_total",
		"engram_turns_received_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.Registry(), "engram_embedding_calls_total", "engram_retrieval_results",
		"engram_http_requests_total", "engram_dependency_check_failures_total"); n != 4 {
		t.Errorf("%d series, want 4", n)
	}
	if lint, err := testutil.GatherAndLint(m.Registry()); err != nil || len(lint) > 0 {
		t.Errorf("metric lint: %v %v", lint, err)
	}
}

// The memory gauges give the largest tenants series of their own and sum the others,
// so a service of many tenants does not export a series per tenant.
func TestMemoryGaugesLimitTenants(t *testing.T) {
	t.Parallel()
	census := memory.Census{
		Counts: []memory.MemoryCount{
			{Tenant: "acme", Status: "active", Type: "semantic", Count: 5},
			{Tenant: "acme", Status: "pending", Type: "semantic", Count: 1},
			{Tenant: "globex", Status: "active", Type: "semantic", Count: 3},
			{Tenant: "hooli", Status: "active", Type: "semantic", Count: 2},
			{Tenant: "initech", Status: "active", Type: "episodic", Count: 4},
		},
		Vectors: []memory.VectorCount{
			{Tenant: "acme", Status: "active", Model: "m", Count: 5},
			{Tenant: "globex", Status: "active", Model: "m", Count: 3},
			{Tenant: "hooli", Status: "active", Model: "m", Count: 2},
			{Tenant: "hooli", Status: "archived", Model: "m", Count: 9}, // not active: not embedded
		},
	}
	for _, c := range []struct {
		limit              int
		memories, embedded string
	}{
		{2, `engram_memories{status="active",tenant="(others)",type="semantic"} 5
engram_memories{status="active",tenant="acme",type="semantic"} 5
engram_memories{status="active",tenant="initech",type="episodic"} 4
engram_memories{status="pending",tenant="acme",type="semantic"} 1
`, `engram_memories_embedded{model="m",tenant="(others)"} 5
engram_memories_embedded{model="m",tenant="acme"} 5
`},
		{0, `engram_memories{status="active",tenant="(others)",type="episodic"} 4
engram_memories{status="active",tenant="(others)",type="semantic"} 10
engram_memories{status="pending",tenant="(others)",type="semantic"} 1
`, `engram_memories_embedded{model="m",tenant="(others)"} 10
`},
	} {
		m := New(nil)
		m.LimitTenants(c.limit)
		m.setMemoryGauges(census)
		want := `# HELP engram_memories Memories by tenant, status and type (refreshed periodically).
# TYPE engram_memories gauge
` + c.memories + `# HELP engram_memories_embedded Active memories with a vector of an embedding model, by tenant (re-embedding coverage).
# TYPE engram_memories_embedded gauge
` + c.embedded
		if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "engram_memories", "engram_memories_embedded"); err != nil {
			t.Errorf("limit %d: %v", c.limit, err)
		}
	}
}
