// Package httpapi is engram's one HTTP edge. New builds it from the services
// (ingest, memory operations, lifecycle, retrieval, working memory, health), consumed
// through the small interfaces of services.go; every route is in the table of
// routes.go. Requests authenticate with a bearer token that names their tenant
// (Tokens); the tenant never comes from the request itself. Handlers only read and
// bound the request, call a service and write JSON; one function (fail, errors.go)
// turns every error into its answer {"error":{"code","message","field"}}, and
// unknown routes and wrong methods answer in the same shape.
package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Principal is who a request authenticated as.
type Principal struct {
	Tenant string
	Name   string // the token's name, recorded as the actor of API writes
}

type entry struct {
	Principal
	hash [32]byte
}

// Tokens maps token hashes to tenants. Only hashes are held: a leaked config or
// memory dump does not reveal a usable token.
type Tokens struct {
	mu      sync.RWMutex // Add may run while requests authenticate (eval, dev)
	entries []entry
}

// TokenEntry is one line of a tokens file.
type TokenEntry struct {
	Tenant string `json:"tenant"`
	Name   string `json:"name"`
	SHA256 string `json:"sha256"` // hex of sha256(token), optionally prefixed "sha256:"
}

// TokenFile is the JSON format of ENGRAM_TOKENS_FILE.
type TokenFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// HashToken is the stored form of a token: "sha256:<hex>".
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(h[:])
}

// NewToken makes a random API token.
func NewToken() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 40)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("generating a token: %w", err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return "egm_" + string(b), nil
}

// NewTokens builds a token set from entries, validating each.
func NewTokens(entries []TokenEntry) (*Tokens, error) {
	t := &Tokens{}
	for i, e := range entries {
		if err := t.Add(e); err != nil {
			return nil, fmt.Errorf("token %d: %w", i, err)
		}
	}
	return t, nil
}

// Add adds one entry.
func (t *Tokens) Add(e TokenEntry) error {
	if err := memory.CheckTenant(e.Tenant); err != nil {
		return fmt.Errorf("tenant: %w", err)
	}
	raw := strings.TrimPrefix(e.SHA256, "sha256:")
	b, err := hex.DecodeString(raw)
	if err != nil || len(b) != 32 {
		return fmt.Errorf("sha256: want 64 hex digits (the sha256 of the token), got %q", e.SHA256)
	}
	var h [32]byte
	copy(h[:], b)
	name := e.Name
	if name == "" {
		name = "token-" + raw[:8]
	}
	t.mu.Lock()
	t.entries = append(t.entries, entry{Principal: Principal{Tenant: e.Tenant, Name: name}, hash: h})
	t.mu.Unlock()
	return nil
}

// ParseTokens reads the ENGRAM_TOKENS form: comma-separated
// "tenant[/name]=sha256:<hex>" items.
func ParseTokens(spec string) (*Tokens, error) {
	var entries []TokenEntry
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		who, hash, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("item %d: want tenant[/name]=sha256:<hex>", i)
		}
		tenant, name, _ := strings.Cut(who, "/")
		entries = append(entries, TokenEntry{Tenant: tenant, Name: name, SHA256: hash})
	}
	return NewTokens(entries)
}

// LoadTokenFile reads a JSON tokens file.
func LoadTokenFile(path string) (*Tokens, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokens file: %w", err)
	}
	var f TokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parsing tokens file %s: %w", path, err)
	}
	return NewTokens(f.Tokens)
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// Authenticate finds the principal of a presented token. It compares against every
// entry in constant time so timing reveals neither whether nor where a hash matched.
func (t *Tokens) Authenticate(token string) (Principal, bool) {
	if token == "" {
		return Principal{}, false
	}
	h := sha256.Sum256([]byte(token))
	t.mu.RLock()
	defer t.mu.RUnlock()
	found := -1
	for i := range t.entries {
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, false
	}
	return t.entries[found].Principal, true
}

type principalKey struct{}

// withPrincipal stores the principal in a context.
func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the authenticated principal of a request context.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Middleware refuses requests without a valid bearer token (401) and passes the
// principal to next through the request context.
func (t *Tokens) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		if h == "" {
			unauthorized(w, "missing Authorization: Bearer <token>")
			return
		}
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			unauthorized(w, "Authorization must use the Bearer scheme")
			return
		}
		p, ok := t.Authenticate(strings.TrimSpace(token))
		if !ok {
			unauthorized(w, "unknown token")
			return
		}
		next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), p)))
	})
}

// unauthorized writes a 401 with the WWW-Authenticate challenge that RFC 7235
// requires on every 401.
func unauthorized(w http.ResponseWriter, message string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="engram"`)
	WriteError(w, http.StatusUnauthorized, "unauthenticated", message, "Authorization")
}

// Error is the JSON error body.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// ErrorBody wraps Error as engram's API returns it.
type ErrorBody struct {
	Error Error `json:"error"`
}

// WriteJSON writes v as JSON with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteError writes {"error":{"code","message","field"}}.
func WriteError(w http.ResponseWriter, status int, code, message, field string) {
	WriteJSON(w, status, ErrorBody{Error: Error{Code: code, Message: message, Field: field}})
}

// DecodeJSON decodes a bounded request body into v, refusing unknown fields and
// trailing data, and writes a 4xx naming the problem when it fails.
func DecodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) bool {
	if err := decodeJSON(w, r, maxBytes, v); err != nil {
		writeProblem(w, err)
		return false
	}
	return true
}

// decodeJSON is DecodeJSON returning the answer to a bad body as a *problem.
func decodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) *problem {
	tooLarge := func() *problem {
		return newProblem(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body exceeds %d bytes", maxBytes), "")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return newProblem(http.StatusBadRequest, "malformed_json", "reading body: "+err.Error(), "")
	}
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD, storing something
	// other than what was sent; JSON must be UTF-8 (RFC 8259), so refuse it.
	if !utf8.Valid(body) {
		return newProblem(http.StatusBadRequest, "malformed_json",
			fmt.Sprintf("body is not valid UTF-8 (first bad byte at offset %d)", invalidUTF8At(body)), "")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// Free-form values (metadata) keep their numbers as sent, so that one Go cannot
	// hold (1e999999) is reported by memory.CheckMetadata with its path.
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute):
			return newProblem(http.StatusBadRequest, "invalid_field", fmt.Sprintf("%s must be %s", ute.Field, ute.Type), ute.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return newProblem(http.StatusBadRequest, "unknown_field", "unknown field "+f, f)
		default:
			return newProblem(http.StatusBadRequest, "malformed_json", "malformed JSON: "+err.Error(), "")
		}
	}
	// dec.More would miss a stray '}' or ']': anything but EOF is trailing data.
	if _, err := dec.Token(); err != io.EOF {
		return newProblem(http.StatusBadRequest, "malformed_json", "unexpected data after the JSON body", "")
	}
	return nil
}

// invalidUTF8At is the offset of the first byte of b that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
