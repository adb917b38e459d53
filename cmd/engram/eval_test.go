package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/engramhq/engram/internal/eval"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/llm/fakeopenai"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
)

// testEvalSystem starts the real wiring on a fresh database and an in-process
// JetStream server, as testNode does, with no tenants: the harness makes them.
func testEvalSystem(t *testing.T) *evalSystem {
	t.Helper()
	ctx := context.Background()
	app := testApp(t)
	tokens := &httpapi.Tokens{}
	n, err := startNode(ctx, app, tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := newEvalSystem(app, n, tokens)
	if err != nil {
		n.Stop()
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	return sys
}

// TestGoldenSet runs every golden case through the real pipeline (HTTP API,
// extractor and resolver workers, PostgreSQL, JetStream) on the offline defaults.
func TestGoldenSet(t *testing.T) {
	t.Parallel()
	cases, err := eval.LoadGolden("../../testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	sys := testEvalSystem(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := eval.RunGolden(ctx, sys, cases, eval.GoldenOptions{Tokens: retriever.EstimateTokens})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if rep.Cases != len(cases) || rep.CasesPassed != rep.Cases {
		for _, c := range rep.Details {
			for _, q := range c.Queries {
				if !q.Passed {
					t.Errorf("case %s (%s), query %q: missing %v, forbidden found %v, error %q; returned:\n%s",
						c.Name, c.File, q.Query, q.Missing, q.ForbiddenFound, q.Error, q.Returned)
				}
			}
		}
		t.Fatalf("%d/%d golden cases passed:\n%s", rep.CasesPassed, len(cases), table.String())
	}
	if rep.LLMCalls != 0 {
		t.Errorf("the offline pipeline made %d LLM calls", rep.LLMCalls)
	}
	t.Logf("%d cases in %s\n%s", rep.Cases, time.Since(start).Round(time.Millisecond), table.String())
}

// TestEvalLoCoMoCommand runs "engram eval locomo" end to end on a tiny synthetic
// conversation: private embedded JetStream, the given database, JSON report.
func TestEvalLoCoMoCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	getenv := envMap(map[string]string{"ENGRAM_DATABASE_URL": pgtest.URL(t), "ENGRAM_LOG_LEVEL": "error"})
	var stdout, stderr bytes.Buffer
	page := filepath.Join(t.TempDir(), "locomo.html")
	code := run(ctx, []string{"eval", "locomo", "--data", "../../internal/eval/testdata/locomo_tiny.json", "--json", "--k", "1,5",
		"--html", page}, getenv, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("--html wrote no page with a chart (%v)", err)
	}
	var rep eval.LoCoMoReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Turns != 5 || rep.Questions == 0 || len(rep.Conversations) != 1 || rep.LLMCalls != 0 {
		t.Fatalf("report = %+v", rep)
	}
	// Every evidence turn is stored and searchable in the turns layer: with five
	// turns, recall@5 is complete.
	if got := rep.RecallAt[5].Overall; got != 1 {
		t.Errorf("recall@5 = %v, want 1; report:\n%s", got, stdout.String())
	}
	if rep.ContextTokensMean <= 0 {
		t.Errorf("context tokens = %v", rep.ContextTokensMean)
	}
	// The in-process BM25 baseline over five turns finds every evidence turn at 5,
	// and the ratio is reported.
	if got := rep.Baselines.BM25Turns.RecallAt[5].Overall; got != 1 || rep.HybridOverBM25[5] != 1 {
		t.Errorf("bm25-turns recall@5 = %v, hybrid / bm25 = %v", got, rep.HybridOverBM25)
	}
	if _, ok := rep.Baselines.MemoriesOnly.RecallAt[5]; !ok {
		t.Errorf("memories-only missing: %+v", rep.Baselines)
	}
	// The memories are listed through the export, with their lineage: every one
	// comes from a turn of the conversation.
	o := rep.Observations
	if o == nil || o.Observations != 1 || o.Turns != 5 || o.Memories == 0 || o.Rule == "" {
		t.Fatalf("observations = %+v; report:\n%s", o, stdout.String())
	}
}

func TestEvalCommandUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		env      map[string]string
		wantCode int
		wantErr  string
	}{
		{[]string{"eval"}, nil, 2, "golden or locomo"},
		{[]string{"eval", "nope"}, nil, 2, "unknown evaluation"},
		{[]string{"eval", "golden"}, nil, 2, "at least one golden file"},
		{[]string{"eval", "golden", "does-not-exist.json"}, nil, 1, "does-not-exist.json"},
		{[]string{"eval", "locomo"}, nil, 2, "--data"},
		{[]string{"eval", "locomo", "--data", "x.json", "--k", "0"}, nil, 2, "--k"},
		{[]string{"eval", "locomo", "--data", "x.json", "--layers", "facts"}, nil, 2, "--layers"},
		{[]string{"eval", "locomo", "--data", "../../internal/eval/testdata/locomo_tiny.json", "--answer"}, nil, 2, "ENGRAM_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, envMap(tt.env), &stdout, &stderr)
		if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, stderr.String(), tt.wantCode, tt.wantErr)
		}
	}
}

