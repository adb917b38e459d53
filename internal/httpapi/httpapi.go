// Package httpapi is engram's one HTTP edge. New builds it from the services
// (ingest, memory operations, lifecycle, retrieval, working memory, health), consumed
// through the small interfaces of services.go; every route is in the table of
// routes.go. Requests authenticate with a bearer token that names their tenant
// (Tokens); the tenant never comes from the request itself. A token may expire, be
// revoked, or be limited to some users of its tenant (scope.go). Handlers only read and
// bound the request, call a service and write JSON; one function (fail, errors.go)
// turns every error into its answer {"error":{"code","message","field"}}, and
// unknown routes and wrong methods answer in the same shape.
package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// Principal is who a request authenticated as.
type Principal struct {
	Tenant string
	Name   string // the token's name, recorded as the actor of API writes
	// Users limits the token to these user ids of the tenant; empty: every user.
	Users []string
}

// Scoped reports whether the token may act only for some users.
func (p Principal) Scoped() bool { return len(p.Users) > 0 }

// MayActFor reports whether the token may act for userID.
func (p Principal) MayActFor(userID string) bool {
	return !p.Scoped() || (userID != "" && slices.Contains(p.Users, userID))
}

type entry struct {
	Principal
	hash      [32]byte
	expiresAt time.Time // zero: never
	revoked   bool
	source    string
}

// Tokens maps token hashes to tenants. Only hashes are held: a leaked config or
// memory dump does not reveal a usable token. Entries come from sources (Add's, the
// ENGRAM_TOKENS variable, the tokens file) that Replace swaps one at a time, so a
// re-read tokens file revokes and adds tokens without a restart.
type Tokens struct {
	mu      sync.RWMutex // Add and Replace may run while requests authenticate
	entries []entry
	now     func() time.Time // nil: time.Now
}

// TokenEntry is one line of a tokens file.
type TokenEntry struct {
	Tenant string `json:"tenant"`
	Name   string `json:"name"`
	SHA256 string `json:"sha256"` // hex of sha256(token), optionally prefixed "sha256:"
	// Users limits the token to these user ids; empty: every user of the tenant.
	Users []string `json:"users,omitempty"`
	// ExpiresAt ends the token's validity; nil: it does not expire.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Revoked refuses the token (401 "revoked") while keeping the entry on record.
	Revoked bool `json:"revoked,omitempty"`
}

// TokenFile is the JSON format of ENGRAM_TOKENS_FILE.
type TokenFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// Why a presented token is refused (Tokens.Check).
var (
	ErrUnknownToken = errors.New("unknown token")
	ErrTokenExpired = errors.New("token expired")
	ErrTokenRevoked = errors.New("token revoked")
)

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
	if err := t.Replace("", entries); err != nil {
		return nil, err
	}
	return t, nil
}

// SetClock replaces the clock expiry is judged by (tests); nil is time.Now.
func (t *Tokens) SetClock(now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}

// parseEntry validates one entry.
func parseEntry(e TokenEntry, source string) (entry, error) {
	if err := memory.CheckTenant(e.Tenant); err != nil {
		return entry{}, fmt.Errorf("tenant: %w", err)
	}
	raw := strings.TrimPrefix(e.SHA256, "sha256:")
	b, err := hex.DecodeString(raw)
	if err != nil || len(b) != 32 {
		return entry{}, fmt.Errorf("sha256: want 64 hex digits (the sha256 of the token), got %q", e.SHA256)
	}
	for i, u := range e.Users {
		if fe := memory.CheckID(fmt.Sprintf("users[%d]", i), u, memory.MaxIDLength); fe != nil {
			return entry{}, fe
		}
	}
	x := entry{Principal: Principal{Tenant: e.Tenant, Name: e.Name, Users: slices.Clone(e.Users)}, revoked: e.Revoked, source: source}
	copy(x.hash[:], b)
	if x.Name == "" {
		x.Name = "token-" + raw[:8]
	}
	if e.ExpiresAt != nil {
		if e.ExpiresAt.IsZero() {
			return entry{}, errors.New("expires_at: zero time; leave it out for a token that does not expire")
		}
		x.expiresAt = e.ExpiresAt.UTC()
	}
	return x, nil
}

