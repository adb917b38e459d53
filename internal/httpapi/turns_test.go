package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

const (
	tenantA = "tenant-a"
	tenantB = "tenant-b"
	// A syntactically real OpenAI project key (random-looking, never issued).
	secretKey = "sk-" + "proj-" + "Xq7Lm2Pz9Rt4Kw8Nv3Bc6Hd1Fg5Js0Ay2Ue7Oi4"
)

// env is a JetStream server with engram's topology and the write service in front
// of it, behind the edge, with one token per tenant.
type env struct {
	nats   *natstest.Server
	js     jetstream.JetStream
	url    string
	tokens map[string]string // tenant → token
}

func newEnv(t *testing.T, limits ingest.Limits) *env {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	e := &env{nats: srv, js: js, tokens: map[string]string{}}
	var entries []httpapi.TokenEntry
	for _, tenant := range []string{tenantA, tenantB} {
		tok, err := httpapi.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[tenant] = tok
		entries = append(entries, httpapi.TokenEntry{Tenant: tenant, SHA256: httpapi.HashToken(tok)})
	}
	tokens, err := httpapi.NewTokens(entries)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ingest.NewService(ingest.Config{Limits: limits, Publisher: js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: quietLogger()}))
	t.Cleanup(ts.Close)
	e.url = ts.URL + "/v1/turns"
	return e
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

type reply struct {
	status int
	header http.Header
	body   httpapi.TurnsResponse
}

// post sends body with the authorization header auth ("" for none).
func post(t *testing.T, url, auth, body string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, body %s", ct, raw)
	}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return r
}

func (e *env) post(t *testing.T, tenant, body string) reply {
	t.Helper()
	return post(t, e.url, "Bearer "+e.tokens[tenant], body)
}

// stored reads every turn event on tenant's user subject, in stream order.
func stored(t *testing.T, js jetstream.JetStream, tenant, user string) []streams.TurnEvent {
	t.Helper()
	subj, err := streams.TurnSubject(tenant, user)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	s, err := js.Stream(ctx, streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	var evs []streams.TurnEvent
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return evs
		}
		if err != nil {
			t.Fatalf("reading %s from seq %d: %v", subj, seq, err)
		}
		if got := m.Header.Get(streams.HeaderTenant); got != tenant {
			t.Errorf("message %d: %s header %q, want %q", m.Sequence, streams.HeaderTenant, got, tenant)
		}
		ev, err := streams.DecodeTurnEvent(m.Data)
		if err != nil {
			t.Fatalf("message %d: %v", m.Sequence, err)
		}
		evs = append(evs, ev)
		seq = m.Sequence + 1
	}
}

