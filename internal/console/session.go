package console

import (
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
)

const (
	sessionCookie = "engram_console"
	loginCookie   = "engram_console_login" // the sign-in form's CSRF token, before a session exists
)

// session is one sign-in: the tenant and actor of the token presented, the token's
// hash (never the token) to re-check it on every request, and the CSRF token of its
// forms.
type session struct {
	tenant, actor string
	token         [32]byte
	csrf          string
	expires       time.Time // the sign-in's TTL or the token's expiry, whichever is first
}

// sessions are the signed-in sessions of this process. Ids are 128 random bits: a
// guess is as hard as guessing a token, and nothing about the session is in the id.
type sessions struct {
	mu   sync.Mutex
	byID map[string]session
	ttl  time.Duration
	now  func() time.Time
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{byID: map[string]session{}, ttl: ttl, now: now}
}

// create opens a session for the token of hash h, ending no later than the token
// (tokenExpires zero: it does not expire).
func (ss *sessions) create(p httpapi.Principal, h [32]byte, tokenExpires time.Time) (string, session) {
	s := session{tenant: p.Tenant, actor: p.Name, token: h, csrf: rand.Text(), expires: ss.now().Add(ss.ttl)}
	if !tokenExpires.IsZero() && tokenExpires.Before(s.expires) {
		s.expires = tokenExpires
	}
	id := rand.Text()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for k, v := range ss.byID { // sign-ins are rare: sweeping here keeps the map bounded
		if !now.Before(v.expires) {
			delete(ss.byID, k)
		}
	}
	ss.byID[id] = s
	return id, s
}

func (ss *sessions) get(id string) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	if !ok {
		return session{}, false
	}
	if !ss.now().Before(s.expires) {
		delete(ss.byID, id)
		return session{}, false
	}
	return s, true
}

func (ss *sessions) drop(id string) {
	ss.mu.Lock()
	delete(ss.byID, id)
	ss.mu.Unlock()
}

func validCSRF(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// session returns the request's live session: one whose token is still valid, in
// the live token set the API authenticates with, for the same tenant and name, so
// that revoking or expiring a token (a re-read tokens file) also signs its sessions
// out.
func (c *Console) session(r *http.Request) (session, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return session{}, false
	}
	s, ok := c.sessions.get(ck.Value)
	if !ok {
		return session{}, false
	}
	if p, _, err := c.cfg.Tokens.CheckHash(s.token); err != nil || !sessionToken(p) ||
		p.Tenant != s.tenant || p.Name != s.actor {
		c.sessions.drop(ck.Value)
		c.log.Info("console session ended with its token", "tenant", s.tenant, "actor", s.actor)
		return session{}, false
	}
	return s, true
}

// sessionToken reports whether a token may open a console session: the console shows
// every user of the tenant, so a token limited to some users may not.
func sessionToken(p httpapi.Principal) bool { return p.Tenant != "" && !p.Scoped() }

func cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: Prefix + "/", MaxAge: maxAge, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
}

type loginData struct{ Error string }

// loginPage shows the sign-in form with a fresh login CSRF token (double submit: the
// cookie and the form field must match).
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.showLogin(w, r, http.StatusOK, "")
}

func (c *Console) showLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := rand.Text()
	http.SetCookie(w, cookie(r, loginCookie, tok, 600))
	c.render(w, r, status, "login.html", nil, view{Title: "Sign in", CSRF: tok, Data: loginData{Error: msg}})
}

// login exchanges a tenant API token for a session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		c.formError(w, r, nil, err)
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || !validCSRF(ck.Value, r.PostFormValue("csrf")) {
		c.showLogin(w, r, http.StatusForbidden, "The sign-in form expired; try again.")
		return
	}
	token := r.PostFormValue("token")
	h := httpapi.TokenHash(token)
	p, expires, err := c.cfg.Tokens.CheckHash(h)
	if token == "" || err != nil || !sessionToken(p) {
		c.log.Info("console sign-in refused")
		c.showLogin(w, r, http.StatusUnauthorized, "Unknown token.")
		return
	}
	id, s := c.sessions.create(p, h, expires)
	http.SetCookie(w, cookie(r, loginCookie, "", -1))
	// The cookie lasts as long as the session: the TTL, or less when the token expires sooner.
	http.SetCookie(w, cookie(r, sessionCookie, id, max(1, int(s.expires.Sub(c.cfg.Now())/time.Second))))
	c.log.Info("console sign-in", "tenant", p.Tenant, "actor", p.Name)
	http.Redirect(w, r, Prefix+"/users", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ session) error {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		c.sessions.drop(ck.Value)
	}
	http.SetCookie(w, cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
	return nil
}
