package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
)

func TestNewTokenAndHash(t *testing.T) {
	t.Parallel()
	a, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := httpapi.NewToken()
	if !strings.HasPrefix(a, "egm_") || len(a) != 44 || a == b {
		t.Errorf("tokens %q, %q: want distinct egm_ + 40 characters", a, b)
	}
	h := httpapi.HashToken("secret")
	if h != "sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b" {
		t.Errorf("HashToken = %s", h)
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{
		{Tenant: "acme", Name: "ci", SHA256: httpapi.HashToken("tok-acme")},
		{Tenant: "globex", SHA256: strings.TrimPrefix(httpapi.HashToken("tok-globex"), "sha256:")},
		{Tenant: "acme", Name: "upper", SHA256: strings.ToUpper(strings.TrimPrefix(httpapi.HashToken("tok-up"), "sha256:"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tokens.Len() != 3 {
		t.Fatalf("Len = %d", tokens.Len())
	}
	tests := []struct {
		token  string
		ok     bool
		tenant string
		name   string
	}{
		{"tok-acme", true, "acme", "ci"},
		{"tok-globex", true, "globex", "token-" + strings.TrimPrefix(httpapi.HashToken("tok-globex"), "sha256:")[:8]},
		{"tok-up", true, "acme", "upper"},
		{"tok-acme ", false, "", ""},
		{"TOK-ACME", false, "", ""},
		{"", false, "", ""},
		{"sha256:" + strings.TrimPrefix(httpapi.HashToken("tok-acme"), "sha256:"), false, "", ""}, // the hash is not the token
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			t.Parallel()
			p, ok := tokens.Authenticate(tt.token)
			if ok != tt.ok || p.Tenant != tt.tenant || p.Name != tt.name {
				t.Errorf("Authenticate = %+v, %v; want %s/%s, %v", p, ok, tt.tenant, tt.name, tt.ok)
			}
		})
	}
}

func TestNewTokensRejects(t *testing.T) {
	t.Parallel()
	good := httpapi.HashToken("x")
	tests := []struct {
		name  string
		entry httpapi.TokenEntry
	}{
		{"empty tenant", httpapi.TokenEntry{SHA256: good}},
		{"tenant with a dot-star", httpapi.TokenEntry{Tenant: "a.*", SHA256: good}},
		{"tenant with a space", httpapi.TokenEntry{Tenant: "a b", SHA256: good}},
		{"short hash", httpapi.TokenEntry{Tenant: "a", SHA256: "sha256:abcd"}},
		{"not hex", httpapi.TokenEntry{Tenant: "a", SHA256: strings.Repeat("z", 64)}},
		{"plain token instead of hash", httpapi.TokenEntry{Tenant: "a", SHA256: "egm_abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := httpapi.NewTokens([]httpapi.TokenEntry{tt.entry}); err == nil {
				t.Errorf("NewTokens(%+v) succeeded", tt.entry)
			}
		})
	}
}

func TestParseTokens(t *testing.T) {
	t.Parallel()
	spec := " acme/ci=" + httpapi.HashToken("a") + ", ,globex=" + httpapi.HashToken("b") + ","
	tokens, err := httpapi.ParseTokens(spec)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tokens.Authenticate("a"); !ok || p.Tenant != "acme" || p.Name != "ci" {
		t.Errorf("a → %+v %v", p, ok)
	}
	if p, ok := tokens.Authenticate("b"); !ok || p.Tenant != "globex" {
		t.Errorf("b → %+v %v", p, ok)
	}
	for _, bad := range []string{"acme", "acme=sha256:00", "=" + httpapi.HashToken("c")} {
		if _, err := httpapi.ParseTokens(bad); err == nil {
			t.Errorf("ParseTokens(%q) succeeded", bad)
		}
	}
}

func TestLoadTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "tokens.json")
	f := httpapi.TokenFile{Tokens: []httpapi.TokenEntry{{Tenant: "acme", Name: "agent", SHA256: httpapi.HashToken("t1")}}}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(good, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.LoadTokenFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tokens.Authenticate("t1"); !ok || p.Tenant != "acme" {
		t.Errorf("t1 → %+v %v", p, ok)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"tokens":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := httpapi.LoadTokenFile(path); err == nil {
			t.Errorf("LoadTokenFile(%s) succeeded", path)
		}
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "acme", Name: "ci", SHA256: httpapi.HashToken("tok")}})
	if err != nil {
		t.Fatal(err)
	}
	h := tokens.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := httpapi.PrincipalFrom(r.Context())
		if !ok {
			t.Error("handler reached without a principal")
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"tenant": p.Tenant, "name": p.Name})
	}))
	tests := []struct {
		name   string
		auth   []string // nil: no header
		status int
	}{
		{"bearer", []string{"Bearer tok"}, 200},
		{"lower-case scheme", []string{"bearer tok"}, 200},
		{"extra spaces", []string{"Bearer   tok  "}, 200},
		{"no header", nil, 401},
		{"empty header", []string{""}, 401},
		{"basic", []string{"Basic dG9rOg=="}, 401},
		{"scheme only", []string{"Bearer"}, 401},
		{"bearer, empty token", []string{"Bearer "}, 401},
		{"unknown token", []string{"Bearer nope"}, 401},
		{"token without scheme", []string{"tok"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
			for _, a := range tt.auth {
				req.Header.Add("Authorization", a)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			if tt.status == 200 {
				var got map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got["tenant"] != "acme" || got["name"] != "ci" {
					t.Errorf("principal %v (%v)", got, err)
				}
				return
			}
			var eb httpapi.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Code != "unauthenticated" ||
				eb.Error.Message == "" || eb.Error.Field != "Authorization" {
				t.Errorf("body %s (%v)", rec.Body, err)
			}
			if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(rec.Body.String(), "nope") {
				t.Error("the presented token is echoed in the error")
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	type req struct {
		Query string         `json:"query"`
		Limit int            `json:"limit"`
		At    *time.Time     `json:"at"`
		Meta  map[string]any `json:"meta"`
		Tags  []string       `json:"tags"`
	}
	tests := []struct {
		name    string
		body    string
		max     int64
		status  int // 0: success
		code    string
		field   string
		message string // a part of the message ("": not checked)
	}{
		{"ok", `{"query":"tea","limit":3}`, 1024, 0, "", "", ""},
		{"ok with trailing space", "{\"query\":\"tea\"}\n  ", 1024, 0, "", "", ""},
		{"unknown field", `{"query":"tea","tenant":"b"}`, 1024, 400, "unknown_field", "tenant", ""},
		{"wrong type", `{"limit":"three"}`, 1024, 400, "invalid_field", "limit", ""},
		{"malformed", `{"query":`, 1024, 400, "malformed_json", "", ""},
		{"empty", ``, 1024, 400, "malformed_json", "", ""},
		{"too large", `{"query":"` + strings.Repeat("x", 100) + `"}`, 50, 413, "too_large", "", ""},
		{"second value", `{"query":"a"} {"query":"b"}`, 1024, 400, "malformed_json", "", ""},
		{"trailing brace", `{"query":"a"}}`, 1024, 400, "malformed_json", "", ""},
		{"trailing bracket", `{"query":"a"}]`, 1024, 400, "malformed_json", "", ""},
		{"trailing garbage", `{"query":"a"}x`, 1024, 400, "malformed_json", "", ""},
		{"not a time", `{"query":"a","at":"yesterday"}`, 1024, 400, "invalid_field", "at", "RFC 3339"},
		{"time of the wrong type", `{"at":3}`, 1024, 400, "invalid_field", "at", "RFC 3339"},
		{"array body", `[]`, 1024, 400, "invalid_field", "", "the body must be a JSON object"},
		{"string body", `"x"`, 1024, 400, "invalid_field", "", "the body must be a JSON object"},
		{"object field given an array", `{"meta":[1]}`, 1024, 400, "invalid_field", "meta", "meta must be a JSON object"},
		{"array field given a string", `{"tags":"a"}`, 1024, 400, "invalid_field", "tags", "tags must be a JSON array"},
		{"integer field given a fraction", `{"limit":1.5}`, 1024, 400, "invalid_field", "limit", "limit must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			rec := httptest.NewRecorder()
			var v req
			ok := httpapi.DecodeJSON(rec, r, tt.max, &v)
			if tt.status == 0 {
				if !ok || v.Query != "tea" {
					t.Errorf("DecodeJSON = %v, %+v (%s)", ok, v, rec.Body)
				}
				return
			}
			if ok {
				t.Fatalf("DecodeJSON accepted %q", tt.body)
			}
			var eb httpapi.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
				t.Fatalf("error body %s: %v", rec.Body, err)
			}
			if rec.Code != tt.status || eb.Error.Code != tt.code || eb.Error.Field != tt.field {
				t.Errorf("%d %+v, want %d %s field %q", rec.Code, eb.Error, tt.status, tt.code, tt.field)
			}
			if !strings.Contains(eb.Error.Message, tt.message) {
				t.Errorf("message %q, want it to say %q", eb.Error.Message, tt.message)
			}
			// A client reads the message: Go's type names mean nothing to it.
			for _, goName := range []string{"httpapi_test.", "interface {}", "map[", "[]string", "time.Time", "Time.UnmarshalJSON"} {
				if strings.Contains(eb.Error.Message, goName) {
					t.Errorf("message %q names a Go type (%s)", eb.Error.Message, goName)
				}
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	httpapi.WriteError(rec, http.StatusConflict, "conflict", "a <b> & c", "")
	if rec.Code != http.StatusConflict || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"error":{"code":"conflict","message":"a <b> & c"}}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("body %q, want %q", rec.Body, want)
	}
}
