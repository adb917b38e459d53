package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// scopeEdge is the whole edge on real parts with tokens of every kind for tenant
// "acme": full, limited to alice and bob, expired, revoked.
type scopeEdge struct {
	h      http.Handler
	tokens *httpapi.Tokens
	store  *memory.Store
	js     jetstream.JetStream
}

const scopeTenant = "acme"

var (
	fullTok    = "egm_full"
	scopedTok  = "egm_scoped"
	expiredTok = "egm_expired"
	revokedTok = "egm_revoked"
	laterTok   = "egm_later" // expires in 2999, limited to alice
)

func newScopeEdge(t *testing.T) *scopeEdge {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	store := pgtest.Store(t)
	emb := resolvertest.HashEmbedder(t)
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	retr, err := retriever.NewRetriever(store, emb, retriever.DefaultConfig(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	future := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{
		{Tenant: scopeTenant, Name: "full", SHA256: httpapi.HashToken(fullTok)},
		{Tenant: scopeTenant, Name: "scoped", SHA256: httpapi.HashToken(scopedTok), Users: []string{"alice", "bob"}},
		{Tenant: scopeTenant, Name: "expired", SHA256: httpapi.HashToken(expiredTok), ExpiresAt: &past},
		{Tenant: scopeTenant, Name: "revoked", SHA256: httpapi.HashToken(revokedTok), Revoked: true},
		{Tenant: scopeTenant, Name: "later", SHA256: httpapi.HashToken(laterTok), Users: []string{"alice"}, ExpiresAt: &future},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Memories: lifecycle.NewOps(store, emb),
		Lifecycle: lifecycle.NewLifecycle(store, js, nil, quietLogger()), Retriever: retr, Logger: quietLogger()})
	return &scopeEdge{h: h, tokens: tokens, store: store, js: js}
}

func (s *scopeEdge) do(t *testing.T, token, method, path, body string) (int, httpapi.ErrorBody, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	var eb httpapi.ErrorBody
	_ = json.Unmarshal(rec.Body.Bytes(), &eb)
	return rec.Code, eb, rec.Body.Bytes()
}

func TestTokenScopeExpiryRevocation(t *testing.T) {
	s := newScopeEdge(t)
	r := consolidator.NewResolver(s.store, resolvertest.HashEmbedder(t), nil, consolidator.ResolverConfig{}, nil)
	alice := resolvertest.Resolve(t, r, resolvertest.Candidate(scopeTenant, "alice", "Alice likes green tea."), consolidator.KindAdd).MemoryID
	carol := resolvertest.Resolve(t, r, resolvertest.Candidate(scopeTenant, "carol", "Carol likes black coffee."), consolidator.KindAdd).MemoryID

	// Retrieval records of alice and carol, made with the full token.
	retrieval := func(user string) string {
		code, _, body := s.do(t, fullTok, "POST", "/v1/search", `{"user_id":"`+user+`","query":"likes"}`)
		var resp retriever.SearchResponse
		if err := json.Unmarshal(body, &resp); code != 200 || err != nil || resp.RetrievalID == "" {
			t.Fatalf("search of %s: %d %s", user, code, body)
		}
		return "/v1/retrievals/" + resp.RetrievalID
	}
	aliceRet, carolRet := retrieval("alice"), retrieval("carol")

	turn := func(user, id string) string {
		return `{"turn_id":"` + id + `","user_id":"` + user + `","session_id":"s1","role":"user","content":"hello there"}`
	}
	mem := func(id interface{ String() string }) string { return "/v1/memories/" + id.String() }
	tests := []struct {
		name, token, method, path, body string
		status                          int
		field                           string // of the error; "" for none
		message                         string // a part of the error message
	}{
		// The token's users may be acted for everywhere.
		{"scoped: own turn", scopedTok, "POST", "/v1/turns", turn("alice", "t-a1"), 202, "", ""},
		{"scoped: own memory", scopedTok, "POST", "/v1/memories", `{"user_id":"bob","content":"Bob uses vim."}`, 202, "", ""},
		{"scoped: get own", scopedTok, "GET", mem(alice), "", 200, "", ""},
		{"scoped: history own", scopedTok, "GET", mem(alice) + "/history", "", 200, "", ""},
		{"scoped: search own", scopedTok, "POST", "/v1/search", `{"user_id":"alice","query":"tea"}`, 200, "", ""},
		{"scoped: context own", scopedTok, "POST", "/v1/context", `{"user_id":"alice","query":"tea"}`, 200, "", ""},
		{"scoped: own retrieval", scopedTok, "GET", aliceRet, "", 200, "", ""},
		{"scoped: export own", scopedTok, "GET", "/v1/users/alice/export", "", 200, "", ""},
		{"scoped: list own", scopedTok, "GET", "/v1/memories?user_id=alice", "", 200, "", ""},
		{"later: not yet expired", laterTok, "GET", mem(alice), "", 200, "", ""},

		// Any other user is a 403 naming user_id, and nothing happens.
		{"scoped: turn of another user", scopedTok, "POST", "/v1/turns", turn("carol", "t-c1"), 403, "user_id", `"carol"`},
		{"scoped: batch with another user", scopedTok, "POST", "/v1/turns",
			`{"turns":[` + turn("alice", "t-a2") + `,` + turn("carol", "t-c2") + `]}`, 403, "turns[1].user_id", `"carol"`},
		{"scoped: memory of another user", scopedTok, "POST", "/v1/memories", `{"user_id":"carol","content":"x"}`, 403, "user_id", `"carol"`},
		{"scoped: get other's memory", scopedTok, "GET", mem(carol), "", 403, "user_id", `"carol"`},
		{"scoped: history of other's", scopedTok, "GET", mem(carol) + "/history", "", 403, "user_id", ""},
		{"scoped: correct other's", scopedTok, "PATCH", mem(carol), `{"content":"hijacked"}`, 403, "user_id", ""},
		{"scoped: deprecate other's", scopedTok, "POST", mem(carol) + "/deprecate", `{}`, 403, "user_id", ""},
		{"scoped: rollback other's", scopedTok, "POST", mem(carol) + "/rollback", `{"version":1}`, 403, "user_id", ""},
		{"scoped: delete other's", scopedTok, "DELETE", mem(carol), "", 403, "user_id", ""},
		{"scoped: restore other's", scopedTok, "POST", mem(carol) + "/restore", "", 403, "user_id", ""},
		{"scoped: delete other user", scopedTok, "DELETE", "/v1/users/carol", "", 403, "user_id", `"carol"`},
		{"scoped: export other user", scopedTok, "GET", "/v1/users/carol/export", "", 403, "user_id", ""},
		{"scoped: list other user", scopedTok, "GET", "/v1/memories?user_id=carol", "", 403, "user_id", `"carol"`},
		{"scoped: list the tenant", scopedTok, "GET", "/v1/memories", "", 403, "user_id", "name one of them"},
		{"scoped: forget other user", scopedTok, "DELETE", "/v1/users/carol/memories", "", 403, "user_id", `"carol"`},
		{"scoped: import other user", scopedTok, "POST", "/v1/users/carol/import", "", 403, "user_id", ""},
		{"scoped: search other user", scopedTok, "POST", "/v1/search", `{"user_id":"carol","query":"coffee"}`, 403, "user_id", ""},
		{"scoped: search global", scopedTok, "POST", "/v1/search", `{"scope":"global","query":"coffee"}`, 403, "user_id", "name one of them"},
		{"scoped: context other user", scopedTok, "POST", "/v1/context", `{"user_id":"carol","query":"coffee"}`, 403, "user_id", ""},
		{"scoped: other's retrieval", scopedTok, "GET", carolRet, "", 403, "user_id", ""},
		{"later: bob not in scope", laterTok, "POST", "/v1/search", `{"user_id":"bob","query":"x"}`, 403, "user_id", ""},

		// A full token acts for every user.
		{"full: get carol's", fullTok, "GET", mem(carol), "", 200, "", ""},
		{"full: carol's retrieval", fullTok, "GET", carolRet, "", 200, "", ""},

		// Expired and revoked tokens are refused, saying so.
		{"expired", expiredTok, "GET", mem(alice), "", 401, "Authorization", "expired at 2020-01-01T00:00:00Z"},
		{"expired turn", expiredTok, "POST", "/v1/turns", turn("alice", "t-x"), 401, "Authorization", "expired"},
		{"revoked", revokedTok, "GET", mem(alice), "", 401, "Authorization", "revoked"},
		{"unknown", "egm_nope", "GET", mem(alice), "", 401, "Authorization", "unknown token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, eb, body := s.do(t, tc.token, tc.method, tc.path, tc.body)
			if code != tc.status || eb.Error.Field != tc.field || !strings.Contains(eb.Error.Message, tc.message) {
				t.Fatalf("%d %s; want %d naming %q with %q", code, body, tc.status, tc.field, tc.message)
			}
			if tc.status == 403 && eb.Error.Code != httpapi.CodeForbidden {
				t.Fatalf("code %q, want %q", eb.Error.Code, httpapi.CodeForbidden)
			}
		})
	}

	// Nothing of the refused requests happened: carol's memory is as it was, and the
	// batch with carol's turn published neither turn.
	d, err := s.store.Detail(testCtx(t), scopeTenant, carol)
	if err != nil || d.Memory.Version != 1 || d.Memory.Status != memory.StatusActive || d.Memory.Content != "Carol likes black coffee." {
		t.Fatalf("carol's memory after refused requests: %+v, %v", d.Memory, err)
	}
	if evs := stored(t, s.js, scopeTenant, "carol"); len(evs) != 0 {
		t.Fatalf("%d turns of carol published by refused requests", len(evs))
	}
	if evs := stored(t, s.js, scopeTenant, "alice"); len(evs) != 1 || evs[0].Turn.TurnID != "t-a1" {
		t.Fatalf("alice's turns in TURNS: %+v, want only t-a1 (the refused batch published nothing)", evs)
	}
}

