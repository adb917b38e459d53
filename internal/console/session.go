package console

import (
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"
)

const (
	sessionCookie = "engram_console"
	loginCookie   = "engram_console_login" // the sign-in form's CSRF token, before a session exists
)

// session is one sign-in: the tenant and actor of the token presented, and the
// CSRF token of its forms.
type session struct {
	tenant, actor string
	csrf          string
	expires       time.Time
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

func (ss *sessions) create(tenant, actor string) (string, session) {
	s := session{tenant: tenant, actor: actor, csrf: rand.Text(), expires: ss.now().Add(ss.ttl)}
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

// session returns the request's live session.
func (c *Console) session(r *http.Request) (session, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return session{}, false
	}
	return c.sessions.get(ck.Value)
}

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
	ck, err := r.Cookie(loginCookie)
	if err != nil || !validCSRF(ck.Value, r.PostFormValue("csrf")) {
		c.showLogin(w, r, http.StatusForbidden, "The sign-in form expired; try again.")
		return
	}
	p, ok := c.cfg.Tokens.Authenticate(r.PostFormValue("token"))
	if !ok || p.Tenant == "" {
		c.log.Info("console sign-in refused")
		c.showLogin(w, r, http.StatusUnauthorized, "Unknown token.")
		return
	}
	id, _ := c.sessions.create(p.Tenant, p.Name)
	http.SetCookie(w, cookie(r, loginCookie, "", -1))
	http.SetCookie(w, cookie(r, sessionCookie, id, int(c.cfg.SessionTTL/time.Second)))
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
