package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestSessionEndsWithToken: a session lasts no longer than the token that opened it:
// revoking, removing or expiring the token in the live set signs the session out, for
// pages and for actions.
func TestSessionEndsWithToken(t *testing.T) {
	globex := httpapi.TokenEntry{Tenant: "globex", Name: "ops-globex", SHA256: httpapi.HashToken(globexToken)}
	acme := func(mod func(*httpapi.TokenEntry)) []httpapi.TokenEntry {
		a := httpapi.TokenEntry{Tenant: "acme", Name: "ops-acme", SHA256: httpapi.HashToken(acmeToken)}
		mod(&a)
		return []httpapi.TokenEntry{a, globex}
	}
	tests := []struct {
		name    string
		entries func(now time.Time) []httpapi.TokenEntry // the token set after sign-in
		advance time.Duration
	}{
		{"revoked", func(time.Time) []httpapi.TokenEntry { return acme(func(a *httpapi.TokenEntry) { a.Revoked = true }) }, 0},
		{"removed", func(time.Time) []httpapi.TokenEntry { return []httpapi.TokenEntry{globex} }, 0},
		{"expires later", func(now time.Time) []httpapi.TokenEntry {
			at := now.Add(10 * time.Minute)
			return acme(func(a *httpapi.TokenEntry) { a.ExpiresAt = &at })
		}, 11 * time.Minute},
		{"renamed", func(time.Time) []httpapi.TokenEntry {
			return acme(func(a *httpapi.TokenEntry) { a.Name = "someone-else" })
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.client()
			csrf := c.signIn(acmeToken)
			if err := e.tokens.Replace("", tc.entries(e.clock())); err != nil {
				t.Fatal(err)
			}
			e.advance(tc.advance)
			if resp, _ := c.do("GET", "/console/users", nil); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("GET /console/users: %d, want the redirect to the sign-in", resp.StatusCode)
			}
			if resp, _ := c.do("POST", "/console/memories/"+e.tea.String()+"/rollback",
				url.Values{"csrf": {csrf}, "version": {"1"}}); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("rollback: %d, want 401", resp.StatusCode)
			}
			if d, _ := e.store.Detail(e.ctx, "acme", e.tea); d.Memory.Version != 2 {
				t.Errorf("the memory changed to v%d", d.Memory.Version)
			}
		})
	}
}

// TestSessionCappedAtTokenExpiry: the session cookie lasts no longer than the token.
func TestSessionCappedAtTokenExpiry(t *testing.T) {
	e := newEnv(t)
	at := e.clock().Add(20 * time.Minute)
	if err := e.tokens.Add(httpapi.TokenEntry{Tenant: "acme", Name: "short", SHA256: httpapi.HashToken("tok-short-0123456789"),
		ExpiresAt: &at}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	_, page := c.do("GET", "/console/login", nil)
	resp, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {"tok-short-0123456789"}})
	var maxAge int
	for _, ck := range resp.Cookies() {
		if ck.Name == "engram_console" {
			maxAge = ck.MaxAge
		}
	}
	if maxAge <= 0 || maxAge > 20*60 {
		t.Errorf("session cookie Max-Age %d, want at most the token's 1200 s", maxAge)
	}
	if resp, _ := c.do("GET", "/console/users", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /console/users before expiry: %d", resp.StatusCode)
	}
	e.advance(21 * time.Minute)
	if resp, _ := c.do("GET", "/console/users", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("GET /console/users after the token expired: %d, want the redirect to the sign-in", resp.StatusCode)
	}
}