// turnJSON is a valid turn of user with the given id ("" to let the server
// assign one) and content.
func turnJSON(user, id, content string) string {
	m := map[string]any{"user_id": user, "session_id": "s1", "role": "user", "content": content}
	if id != "" {
		m["turn_id"] = id
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func batchJSON(turns ...string) string { return `{"turns":[` + strings.Join(turns, ",") + `]}` }

func TestPostTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	big := strings.Repeat("x", 32<<10+1)
	many := make([]string, 1001)
	for i := range many {
		many[i] = turnJSON("u-many", "", "hi")
	}

	tests := []struct {
		name      string
		body      func(user string) string
		status    int
		accepted  int
		rejected  int
		errCode   string // top-level error code, "" for none
		errField  string
		rejField  map[int]string // index → field of a rejected turn
		storedN   int
		storedMsg string // content of the first stored turn
	}{
		{name: "single turn",
			body:   func(u string) string { return turnJSON(u, "t-1", "I prefer tea") },
			status: 202, accepted: 1, storedN: 1, storedMsg: "I prefer tea"},
		{name: "single turn, server-assigned id",
			body:   func(u string) string { return turnJSON(u, "", "hello") },
			status: 202, accepted: 1, storedN: 1, storedMsg: "hello"},
		{name: "batch object",
			body: func(u string) string {
				return batchJSON(turnJSON(u, "b-1", "one"), turnJSON(u, "b-2", "two"), turnJSON(u, "b-3", "three"))
			},
			status: 202, accepted: 3, storedN: 3, storedMsg: "one"},
		{name: "bare array",
			body:   func(u string) string { return "[" + turnJSON(u, "a-1", "one") + "," + turnJSON(u, "a-2", "two") + "]" },
			status: 202, accepted: 2, storedN: 2, storedMsg: "one"},
		{name: "one bad turn in a batch",
			body: func(u string) string {
				return batchJSON(turnJSON(u, "g-1", "good"), `{"user_id":"`+u+`","session_id":"s1","role":"boss","content":"x"}`,
					turnJSON(u, "g-3", "also good"))
			},
			status: 202, accepted: 2, rejected: 1, rejField: map[int]string{1: "turns[1].role"}, storedN: 2, storedMsg: "good"},
		{name: "over-limit content among good turns",
			body:   func(u string) string { return batchJSON(turnJSON(u, "o-1", "fine"), turnJSON(u, "o-2", big)) },
			status: 202, accepted: 1, rejected: 1, rejField: map[int]string{1: "turns[1].content"}, storedN: 1, storedMsg: "fine"},
		{name: "every turn rejected",
			body: func(u string) string {
				return batchJSON(`{"user_id":"`+u+`","role":"user","content":"x"}`, `{"user_id":"`+u+`","session_id":"s1","role":"user"}`)
			},
			status: 400, rejected: 2, errCode: memory.CodeMissingField, errField: "turns[0].session_id",
			rejField: map[int]string{0: "turns[0].session_id", 1: "turns[1].content"}},
		{name: "over-limit content",
			body:   func(u string) string { return turnJSON(u, "big", big) },
			status: 413, rejected: 1, errCode: memory.CodeTooLarge, errField: "content", rejField: map[int]string{0: "content"}},
		{name: "malformed JSON",
			body:   func(u string) string { return `{"user_id":"` + u + `",` },
			status: 400, errCode: memory.CodeMalformedJSON},
		{name: "empty body",
			body:   func(string) string { return "" },
			status: 400, errCode: memory.CodeMalformedJSON},
		{name: "unknown field tenant",
			body: func(u string) string {
				return `{"tenant":"` + tenantB + `","user_id":"` + u + `","session_id":"s1","role":"user","content":"x"}`
			},
			status: 400, rejected: 1, errCode: memory.CodeUnknownField, errField: "tenant", rejField: map[int]string{0: "tenant"}},
		{name: "unknown top-level field in a batch",
			body:   func(u string) string { return `{"tenant":"` + tenantB + `","turns":[` + turnJSON(u, "", "x") + `]}` },
			status: 400, errCode: memory.CodeUnknownField, errField: "tenant"},
		{name: "batch over 1000",
			body:   func(string) string { return batchJSON(many...) },
			status: 413, errCode: memory.CodeTooLarge, errField: "turns"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			user := fmt.Sprintf("user-%d", i)
			r := e.post(t, tenantA, tt.body(user))
			if r.status != tt.status {
				t.Fatalf("status %d, want %d (body %+v)", r.status, tt.status, r.body)
			}
			b := r.body
			if b.Accepted != tt.accepted || b.Rejected != tt.rejected || b.Failed != 0 || b.Duplicates != 0 {
				t.Errorf("counts accepted=%d rejected=%d failed=%d duplicates=%d, want %d/%d/0/0",
					b.Accepted, b.Rejected, b.Failed, b.Duplicates, tt.accepted, tt.rejected)
			}
			switch {
			case tt.errCode == "" && b.Error != nil:
				t.Errorf("unexpected error %+v", b.Error)
			case tt.errCode != "" && (b.Error == nil || b.Error.Code != tt.errCode || b.Error.Field != tt.errField):
				t.Errorf("error %+v, want code %q field %q", b.Error, tt.errCode, tt.errField)
			}
			if b.Error != nil && b.Error.Message == "" {
				t.Error("error without a message")
			}
			for j, res := range b.Results {
				if res.Index != j {
					t.Errorf("results[%d].index = %d", j, res.Index)
				}
				if want, bad := tt.rejField[j]; bad {
					if res.Status != ingest.StatusRejected || res.Error == nil || res.Error.Field != want {
						t.Errorf("results[%d] = %+v, want rejected at %s", j, res, want)
					}
					continue
				}
				if res.Status != ingest.StatusAccepted || res.TurnID == "" || res.Error != nil {
					t.Errorf("results[%d] = %+v, want accepted with a turn id", j, res)
				}
			}
			// The 202 arrived: every accepted turn must already be in the stream.
			evs := stored(t, e.js, tenantA, user)
			if len(evs) != tt.storedN {
				t.Fatalf("%d turns stored, want %d", len(evs), tt.storedN)
			}
			if tt.storedN == 0 {
				return
			}
			if evs[0].Turn.Content != tt.storedMsg {
				t.Errorf("stored content %q, want %q", evs[0].Turn.Content, tt.storedMsg)
			}
			for _, ev := range evs {
				if ev.Tenant != tenantA || ev.Turn.Tenant != tenantA || ev.Turn.ReceivedAt.IsZero() || ev.Turn.AgentID == "" {
					t.Errorf("stored event %+v: want tenant %s, received_at and agent_id set", ev, tenantA)
				}
			}
			var ids []string
			for _, res := range b.Results {
				if res.Status == ingest.StatusAccepted {
					ids = append(ids, res.TurnID)
				}
			}
			for k, ev := range evs {
				if ev.Turn.TurnID != ids[k] {
					t.Errorf("stored turn %d has id %s, response said %s", k, ev.Turn.TurnID, ids[k])
				}
			}
		})
	}
}

