package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/console"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// Tokens of the two tenants of every test.
const (
	acmeToken   = "tok-acme-0123456789"
	globexToken = "tok-globex-0123456789"
)

// Sentences of the seeded memories: the log must never contain them.
const (
	teaOld     = "Alice drinks green tea every morning"
	teaNew     = "Alice drinks black coffee every morning"
	pendingTxt = "Alice might be moving to Lisbon next spring"
	turnTxt    = "I start every day with a cup of green tea"
	globexTxt  = "Bob keeps a pet iguana called Rex"
)

// lockedBuffer collects the server log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// env is a console on real PostgreSQL and JetStream, served by the HTTP edge, with
// tenant acme's user alice (a memory at version 2 from a turn, a pending memory,
// a distilled memory) and tenant globex's user bob.
type env struct {
	t      *testing.T
	ctx    context.Context
	store  *memory.Store
	js     jetstream.JetStream
	dlq    *streams.DLQ
	tokens *httpapi.Tokens // the live token set the API and the console share
	srv    *httptest.Server
	log    *lockedBuffer
	now    *time.Time
	nowMu  *sync.Mutex
	tea    uuid.UUID // alice's corrected memory (v1 tea, v2 coffee)
	pend   uuid.UUID // alice's pending memory
	digest uuid.UUID // distilled from tea
	bob    uuid.UUID // globex's memory
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	store := pgtest.Store(t)
	_, js := natstest.Start(t).Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{
		{Tenant: "acme", Name: "ops-acme", SHA256: httpapi.HashToken(acmeToken)},
		{Tenant: "globex", Name: "ops-globex", SHA256: httpapi.HashToken(globexToken)},
	})
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ops := lifecycle.NewOps(store, nil)
	life := lifecycle.NewLifecycle(store, js, nil, logger)
	retr, err := retriever.NewRetriever(store, nil, retriever.DefaultConfig(), logger)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, store: store, js: js, dlq: streams.NewDLQ(js), tokens: tokens, log: logBuf, nowMu: &sync.Mutex{}}
	now := time.Now()
	e.now = &now
	tokens.SetClock(e.clock) // token expiry and session expiry on the same clock
	con, err := console.New(console.Config{Tokens: tokens, Reader: store, Memories: ops, Lifecycle: life,
		Retriever: retr, DLQ: e.dlq, Logger: logger, SessionTTL: time.Hour, Now: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(httpapi.New(httpapi.Config{Tokens: tokens, Memories: ops, Lifecycle: life,
		Retriever: retr, Console: con, Logger: logger}))
	t.Cleanup(e.srv.Close)
	e.seed(ops)
	return e
}

func (e *env) clock() time.Time {
	e.nowMu.Lock()
	defer e.nowMu.Unlock()
	return *e.now
}

func (e *env) advance(d time.Duration) {
	e.nowMu.Lock()
	defer e.nowMu.Unlock()
	*e.now = e.now.Add(d)
}

func (e *env) seed(ops *lifecycle.Ops) {
	t, ctx := e.t, e.ctx
	at := time.Now().Add(-48 * time.Hour).UTC()
	err := e.store.InTx(ctx, "acme", func(tx *memory.Tx) error {
		if _, err := tx.InsertTurn(ctx, memory.Turn{TurnID: "turn-1", UserID: "alice", SessionID: "morning",
			Role: memory.RoleUser, Content: turnTxt, OccurredAt: at}); err != nil {
			return err
		}
		m, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: "alice", Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatPreference, Key: "drink.morning", Content: teaOld, Importance: 0.7, Confidence: 0.8,
			ValidFrom: at, Source: memory.SourceUser, SourceTurnIDs: []string{"turn-1"}, Actor: "resolver",
			Module: "consolidator", Reason: "new preference"})
		if err != nil {
			return err
		}
		e.tea = m.ID
		p, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: "alice", Scope: memory.ScopeUser, Type: memory.Episodic,
			Category: memory.CatEvent, Content: pendingTxt, Importance: 0.5, Confidence: 0.4, Status: memory.StatusPending,
			ValidFrom: at, Source: memory.SourceUser, SourceTurnIDs: []string{"turn-1"}, Actor: "resolver", Module: "consolidator"})
		if err != nil {
			return err
		}
		e.pend = p.ID
		d, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: "alice", Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatFact, Content: "Alice has a morning routine", Importance: 0.5, Confidence: 0.7,
			ValidFrom: at, Source: memory.SourceConsolidation, SourceMemoryIDs: []string{m.ID.String()},
			Actor: "consolidator", Module: "consolidator", Reason: "distilled"})
		e.digest = d.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Correct(ctx, "acme", e.tea, lifecycle.Correction{Content: teaNew, Reason: "she switched"}, "ops-acme"); err != nil {
		t.Fatal(err)
	}
	err = e.store.InTx(ctx, "globex", func(tx *memory.Tx) error {
		m, err := tx.CreateMemory(ctx, memory.NewMemory{UserID: "bob", Scope: memory.ScopeUser, Type: memory.Semantic,
			Category: memory.CatFact, Content: globexTxt, Importance: 0.5, Confidence: 0.9, ValidFrom: at,
			Source: memory.SourceUser, Actor: "resolver", Module: "consolidator"})
		e.bob = m.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deadLetter puts a dead letter of tenant's turn for user in the DLQ, as a worker
// that gave up would, and returns its DLQ id.
func (e *env) deadLetter(tenant, user string) uint64 {
	e.t.Helper()
	orig, err := streams.TurnSubject(tenant, user)
	if err != nil {
		e.t.Fatal(err)
	}
	// engram.dlq.<stage>.<tenant>, as the worker's dead-lettering names it.
	m := nats.NewMsg(streams.DLQSubjectPrefix + streams.EncodeToken("extractor") + "." + streams.EncodeToken(tenant))
	m.Data = []byte(`{"turn_id":"t-dead","user_id":"` + user + `"}`)
	m.Header.Set(streams.HeaderTenant, tenant)
	m.Header.Set(streams.HeaderDLQStage, "extractor")
	m.Header.Set(streams.HeaderDLQSubject, orig)
	m.Header.Set(streams.HeaderDLQStream, streams.TurnsStream)
	m.Header.Set(streams.HeaderDLQSeq, "7")
	m.Header.Set(streams.HeaderDLQError, "extracting: model unavailable")
	m.Header.Set(streams.HeaderDLQAttempts, "5")
	m.Header.Set(streams.HeaderDLQMsgID, tenant+":t-dead")
	ack, err := e.js.PublishMsg(e.ctx, m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// contextCall runs POST /v1/context as an agent would and returns its retrieval id.
func (e *env) contextCall(token, user, query string) string {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"user_id": user, "query": query})
	req, _ := http.NewRequestWithContext(e.ctx, "POST", e.srv.URL+"/v1/context", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		RetrievalID string `json:"retrieval_id"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || out.RetrievalID == "" {
		e.t.Fatalf("POST /v1/context: %d %s", resp.StatusCode, b)
	}
	return out.RetrievalID
}

// checkLogClean fails when the server log holds any seeded content.
func (e *env) checkLogClean() {
	e.t.Helper()
	log := e.log.String()
	for _, s := range []string{teaOld, teaNew, pendingTxt, turnTxt, globexTxt, "green tea", "coffee"} {
		if strings.Contains(log, s) {
			e.t.Errorf("the server log contains memory content %q:\n%s", s, log)
		}
	}
}