// TestBadInputIs400: what PostgreSQL cannot store, an overlong reason, a missing
// version or an oversized form is a 4xx naming the field, and changes nothing.
func TestBadInputIs400(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.signIn(acmeToken)
	tea := "/console/memories/" + e.tea.String()
	long := strings.Repeat("r", 2001)
	tests := []struct {
		name   string
		method string
		path   string
		form   url.Values // csrf is added
		status int
		field  string
	}{
		{"memories user NUL", "GET", "/console/memories?user=%00", nil, 400, "user"},
		{"memories text NUL", "GET", "/console/memories?user=alice&text=%00", nil, 400, "text"},
		{"memories key invalid UTF-8", "GET", "/console/memories?user=alice&key=%FF", nil, 400, "key"},
		{"search user NUL", "GET", "/console/search?user=%00&q=tea", nil, 400, "user"},
		{"search q NUL", "GET", "/console/search?user=alice&q=tea%00", nil, 400, "q"},
		{"context user invalid UTF-8", "GET", "/console/context?user=%FF&q=tea", nil, 400, "user"},
		{"context session NUL", "GET", "/console/context?user=alice&q=tea&session=%00", nil, 400, "session"},
		{"dlq stage NUL", "GET", "/console/dlq?stage=%00", nil, 400, "stage"},
		{"correct content NUL", "POST", tea + "/correct", url.Values{"content": {"tea\x00"}, "reason": {"r"}}, 400, "content"},
		{"correct content invalid UTF-8", "POST", tea + "/correct", url.Values{"content": {"tea\xff"}}, 400, "content"},
		{"correct reason NUL", "POST", tea + "/correct", url.Values{"content": {"tea"}, "reason": {"\x00"}}, 400, "reason"},
		{"correct reason invalid UTF-8", "POST", tea + "/correct", url.Values{"content": {"tea"}, "reason": {"\xff"}}, 400, "reason"},
		{"correct reason too long", "POST", tea + "/correct", url.Values{"content": {"tea"}, "reason": {long}}, 400, "reason"},
		{"correct category NUL", "POST", tea + "/correct", url.Values{"content": {"tea"}, "category": {"\x00"}}, 400, "category"},
		{"deprecate reason NUL", "POST", tea + "/deprecate", url.Values{"reason": {"\x00"}, "confirm": {"yes"}}, 400, "reason"},
		{"deprecate reason NUL unconfirmed", "POST", tea + "/deprecate", url.Values{"reason": {"\x00"}}, 400, "reason"},
		{"deprecate reason too long", "POST", tea + "/deprecate", url.Values{"reason": {long}, "confirm": {"yes"}}, 400, "reason"},
		{"rollback reason invalid UTF-8", "POST", tea + "/rollback", url.Values{"version": {"1"}, "reason": {"\xff"}}, 400, "reason"},
		{"rollback reason too long", "POST", tea + "/rollback", url.Values{"version": {"1"}, "reason": {long}}, 400, "reason"},
		{"purge stage NUL", "POST", "/console/dlq/purge", url.Values{"stage": {"\x00"}, "confirm": {"yes"}}, 400, "stage"},
		{"confirm without version", "POST", "/console/pending/" + e.pend.String() + "/confirm", url.Values{}, 400, "version"},
		{"confirm junk version", "POST", "/console/pending/" + e.pend.String() + "/confirm", url.Values{"version": {"x"}}, 400, "version"},
		{"correct oversized form", "POST", tea + "/correct", url.Values{"content": {strings.Repeat("x", 300<<10)}}, 413, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.form != nil {
				tc.form.Set("csrf", csrf)
			}
			resp, page := c.do(tc.method, tc.path, tc.form)
			if resp.StatusCode != tc.status || !strings.Contains(page, tc.field+": ") {
				t.Errorf("%d, want %d naming %q:\n%s", resp.StatusCode, tc.status, tc.field, page)
			}
		})
	}
	for _, id := range []uuid.UUID{e.tea, e.pend} {
		d, err := e.store.Detail(e.ctx, "acme", id)
		if err != nil || d.Memory.Version != map[uuid.UUID]int{e.tea: 2, e.pend: 1}[id] || d.Memory.Status == memory.StatusDeprecated {
			t.Errorf("memory %s changed: v%d %s (%v)", id, d.Memory.Version, d.Memory.Status, err)
		}
	}
	if strings.Contains(e.log.String(), "console request failed") {
		t.Errorf("a bad input reached the log as a failure:\n%s", e.log.String())
	}
}

// TestRejectOnlyPending: rejecting a memory that is not pending changes nothing.
func TestRejectOnlyPending(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.signIn(acmeToken)
	resp, page := c.do("POST", "/console/pending/"+e.tea.String()+"/reject", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "status: ") {
		t.Errorf("reject of an active memory: %d, want 400 naming status:\n%s", resp.StatusCode, page)
	}
	if d, _ := e.store.Detail(e.ctx, "acme", e.tea); d.Memory.Status != memory.StatusActive || d.Memory.Version != 2 {
		t.Errorf("the active memory changed: v%d %s", d.Memory.Version, d.Memory.Status)
	}
}

// TestDeadLetterActionsAudited: replaying and purging dead letters write audit rows
// under the session's actor, naming the dead letters.
func TestDeadLetterActionsAudited(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.signIn(acmeToken)
	audits := func(action string) int {
		return pgtest.Count(t, e.store.Pool(), "acme",
			`SELECT count(*) FROM audit_log WHERE tenant = 'acme' AND action = $1 AND actor = 'ops-acme' AND module = 'console'`, action)
	}
	one := e.deadLetter("acme", "alice")
	if resp, _ := c.do("POST", "/console/dlq/"+itoa(one)+"/replay", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("replay: %d\n%s", resp.StatusCode, e.log.String())
	}
	if n := audits("dlq_replay"); n != 1 {
		t.Errorf("audit rows of the replay: %d, want 1", n)
	}
	if n := pgtest.Count(t, e.store.Pool(), "acme", `SELECT count(*) FROM audit_log WHERE action = 'dlq_replay'
		AND details->'ids' = to_jsonb(ARRAY[$1::bigint])`, int64(one)); n != 1 {
		t.Errorf("the replay's audit row does not name dead letter %d", one)
	}
	e.deadLetter("acme", "alice")
	e.deadLetter("acme", "alice")
	if resp, _ := c.do("POST", "/console/dlq/purge", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("purge: %d", resp.StatusCode)
	}
	if n := audits("dlq_purge"); n != 1 {
		t.Errorf("audit rows of the purge: %d, want 1", n)
	}
	if n := pgtest.Count(t, e.store.Pool(), "acme", `SELECT count(*) FROM audit_log WHERE action = 'dlq_purge'
		AND (details->>'count')::int = 2 AND jsonb_array_length(details->'ids') = 2`); n != 1 {
		t.Errorf("the purge's audit row does not name its 2 dead letters")
	}
	e.checkLogClean()
}