func TestEvalTenantIDs(t *testing.T) {
	t.Parallel()
	s := &evalSystem{runID: "20260101T000000-abcdef"}
	if got, want := s.tenantID(3, "golden-a b/c"), "eval-20260101T000000-abcdef-3-golden-a-b-c"; got != want {
		t.Errorf("tenantID = %q, want %q", got, want)
	}
	long := s.tenantID(1, strings.Repeat("x", 300))
	if len(long) != maxTenantLen {
		t.Errorf("long tenant id has %d characters", len(long))
	}
	for _, id := range []string{long, s.tenantID(2, "locomo-conv-26"), s.tenantID(4, "日本")} {
		if err := memory.CheckTenant(id); err != nil {
			t.Errorf("tenant id %q: %v", id, err)
		}
	}
}

// TestEvalLoCoMoAnswer runs `eval locomo --answer` with the chat model faked at the
// HTTP boundary: the extractor, the answerer and the judge all call it, and J counts
// the judge's verdicts.
func TestEvalLoCoMoAnswer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fake := fakeopenai.New(t)
	var judged atomic.Int32
	fake.SetChatFunc(func(req openai.ChatCompletionRequest) fakeopenai.Reply {
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		text := all.String()
		switch {
		case strings.Contains(text, "CORRECT") && strings.Contains(text, "WRONG"):
			// Judge every other answer correct, so J is neither 0 nor 1.
			if judged.Add(1)%2 == 1 {
				return fakeopenai.Reply{Content: `{"label": "CORRECT"}`}
			}
			return fakeopenai.Reply{Content: `{"label": "WRONG"}`}
		case req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil && strings.Contains(req.ResponseFormat.JSONSchema.Name, "memor"):
			return fakeopenai.Reply{Content: `{"memories": []}`}
		case strings.Contains(text, "memories"):
			return fakeopenai.Reply{Content: `{"memories": []}`}
		default:
			return fakeopenai.Reply{Content: "7 May 2023"}
		}
	})
	getenv := envMap(map[string]string{"ENGRAM_DATABASE_URL": pgtest.URL(t), "ENGRAM_LOG_LEVEL": "error",
		"ENGRAM_LLM_BASE_URL": fake.URL(), "ENGRAM_LLM_MODEL": "fake-model"})
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"eval", "locomo", "--data", "../../internal/eval/testdata/locomo_tiny.json", "--json", "--answer"},
		getenv, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	var rep eval.LoCoMoReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Answer == nil || rep.Answer.Questions == 0 {
		t.Fatalf("no answer report: %s", stdout.String())
	}
	if rep.Answer.Errors != 0 || rep.Answer.Correct != int(judged.Load()+1)/2 {
		t.Fatalf("answer report %+v after %d verdicts", rep.Answer, judged.Load())
	}
	if want := float64(rep.Answer.Correct) / float64(rep.Answer.Questions); rep.Answer.J != want {
		t.Fatalf("J = %v, want %v", rep.Answer.J, want)
	}
}
