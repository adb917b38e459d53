package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// client is a browser without JavaScript: a cookie jar that does not follow
// redirects, so each answer can be looked at.
type client struct {
	t   *testing.T
	e   *env
	c   *http.Client
	url string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: e.t, e: e, url: e.srv.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *client) do(method, path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(c.e.ctx, method, c.url+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in %s", page)
	}
	return m[1]
}

// signIn signs in with token and returns the session's CSRF token.
func (c *client) signIn(token string) string {
	c.t.Helper()
	_, page := c.do("GET", "/console/login", nil)
	resp, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(c.t, page)}, "token": {token}})
	if resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("sign-in: status %d", resp.StatusCode)
	}
	_, page = c.do("GET", "/console/users", nil)
	return csrfOf(c.t, page)
}

func TestSessionCookieAndCSRF(t *testing.T) {
	e := newEnv(t)
	c := e.client()

	// Pages need a session.
	if resp, _ := c.do("GET", "/console/users", nil); resp.StatusCode != http.StatusSeeOther ||
		resp.Header.Get("Location") != "/console/login" {
		t.Fatalf("anonymous /console/users: %d to %q, want a redirect to the sign-in", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The sign-in form has its own CSRF token; a wrong token is refused.
	_, page := c.do("GET", "/console/login", nil)
	if resp, _ := c.do("POST", "/console/login", url.Values{"token": {acmeToken}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in without the form's CSRF token: %d, want 403", resp.StatusCode)
	}
	_, page = c.do("GET", "/console/login", nil)
	if resp, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {"nope"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign-in with an unknown token: %d, want 401", resp.StatusCode)
	}
	_, page = c.do("GET", "/console/login", nil)
	resp, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {acmeToken}})
	var sess *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "engram_console" {
			sess = ck
		}
	}
	switch {
	case sess == nil:
		t.Fatalf("sign-in set no session cookie: %v", resp.Header["Set-Cookie"])
	case !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.MaxAge != 3600 || sess.Secure:
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Max-Age 3600, not Secure over plain HTTP", sess)
	case strings.Contains(sess.Value, "acme") || len(sess.Value) < 20:
		t.Errorf("session id %q: want an opaque random id", sess.Value)
	}
	_, page = c.do("GET", "/console/memories/"+e.tea.String(), nil)
	csrf := csrfOf(t, page)

	// A state-changing form without (or with a wrong) CSRF token changes nothing.
	for _, bad := range []string{"", "forged"} {
		resp, _ := c.do("POST", "/console/memories/"+e.tea.String()+"/rollback", url.Values{"csrf": {bad}, "version": {"1"}})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("rollback with CSRF %q: %d, want 403", bad, resp.StatusCode)
		}
	}
	d, err := e.store.Detail(e.ctx, "acme", e.tea)
	if err != nil || d.Memory.Version != 2 {
		t.Fatalf("after refused rollbacks: version %d (%v), want 2", d.Memory.Version, err)
	}
	// With it, the rollback writes version 3 through lifecycle.Ops, with the token's name.
	if resp, _ := c.do("POST", "/console/memories/"+e.tea.String()+"/rollback", url.Values{"csrf": {csrf}, "version": {"1"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("rollback: %d", resp.StatusCode)
	}
	d, _ = e.store.Detail(e.ctx, "acme", e.tea)
	last := d.Versions[len(d.Versions)-1]
	if d.Memory.Version != 3 || d.Memory.Content != teaOld || last.Change != memory.ChangeRollback || last.Actor != "ops-acme" {
		t.Errorf("after the rollback: v%d %q, last version %+v", d.Memory.Version, d.Memory.Content, last)
	}
	audit, err := e.store.ConsoleAudit(e.ctx, "acme", e.tea)
	if err != nil || len(audit) == 0 || audit[len(audit)-1].Actor != "ops-acme" {
		t.Errorf("audit after the rollback: %+v (%v)", audit, err)
	}

	// Deleting asks for confirmation first.
	resp, page = c.do("POST", "/console/memories/"+e.digest.String()+"/delete", url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `name="confirm" value="yes"`) {
		t.Errorf("delete without confirmation: %d, want the confirmation page", resp.StatusCode)
	}
	if _, err := e.store.Detail(e.ctx, "acme", e.digest); err != nil {
		t.Errorf("the memory is gone before confirmation: %v", err)
	}
	resp, _ = c.do("POST", "/console/memories/"+e.digest.String()+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if _, err := e.store.Detail(e.ctx, "acme", e.digest); resp.StatusCode != http.StatusSeeOther || err == nil {
		t.Errorf("confirmed delete: %d, memory still there: %v", resp.StatusCode, err == nil)
	}

	// Sessions expire.
	e.advance(2 * time.Hour)
	if resp, _ := c.do("GET", "/console/users", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after expiry: %d, want the redirect to the sign-in", resp.StatusCode)
	}
	e.checkLogClean()
}

// TestTenantIsolation: a tenant's console shows none of another tenant's data, even
// when asked for it by id.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	letter := e.deadLetter("acme", "alice")
	rid := e.contextCall(acmeToken, "alice", "what does alice drink in the morning")
	g := e.client()
	csrf := g.signIn(globexToken)

	_, page := g.do("GET", "/console/users", nil)
	if strings.Contains(page, "alice") || !strings.Contains(page, "bob") {
		t.Errorf("globex's users page: want bob and not alice:\n%s", page)
	}
	for _, path := range []string{"/console/memories/" + e.tea.String(), "/console/retrievals/" + rid,
		"/console/dlq/" + itoa(letter)} {
		resp, page := g.do("GET", path, nil)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(page, "tea") || strings.Contains(page, "alice") {
			t.Errorf("globex GET %s: %d, want 404 without acme's data", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/console/memories?user=alice", "/console/pending", "/console/dlq", "/console/search?user=alice&q=tea"} {
		if _, page := g.do("GET", path, nil); strings.Contains(page, "green tea") || strings.Contains(page, "coffee") ||
			strings.Contains(page, "Lisbon") ||
			strings.Contains(page, "extracting: model unavailable") {
			t.Errorf("globex GET %s shows acme's data:\n%s", path, page)
		}
	}
	// Actions on acme's rows are refused too.
	if resp, _ := g.do("POST", "/console/memories/"+e.tea.String()+"/rollback", url.Values{"csrf": {csrf}, "version": {"1"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("globex rollback of acme's memory: %d, want 404", resp.StatusCode)
	}
	if resp, _ := g.do("POST", "/console/dlq/"+itoa(letter)+"/replay", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("globex replay of acme's dead letter: %d, want 404", resp.StatusCode)
	}
	theirs := e.deadLetter("globex", "bob")
	g.do("POST", "/console/dlq/purge", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if _, err := e.dlq.Get(e.ctx, letter); err != nil {
		t.Errorf("globex's purge removed acme's dead letter: %v", err)
	}
	if _, err := e.dlq.Get(e.ctx, theirs); err == nil {
		t.Errorf("globex's purge left globex's dead letter")
	}
	d, _ := e.store.Detail(e.ctx, "acme", e.tea)
	if d.Memory.Version != 2 {
		t.Errorf("acme's memory changed to v%d", d.Memory.Version)
	}
	e.checkLogClean()
}

// TestPendingAndPages: confirm and reject pending memories; every page renders.
func TestPendingAndPages(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.signIn(acmeToken)
	for _, path := range []string{"/console/users", "/console/memories?user=alice&type=semantic&key=drink&text=coffee",
		"/console/memories/" + e.tea.String(), "/console/memories/" + e.digest.String(), "/console/pending",
		"/console/dlq", "/console/runs", "/console/retrievals", "/console/search?user=alice&q=coffee",
		"/console/context?user=alice&q=coffee", "/console/static/console.css"} {
		resp, page := c.do("GET", path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, resp.StatusCode, page)
		}
	}
	_, page := c.do("GET", "/console/memories?user=alice&text=coffee", nil)
	if !strings.Contains(page, teaNew) || strings.Contains(page, pendingTxt) {
		t.Errorf("text filter: want the coffee memory only:\n%s", page)
	}
	_, page = c.do("GET", "/console/memories/"+e.tea.String(), nil)
	for _, want := range []string{"<del>green tea </del><ins>black coffee </ins>", "she switched", "turn-1", "morning",
		turnTxt, "Alice has a morning routine"} {
		if !strings.Contains(page, want) {
			t.Errorf("memory page lacks %q", want)
		}
	}
	_, page = c.do("GET", "/console/search?user=alice&q=coffee", nil)
	if !strings.Contains(page, teaNew) || !strings.Contains(page, "/console/retrievals/") {
		t.Errorf("search page: want the hit and its retrieval:\n%s", page)
	}
	if resp, _ := c.do("POST", "/console/pending/"+e.pend.String()+"/confirm", url.Values{"csrf": {csrf}, "version": {"1"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d", resp.StatusCode)
	}
	d, _ := e.store.Detail(e.ctx, "acme", e.pend)
	if d.Memory.Status != memory.StatusActive || d.Memory.Content != pendingTxt {
		t.Errorf("confirmed pending memory: %s %q", d.Memory.Status, d.Memory.Content)
	}
	// Reject a fresh pending memory: confirmation, then a deprecation.
	var rejectMe uuid.UUID
	if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		m, err := tx.CreateMemory(e.ctx, memory.NewMemory{UserID: "alice", Scope: memory.ScopeUser, Type: memory.Episodic,
			Category: memory.CatEvent, Content: "Alice may take up rowing", Importance: 0.5, Confidence: 0.4,
			Status: memory.StatusPending, ValidFrom: time.Now().UTC(), Source: memory.SourceUser, Actor: "resolver",
			Module: "consolidator"})
		rejectMe = m.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	resp, _ := c.do("POST", "/console/pending/"+rejectMe.String()+"/reject", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	d, _ = e.store.Detail(e.ctx, "acme", rejectMe)
	if resp.StatusCode != http.StatusSeeOther || d.Memory.Status != memory.StatusDeprecated {
		t.Errorf("reject: %d, status %s", resp.StatusCode, d.Memory.Status)
	}
	if resp, _ := c.do("GET", "/console/nope", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown page: %d", resp.StatusCode)
	}
	e.checkLogClean()
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