// TestTokensReplace: re-reading a tokens file (Replace of its source) revokes and
// adds tokens for the next request, keeps other sources' tokens, and an invalid file
// changes nothing.
func TestTokensReplace(t *testing.T) {
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "acme", Name: "env", SHA256: httpapi.HashToken("from-env")}})
	if err != nil {
		t.Fatal(err)
	}
	file := []httpapi.TokenEntry{{Tenant: "acme", Name: "agent", SHA256: httpapi.HashToken("from-file")}}
	if err := tokens.Replace("file", file); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Check("from-file"); err != nil {
		t.Fatalf("file token: %v", err)
	}
	file[0].Revoked = true
	file = append(file, httpapi.TokenEntry{Tenant: "acme", Name: "new", SHA256: httpapi.HashToken("new-one")})
	if err := tokens.Replace("file", file); err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]error{"from-file": httpapi.ErrTokenRevoked, "new-one": nil, "from-env": nil, "gone": httpapi.ErrUnknownToken} {
		if _, err := tokens.Check(tok); err != want {
			t.Errorf("%s: %v, want %v", tok, err, want)
		}
	}
	bad := append(file, httpapi.TokenEntry{Tenant: "a b", SHA256: httpapi.HashToken("x")})
	if err := tokens.Replace("file", bad); err == nil {
		t.Fatal("an invalid entry was accepted")
	}
	if _, err := tokens.Check("new-one"); err != nil {
		t.Fatalf("a failed replace changed the set: %v", err)
	}
	// The console's Authenticate takes only tokens for the whole tenant.
	scoped := []httpapi.TokenEntry{{Tenant: "acme", SHA256: httpapi.HashToken("scoped"), Users: []string{"alice"}}}
	if err := tokens.Replace("other", scoped); err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.Authenticate("scoped"); ok {
		t.Error("Authenticate accepted a token limited to users")
	}
	if p, err := tokens.Check("scoped"); err != nil || !p.Scoped() || !p.MayActFor("alice") || p.MayActFor("bob") {
		t.Errorf("scoped principal %+v, %v", p, err)
	}
	// Expiry follows the clock.
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := tokens.Replace("exp", []httpapi.TokenEntry{{Tenant: "acme", SHA256: httpapi.HashToken("exp"), ExpiresAt: &at}}); err != nil {
		t.Fatal(err)
	}
	tokens.SetClock(func() time.Time { return at.Add(-time.Second) })
	if _, err := tokens.Check("exp"); err != nil {
		t.Errorf("a second before expiry: %v", err)
	}
	tokens.SetClock(func() time.Time { return at })
	if _, err := tokens.Check("exp"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("at expiry: %v", err)
	}
}

func TestParseTokenSpecOptions(t *testing.T) {
	entries, err := httpapi.ParseTokenSpec("acme/app=" + httpapi.HashToken("a") + ";users=alice|bob;expires=2027-01-01T00:00:00Z, acme=" + httpapi.HashToken("b") + ";revoked")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || strings.Join(entries[0].Users, ",") != "alice,bob" || entries[0].ExpiresAt == nil ||
		!entries[0].ExpiresAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || !entries[1].Revoked {
		t.Fatalf("entries %+v", entries)
	}
	for _, bad := range []string{"acme=" + httpapi.HashToken("a") + ";expires=tomorrow", "acme=" + httpapi.HashToken("a") + ";colour=red"} {
		if _, err := httpapi.ParseTokenSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := httpapi.ParseTokens("acme=" + httpapi.HashToken("a") + ";users=a b"); err == nil {
		t.Error("a user id with a space accepted")
	}
}