func TestPostTurnsServerAssignsUUIDv7(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	r := e.post(t, tenantA, turnJSON("u", "", "hello"))
	if r.status != http.StatusAccepted {
		t.Fatalf("status %d", r.status)
	}
	id, err := uuid.Parse(r.body.Results[0].TurnID)
	if err != nil || id.Version() != 7 {
		t.Errorf("turn id %q: want a UUIDv7 (%v)", r.body.Results[0].TurnID, err)
	}
}

func TestPostTurnsUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	// That a handler refuses on its own without the middleware is TestRoutesRefuseWithoutPrincipal.
	tests := []struct{ name, url, auth string }{
		{"no header", e.url, ""},
		{"basic scheme", e.url, "Basic dXNlcjpwYXNz"},
		{"bearer without token", e.url, "Bearer"},
		{"unknown token", e.url, "Bearer egm_notarealtoken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := post(t, tt.url, tt.auth, turnJSON("u-auth", "", "hello"))
			if r.status != http.StatusUnauthorized || r.body.Error == nil || r.body.Error.Code != "unauthenticated" {
				t.Errorf("status %d, error %+v; want 401 unauthenticated", r.status, r.body.Error)
			}
			if r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if evs := stored(t, e.js, tenantA, "u-auth"); len(evs) != 0 {
		t.Errorf("%d turns stored by unauthenticated requests", len(evs))
	}
}

func TestPostTurnsTenantComesFromToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	ctx := testCtx(t)

	// The same user and turn id under two tenants are two different turns.
	for _, tenant := range []string{tenantA, tenantB} {
		r := e.post(t, tenant, turnJSON("shared-user", "same-id", "from "+tenant))
		if r.status != http.StatusAccepted || r.body.Accepted != 1 {
			t.Fatalf("%s: status %d, %+v", tenant, r.status, r.body)
		}
	}
	for _, tenant := range []string{tenantA, tenantB} {
		evs := stored(t, e.js, tenant, "shared-user")
		if len(evs) != 1 || evs[0].Turn.Content != "from "+tenant || evs[0].Tenant != tenant {
			t.Errorf("%s: stored %+v", tenant, evs)
		}
	}

	// Tenant A cannot name tenant B in the body, in any position.
	for _, body := range []string{
		`{"tenant":"` + tenantB + `","user_id":"victim","session_id":"s1","role":"user","content":"x"}`,
		batchJSON(`{"user_id":"victim","session_id":"s1","role":"user","content":"x","tenant":"` + tenantB + `"}`),
	} {
		r := e.post(t, tenantA, body)
		if r.status != http.StatusBadRequest || r.body.Error == nil || r.body.Error.Code != memory.CodeUnknownField {
			t.Errorf("body %s: status %d, %+v; want 400 unknown_field", body, r.status, r.body.Error)
		}
	}
	s, err := e.js.Stream(ctx, streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{tenantA, tenantB} {
		subj, _ := streams.TurnSubject(tenant, "victim")
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj))
		if err != nil {
			t.Fatal(err)
		}
		if n := info.State.Subjects[subj]; n != 0 {
			t.Errorf("%d messages on %s", n, subj)
		}
	}
}