// Add adds one entry (to the source Replace("") also replaces).
func (t *Tokens) Add(e TokenEntry) error {
	x, err := parseEntry(e, "")
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.entries = append(t.entries, x)
	t.mu.Unlock()
	return nil
}

// Replace swaps every entry of source for entries, all at once: either every entry
// is valid and the new set applies to the next request, or nothing changes.
func (t *Tokens) Replace(source string, entries []TokenEntry) error {
	parsed := make([]entry, 0, len(entries))
	for i, e := range entries {
		x, err := parseEntry(e, source)
		if err != nil {
			return fmt.Errorf("token %d: %w", i, err)
		}
		parsed = append(parsed, x)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := make([]entry, 0, len(t.entries)+len(parsed))
	for _, x := range t.entries {
		if x.source != source {
			kept = append(kept, x)
		}
	}
	t.entries = append(kept, parsed...)
	return nil
}

// ParseTokenSpec reads the ENGRAM_TOKENS form: comma-separated items
// "tenant[/name]=sha256:<hex>[;users=u1|u2][;expires=RFC3339][;revoked]".
func ParseTokenSpec(spec string) ([]TokenEntry, error) {
	var entries []TokenEntry
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		who, rest, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("item %d: want tenant[/name]=sha256:<hex>[;users=u1|u2][;expires=RFC3339][;revoked]", i)
		}
		parts := strings.Split(rest, ";")
		tenant, name, _ := strings.Cut(who, "/")
		e := TokenEntry{Tenant: tenant, Name: name, SHA256: strings.TrimSpace(parts[0])}
		for _, opt := range parts[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(opt), "=")
			switch k {
			case "users":
				e.Users = strings.Split(v, "|")
			case "expires":
				at, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return nil, fmt.Errorf("item %d: expires: want an RFC 3339 time, got %q", i, v)
				}
				e.ExpiresAt = &at
			case "revoked":
				e.Revoked = true
			default:
				return nil, fmt.Errorf("item %d: unknown option %q (want users=, expires= or revoked)", i, k)
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// ParseTokens reads the ENGRAM_TOKENS form (ParseTokenSpec) into a token set.
func ParseTokens(spec string) (*Tokens, error) {
	entries, err := ParseTokenSpec(spec)
	if err != nil {
		return nil, err
	}
	return NewTokens(entries)
}

// ReadTokenFile reads the entries of a JSON tokens file.
func ReadTokenFile(path string) ([]TokenEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokens file: %w", err)
	}
	var f TokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parsing tokens file %s: %w", path, err)
	}
	return f.Tokens, nil
}

// LoadTokenFile reads a JSON tokens file.
func LoadTokenFile(path string) (*Tokens, error) {
	entries, err := ReadTokenFile(path)
	if err != nil {
		return nil, err
	}
	return NewTokens(entries)
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// Check finds the principal of a presented token, or says why it is refused:
// ErrUnknownToken, ErrTokenRevoked (any entry with its hash revoked wins) or
// ErrTokenExpired (wrapped with the time). It compares against every entry in
// constant time so timing reveals neither whether nor where a hash matched.
func (t *Tokens) Check(token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrUnknownToken
	}
	p, _, err := t.CheckHash(TokenHash(token))
	return p, err
}