func TestPostTurnsDuplicate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	body := turnJSON("u-dup", "turn-42", "I prefer tea")
	first := e.post(t, tenantA, body)
	second := e.post(t, tenantA, body)
	if first.status != 202 || first.body.Results[0].Status != ingest.StatusAccepted {
		t.Fatalf("first: %d %+v", first.status, first.body)
	}
	if second.status != 202 || second.body.Duplicates != 1 || second.body.Results[0].Status != ingest.StatusDuplicate ||
		second.body.Results[0].TurnID != "turn-42" {
		t.Fatalf("second: %d %+v", second.status, second.body)
	}
	if evs := stored(t, e.js, tenantA, "u-dup"); len(evs) != 1 {
		t.Errorf("%d copies stored, want 1", len(evs))
	}

	// Within one batch too.
	r := e.post(t, tenantA, batchJSON(turnJSON("u-dup2", "d", "a"), turnJSON("u-dup2", "d", "a")))
	if r.status != 202 || r.body.Accepted != 1 || r.body.Duplicates != 1 {
		t.Errorf("batch with a repeated id: %d %+v", r.status, r.body)
	}
	if evs := stored(t, e.js, tenantA, "u-dup2"); len(evs) != 1 {
		t.Errorf("%d copies stored, want 1", len(evs))
	}
}

func TestPostTurnsSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	r := e.post(t, tenantA, batchJSON(turnJSON("u-restart", "r-1", "before the crash"), turnJSON("u-restart", "r-2", "also")))
	if r.status != http.StatusAccepted || r.body.Accepted != 2 {
		t.Fatalf("status %d, %+v", r.status, r.body)
	}
	e.nats.Restart(t)
	evs := stored(t, e.js, tenantA, "u-restart")
	if len(evs) != 2 || evs[0].Turn.TurnID != "r-1" || evs[0].Turn.Content != "before the crash" {
		t.Fatalf("after restart: %+v", evs)
	}
	// The API keeps working over the reconnected connection, and still dedupes.
	r = e.post(t, tenantA, turnJSON("u-restart", "r-1", "before the crash"))
	if r.status != http.StatusAccepted || r.body.Duplicates != 1 {
		t.Errorf("resend after restart: %d %+v", r.status, r.body)
	}
}

func TestPostTurnsRedactsSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	body := batchJSON(
		turnJSON("u-secret", "s-1", "my key is "+secretKey+" keep it safe"),
		`{"turn_id":"s-2","user_id":"u-secret","session_id":"s1","role":"tool","content":"call failed",`+
			`"tool":{"name":"http","status":"failure","error":"401 for Authorization: Bearer `+secretKey+`"}}`,
	)
	r := e.post(t, tenantA, body)
	if r.status != http.StatusAccepted || r.body.Accepted != 2 {
		t.Fatalf("status %d, %+v", r.status, r.body)
	}
	evs := stored(t, e.js, tenantA, "u-secret")
	if len(evs) != 2 {
		t.Fatalf("%d stored", len(evs))
	}
	for _, text := range []string{evs[0].Turn.Content, evs[1].Turn.Tool.Error} {
		if strings.Contains(text, secretKey) || strings.Contains(text, "Xq7Lm2Pz9") || !strings.Contains(text, "[REDACTED:") {
			t.Errorf("stored %q: secret not redacted", text)
		}
	}
	if !strings.HasPrefix(evs[0].Turn.Content, "my key is [REDACTED:") || !strings.HasSuffix(evs[0].Turn.Content, " keep it safe") {
		t.Errorf("redaction damaged the rest of the content: %q", evs[0].Turn.Content)
	}
}

func TestPostTurnsJetStreamFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	ctx := testCtx(t)

	// No stream behind the subjects: nothing can be acknowledged.
	if err := e.js.DeleteStream(ctx, streams.TurnsStream); err != nil {
		t.Fatal(err)
	}
	body := batchJSON(turnJSON("u-fail", "f-1", "one"), turnJSON("u-fail", "f-2", "two"), `{"role":"user"}`)
	r := e.post(t, tenantA, body)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("status %d Retry-After %q, want 503 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
	if r.body.Failed != 2 || r.body.Rejected != 1 || r.body.Error == nil || r.body.Error.Code != ingest.CodeUnavailable {
		t.Fatalf("body %+v", r.body)
	}
	for _, res := range r.body.Results[:2] {
		if res.Status != ingest.StatusFailed || !res.Retryable || res.TurnID == "" {
			t.Errorf("result %+v, want failed and retryable with its id", res)
		}
	}

	// A stream that refuses the third message: two acks, one failure is still a 503.
	cfg := streams.StreamConfigs(streams.Config{})[0]
	cfg.MaxMsgs, cfg.Discard = 2, jetstream.DiscardNew
	if _, err := e.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	body = batchJSON(turnJSON("u-fail", "f-1", "one"), turnJSON("u-fail", "f-2", "two"), turnJSON("u-fail", "f-3", "three"))
	r = e.post(t, tenantA, body)
	if r.status != http.StatusServiceUnavailable || r.body.Accepted != 2 || r.body.Failed != 1 ||
		r.body.Results[2].Status != ingest.StatusFailed {
		t.Fatalf("partial failure: status %d, %+v", r.status, r.body)
	}

	// The client resends the same request once JetStream recovers: the two
	// stored turns are duplicates, nothing is stored twice.
	if err := streams.EnsureTopology(ctx, e.js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	r = e.post(t, tenantA, body)
	if r.status != http.StatusAccepted || r.body.Duplicates != 2 || r.body.Accepted != 1 {
		t.Fatalf("resend: status %d, %+v", r.status, r.body)
	}
	if evs := stored(t, e.js, tenantA, "u-fail"); len(evs) != 3 {
		t.Errorf("%d stored, want 3", len(evs))
	}
}

func TestPostTurnsBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{MaxBodyBytes: 1024})
	big := batchJSON(turnJSON("u-big", "", strings.Repeat("y", 600)), turnJSON("u-big", "", strings.Repeat("y", 600)))
	r := e.post(t, tenantA, big)
	if r.status != http.StatusRequestEntityTooLarge || r.body.Error == nil || r.body.Error.Code != memory.CodeTooLarge {
		t.Errorf("status %d, %+v; want 413 too_large", r.status, r.body.Error)
	}
	// Without Content-Length the reader's own bound must hold.
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, e.url, io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+e.tokens[tenantA])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked: status %d, want 413", resp.StatusCode)
	}
	if evs := stored(t, e.js, tenantA, "u-big"); len(evs) != 0 {
		t.Errorf("%d stored", len(evs))
	}
}

func TestPostTurnsMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, e.url, nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens[tenantA])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}