// Authenticate finds the principal of a token valid now for the whole tenant: an
// unknown, expired or revoked token, and one limited to some users, are refused. The
// console signs in with it, and it shows every user of the tenant.
func (t *Tokens) Authenticate(token string) (Principal, bool) {
	p, err := t.Check(token)
	if err != nil || p.Scoped() {
		return Principal{}, false
	}
	return p, true
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

// Middleware refuses requests without a valid bearer token (401 saying whether it is
// unknown, expired or revoked) and passes the principal to next through the request
// context.
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
		p, err := t.Check(strings.TrimSpace(token))
		if err != nil {
			unauthorized(w, err.Error())
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
	body, pr := readBody(w, r, maxBytes)
	if pr != nil {
		return pr
	}
	return decodeBody(body, v)
}

// decodeOptionalJSON is decodeJSON for a body that may be left out: an empty body,
// however it is framed (Content-Length: 0 or an empty chunked body), leaves v as it is.
func decodeOptionalJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) *problem {
	body, pr := readBody(w, r, maxBytes)
	if pr != nil {
		return pr
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return decodeBody(body, v)
}

// readBody reads a bounded request body that must be UTF-8.
func readBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, *problem) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newProblem(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body exceeds %d bytes", maxBytes), "")
		}
		return nil, newProblem(http.StatusBadRequest, "malformed_json", "reading body: "+err.Error(), "")
	}
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD, storing something
	// other than what was sent; JSON must be UTF-8 (RFC 8259), so refuse it.
	if !utf8.Valid(body) {
		return nil, newProblem(http.StatusBadRequest, "malformed_json",
			fmt.Sprintf("body is not valid UTF-8 (first bad byte at offset %d)", invalidUTF8At(body)), "")
	}
	return body, nil
}

// decodeBody decodes body into v, refusing unknown fields and trailing data. Messages
// describe JSON, not the Go types behind it, which mean nothing to a client.
func decodeBody(body []byte, v any) *problem {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// Free-form values (metadata) keep their numbers as sent, so that one Go cannot
	// hold (1e999999) is reported by memory.CheckMetadata with its path.
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &ute) && ute.Field == "":
			return newProblem(http.StatusBadRequest, "invalid_field", "the body must be "+jsonKind(ute.Type), "")
		case errors.As(err, &ute):
			return newProblem(http.StatusBadRequest, "invalid_field", fmt.Sprintf("%s must be %s", ute.Field, jsonKind(ute.Type)), ute.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return newProblem(http.StatusBadRequest, "unknown_field", "unknown field "+f, f)
		case errors.As(err, &se), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return newProblem(http.StatusBadRequest, "malformed_json", "malformed JSON: "+err.Error(), "")
		}
		// A field's own decoder (time.Time's) refused its value, and encoding/json
		// does not say which field: find it.
		if name, typ, ferr := refusedMember(body, v); ferr != nil {
			if typ == reflect.TypeFor[time.Time]() {
				return newProblem(http.StatusBadRequest, "invalid_field", name+" must be "+jsonKind(typ), name)
			}
			return newProblem(http.StatusBadRequest, "invalid_field", name+": "+ferr.Error(), name)
		}
		return newProblem(http.StatusBadRequest, "malformed_json", "malformed JSON: "+err.Error(), "")
	}
	// dec.More would miss a stray '}' or ']': anything but EOF is trailing data.
	if _, err := dec.Token(); err != io.EOF {
		return newProblem(http.StatusBadRequest, "malformed_json", "unexpected data after the JSON body", "")
	}
	return nil
}

// refusedMember decodes each member of the object body on its own into a fresh value
// of v's struct type, and returns the first (by name) that fails: its name as sent,
// the Go type of its field (nil when not found) and the error.
func refusedMember(body []byte, v any) (string, reflect.Type, error) {
	rt := reflect.TypeOf(v)
	if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return "", nil, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return "", nil, nil
	}
	names := slices.Sorted(maps.Keys(members))
	for _, name := range names {
		one, err := json.Marshal(map[string]json.RawMessage{name: members[name]})
		if err != nil {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.UseNumber()
		if err := dec.Decode(reflect.New(rt.Elem()).Interface()); err != nil {
			return name, fieldType(rt.Elem(), name), err
		}
	}
	return "", nil, nil
}

// fieldType is the type, without pointers, of st's field that the JSON member name
// decodes into (matched as encoding/json does, ignoring case); nil when none does.
func fieldType(st reflect.Type, name string) reflect.Type {
	for f := range st.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			t := f.Type
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			return t
		}
	}
	return nil
}

// jsonKind says in JSON's terms what a Go type accepts.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another JSON value"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number in range"
	default:
		return "another JSON value"
	}
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
