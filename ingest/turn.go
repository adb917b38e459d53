package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// defaultAgentID is the agent_id of a turn that does not name its agent: most
// deployments have one agent per user, and memories scoped to "agent" still need
// a stable owner.
const defaultAgentID = "default"

// Limits bounds what one request may carry. A zero field means its default.
type Limits struct {
	MaxContentBytes  int           // content (and tool error) in bytes; default 32 KiB
	MaxIDLen         int           // every id; default 128
	MaxFutureSkew    time.Duration // how far occurred_at may lie ahead of now; default 5m
	MaxBatch         int           // turns per request; default 1000
	MaxMetadataBytes int           // metadata as sent (JSON); default 8 KiB
	MaxBodyBytes     int64         // whole request body; default 40 MiB
}

// DefaultLimits returns the limits the API runs with unless configured.
func DefaultLimits() Limits {
	return Limits{
		MaxContentBytes:  32 << 10,
		MaxIDLen:         128,
		MaxFutureSkew:    memory.DefaultMaxFutureSkew,
		MaxBatch:         1000,
		MaxMetadataBytes: 8 << 10,
		// A full batch of maximal turns: 1000 × (32 KiB content + 8 KiB metadata).
		MaxBodyBytes: 40 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxContentBytes <= 0 {
		l.MaxContentBytes = d.MaxContentBytes
	}
	if l.MaxIDLen <= 0 {
		l.MaxIDLen = d.MaxIDLen
	}
	if l.MaxFutureSkew <= 0 {
		l.MaxFutureSkew = d.MaxFutureSkew
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = d.MaxBatch
	}
	if l.MaxMetadataBytes <= 0 {
		l.MaxMetadataBytes = d.MaxMetadataBytes
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	return l
}

// TurnResult is the outcome for the turn at Index in the request: either a
// valid Turn (Err nil) or the first problem found in it.
type TurnResult struct {
	Index int
	Path  string // the turn's JSON path: "turns[3]", or "" for a single-turn body
	Turn  memory.Turn
	Err   *memory.FieldError
}

// isTurnField reports whether key is a field of a turn event v1. Anything else is
// rejected: in particular "tenant", which only authentication may set.
func isTurnField(key string) bool {
	switch key {
	case "turn_id", "user_id", "agent_id", "session_id", "task_id", "role",
		"content", "tool", "occurred_at", "metadata", "name":
		return true
	}
	return false
}

func isToolField(key string) bool { return key == "name" || key == "status" || key == "error" }

func isBatchField(key string) bool { return key == "turns" }

// DecodeTurns parses a request body holding one turn object, {"turns": [...]}
// or a bare array of turns, and validates every turn against limits. now is the
// receive time: it defaults occurred_at, bounds its future skew and becomes
// ReceivedAt.
//
// A body that is too large, not JSON, of the wrong shape, empty or over
// MaxBatch fails as a whole (err non-nil, no results). Otherwise there is one
// result per turn, in order, and a bad turn does not fail the others. Tenant is
// left empty for the caller to set from authentication. err is a concrete
// pointer: compare it with nil before storing it in an error interface.
func DecodeTurns(body []byte, limits Limits, now time.Time) (turns []TurnResult, err *memory.FieldError) {
	limits = limits.withDefaults()
	if int64(len(body)) > limits.MaxBodyBytes {
		return nil, &memory.FieldError{Code: memory.CodeTooLarge,
			Message: fmt.Sprintf("body is %d bytes, the limit is %d", len(body), limits.MaxBodyBytes)}
	}
	return DecodeTurnsFrom(bytes.NewReader(body), limits, now)
}

// errBodyTooLarge is what bodyReader returns past Limits.MaxBodyBytes.
var errBodyTooLarge = errors.New("body too large")

// bodyReader reads at most limit bytes of r and keeps the first error r returned, so
// that a failed read is reported as what it was, not as the JSON it cut short.
type bodyReader struct {
	r     io.Reader
	limit int64
	n     int64
	err   error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		// One byte more than the limit tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := io.ReadFull(b.r, one[:]); n > 0 {
			b.err = errBodyTooLarge
			return 0, b.err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.limit-b.n {
		p = p[:b.limit-b.n]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// DecodeTurnsFrom is DecodeTurns reading the body from r as a stream: each turn is
// decoded and validated as it arrives, and only the decoded turns are kept (not the
// raw body, nor the raw JSON of each turn), so a batch costs about one copy of its
// content in memory. A read error of r fails the body as a whole with
// memory.CodeMalformedJSON (memory.CodeTooLarge past Limits.MaxBodyBytes); callers
// that know better what a read error means (an HTTP MaxBytesError) check it first.
func DecodeTurnsFrom(r io.Reader, limits Limits, now time.Time) (turns []TurnResult, err *memory.FieldError) {
	limits = limits.withDefaults()
	body := &bodyReader{r: r, limit: limits.MaxBodyBytes}
	turns, err = decodeStream(json.NewDecoder(body), limits, now.UTC())
	if body.err != nil {
		// The JSON error, if any, only says where the read stopped.
		if errors.Is(body.err, errBodyTooLarge) {
			return nil, &memory.FieldError{Code: memory.CodeTooLarge,
				Message: fmt.Sprintf("body exceeds %d bytes", limits.MaxBodyBytes)}
		}
		return nil, &memory.FieldError{Code: memory.CodeMalformedJSON, Message: "reading body: " + body.err.Error()}
	}
	if err != nil {
		return nil, err
	}
	return turns, nil
}

// decodeStream reads the one JSON value of the body from dec: a turn, an array of turns
// or {"turns": [...]}, then the end of the input.
func decodeStream(dec *json.Decoder, l Limits, now time.Time) ([]TurnResult, *memory.FieldError) {
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, &memory.FieldError{Code: memory.CodeMalformedJSON, Message: "body is empty"}
	}
	if err != nil {
		return nil, malformed(err)
	}
	var turns []TurnResult
	var ferr *memory.FieldError
	switch tok {
	case json.Delim('['):
		turns, ferr = decodeElems(dec, "", l, now)
	case json.Delim('{'):
		turns, ferr = decodeObjectBody(dec, l, now)
	default:
		// Still read the value to the end: a syntax error is reported as one.
		if _, err := dec.Token(); err != nil && err != io.EOF {
			return nil, malformed(err)
		}
		return nil, &memory.FieldError{Code: memory.CodeMalformedJSON,
			Message: `body must be a turn object, {"turns": [...]} or an array of turns`}
	}
	if ferr != nil {
		return nil, ferr
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, &memory.FieldError{Code: memory.CodeMalformedJSON,
				Message: fmt.Sprintf("invalid JSON at byte %d: data after the top-level value", dec.InputOffset())}
		}
		return nil, malformed(err)
	}
	return turns, nil
}

// decodeObjectBody reads a top-level object (its '{' already read): {"turns": [...]}
// streams the batch; any other object is one turn. An object with a "turns" member is
// an envelope wherever the member is, so that {"tenant": …, "turns": […]} is refused
// for its tenant rather than read as a turn.
func decodeObjectBody(dec *json.Decoder, l Limits, now time.Time) ([]TurnResult, *memory.FieldError) {
	var (
		obj     object             // the members of the single turn
		objErr  *memory.FieldError // its first problem, as objectFields finds it
		scratch json.RawMessage    // values skipped after objErr
		first   string             // the first member's key
	)
	for n := 0; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		key, _ := tok.(string) // inside an object, Token only returns strings here
		if n == 0 {
			first = key
		}
		if key == "turns" {
			if n == 0 {
				return decodeEnvelope(dec, l, now)
			}
			// An envelope whose first member is not "turns": that member is unknown.
			return nil, unknownField("", first)
		}
		if objErr == nil {
			if !isTurnField(key) {
				objErr = unknownField("", key)
			} else if _, dup := obj.get(key); dup {
				objErr = &memory.FieldError{Code: memory.CodeInvalidField, Field: key, Message: "duplicate field"}
			}
		}
		if objErr != nil {
			// The turn is refused already; its other members are only read past, but
			// still looked at for a "turns" that makes the body an envelope.
			if err := dec.Decode(&scratch); err != nil {
				return nil, malformed(err)
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, malformed(err)
		}
		obj.keys = append(obj.keys, key)
		obj.vals = append(obj.vals, v)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, malformed(err)
	}
	if objErr != nil {
		return []TurnResult{{Index: 0, Err: objErr}}, nil
	}
	return []TurnResult{decodeTurnObject(0, "", obj, l, now)}, nil
}

// decodeEnvelope reads the rest of {"turns": [...]} after its "turns" key.
func decodeEnvelope(dec *json.Decoder, l Limits, now time.Time) ([]TurnResult, *memory.FieldError) {
	const prefix = "turns"
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if tok != json.Delim('[') {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: prefix, Message: "must be an array"}
	}
	turns, ferr := decodeElems(dec, prefix, l, now)
	if ferr != nil {
		return nil, ferr
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		if key, _ := tok.(string); key == prefix {
			return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: prefix, Message: "duplicate field"}
		} else {
			return nil, unknownField("", key)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, malformed(err)
	}
	return turns, nil
}

// decodeElems reads the elements of an array of turns (its '[' already read), decoding
// and validating each as it arrives, and fails as soon as there are more than
// MaxBatch so that an oversized batch is not decoded first.
func decodeElems(dec *json.Decoder, prefix string, l Limits, now time.Time) ([]TurnResult, *memory.FieldError) {
	var turns []TurnResult
	var raw json.RawMessage // reused: a turn keeps nothing of its raw JSON
	for dec.More() {
		i := len(turns)
		if i == l.MaxBatch {
			return nil, &memory.FieldError{Code: memory.CodeTooLarge, Field: prefix,
				Message: fmt.Sprintf("batch has more than %d turns", l.MaxBatch)}
		}
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed(err)
		}
		turns = append(turns, decodeTurn(i, prefix+"["+strconv.Itoa(i)+"]", raw, l, now))
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, malformed(err)
	}
	if len(turns) == 0 {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: prefix, Message: "batch is empty"}
	}
	return turns, nil
}

// malformed describes a JSON syntax error met while decoding, with its byte offset.
func malformed(err error) *memory.FieldError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return &memory.FieldError{Code: memory.CodeMalformedJSON, Message: fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error())}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &memory.FieldError{Code: memory.CodeMalformedJSON, Message: "invalid JSON: unexpected end of body"}
	}
	return &memory.FieldError{Code: memory.CodeMalformedJSON, Message: "invalid JSON: " + err.Error()}
}

func unknownField(path, key string) *memory.FieldError {
	msg := "unknown field"
	if key == "tenant" {
		msg = "unknown field: the tenant comes from the API token, not the body"
	}
	return &memory.FieldError{Code: memory.CodeUnknownField, Field: joinPath(path, truncate(key, 64)), Message: msg}
}

// decodeTurn decodes and validates one turn; path is its JSON path ("" for a
// single-turn body, "turns[3]" in a batch).
func decodeTurn(index int, path string, raw []byte, limits Limits, now time.Time) TurnResult {
	if len(raw) == 0 || raw[0] != '{' {
		return TurnResult{Index: index, Path: path, Err: &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "a turn must be a JSON object"}}
	}
	obj, ferr := objectFields(raw, path, isTurnField)
	if ferr != nil {
		return TurnResult{Index: index, Path: path, Err: ferr}
	}
	return decodeTurnObject(index, path, obj, limits, now)
}

// decodeTurnObject is decodeTurn for a turn already split into its members.
func decodeTurnObject(index int, path string, obj object, limits Limits, now time.Time) TurnResult {
	t, ferr := parseTurn(path, obj, limits, now)
	if ferr == nil {
		// The store's own rules, shared with every other entry point (turns published
		// straight onto NATS are checked by the same function when consumed).
		ferr = memory.CheckTurn(path, t)
	}
	if ferr != nil {
		return TurnResult{Index: index, Path: path, Err: ferr}
	}
	return TurnResult{Index: index, Path: path, Turn: t}
}

func parseTurn(path string, obj object, l Limits, now time.Time) (memory.Turn, *memory.FieldError) {
	var t memory.Turn
	p := func(name string) string { return joinPath(path, name) }

	// Fields are checked in a fixed order so that the reported error is stable.
	var err *memory.FieldError
	if t.TurnID, err = obj.optionalID(p("turn_id"), "turn_id", l); err != nil {
		return t, err
	}
	if t.TurnID == "" {
		id, uerr := uuid.NewV7()
		if uerr != nil {
			// Only fails when the system's random source does; surface it as ours.
			return t, &memory.FieldError{Code: memory.CodeInvalidField, Field: p("turn_id"),
				Message: fmt.Sprintf("generate turn id: %v", uerr)}
		}
		t.TurnID = id.String()
	}
	if t.UserID, err = obj.requiredID(p("user_id"), "user_id", l); err != nil {
		return t, err
	}
	if t.AgentID, err = obj.optionalID(p("agent_id"), "agent_id", l); err != nil {
		return t, err
	}
	if t.AgentID == "" {
		t.AgentID = defaultAgentID
	}
	if t.SessionID, err = obj.requiredID(p("session_id"), "session_id", l); err != nil {
		return t, err
	}
	if t.TaskID, err = obj.optionalID(p("task_id"), "task_id", l); err != nil {
		return t, err
	}

	role, present, err := obj.str(p("role"), "role")
	if err != nil {
		return t, err
	}
	if !present || role == "" {
		return t, &memory.FieldError{Code: memory.CodeMissingField, Field: p("role"), Message: "role is required"}
	}
	t.Role = memory.Role(role)
	if !t.Role.Valid() {
		return t, &memory.FieldError{Code: memory.CodeInvalidField, Field: p("role"),
			Message: fmt.Sprintf("unknown role %q: want user, assistant, tool or system", truncate(role, 32))}
	}

	if t.Tool, err = parseTool(p("tool"), obj, l); err != nil {
		return t, err
	}

	if t.Content, _, err = obj.str(p("content"), "content"); err != nil {
		return t, err
	}
	if err := checkText(p("content"), t.Content, l.MaxContentBytes); err != nil {
		return t, err
	}
	// A tool turn may be just its tool object (a call that returned nothing).
	if strings.TrimSpace(t.Content) == "" && (t.Role != memory.RoleTool || t.Tool == nil) {
		return t, &memory.FieldError{Code: memory.CodeMissingField, Field: p("content"), Message: "content is empty"}
	}

	if t.OccurredAt, err = parseOccurredAt(p("occurred_at"), obj, l, now); err != nil {
		return t, err
	}
	t.ReceivedAt = now

	if t.Metadata, err = parseMetadata(p("metadata"), obj, l); err != nil {
		return t, err
	}
	// The speaker's name, as in OpenAI's message "name": kept in the metadata (key
	// MetadataName) so the extractor can write "Ana moved to …" rather than "The user …".
	name, present, err := obj.str(p("name"), "name")
	if err != nil {
		return t, err
	}
	if present && name != "" {
		if ferr := checkName(p("name"), name); ferr != nil {
			return t, ferr
		}
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		t.Metadata[MetadataName] = name
	}
	return t, nil
}

// MetadataName is the metadata key that holds a turn's speaker name.
const MetadataName = "name"

// maxNameRunes bounds a speaker name (OpenAI allows 64 characters).
const maxNameRunes = 64

func checkName(path, name string) *memory.FieldError {
	if utf8.RuneCountInString(name) > maxNameRunes || strings.TrimSpace(name) == "" {
		return &memory.FieldError{Code: memory.CodeInvalidField, Field: path,
			Message: fmt.Sprintf("must be 1-%d characters, not only spaces", maxNameRunes)}
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must not hold control characters or invalid UTF-8"}
		}
	}
	return nil
}

func parseTool(path string, obj object, l Limits) (*memory.ToolCall, *memory.FieldError) {
	raw, ok := obj.get("tool")
	if !ok || isNull(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be an object"}
	}
	tobj, ferr := objectFields(raw, path, isToolField)
	if ferr != nil {
		return nil, ferr
	}
	var tc memory.ToolCall
	var err *memory.FieldError
	if tc.Name, _, err = tobj.str(joinPath(path, "name"), "name"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(tc.Name) == "" {
		return nil, &memory.FieldError{Code: memory.CodeMissingField, Field: joinPath(path, "name"), Message: "tool name is required"}
	}
	if err := checkText(joinPath(path, "name"), tc.Name, l.MaxIDLen); err != nil {
		return nil, err
	}
	if tc.Status, _, err = tobj.str(joinPath(path, "status"), "status"); err != nil {
		return nil, err
	}
	switch tc.Status {
	case "success", "failure":
	case "":
		return nil, &memory.FieldError{Code: memory.CodeMissingField, Field: joinPath(path, "status"),
			Message: "tool status is required: success or failure"}
	default:
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: joinPath(path, "status"),
			Message: fmt.Sprintf("unknown tool status %q: want success or failure", truncate(tc.Status, 32))}
	}
	if tc.Error, _, err = tobj.str(joinPath(path, "error"), "error"); err != nil {
		return nil, err
	}
	if err := checkText(joinPath(path, "error"), tc.Error, l.MaxContentBytes); err != nil {
		return nil, err
	}
	return &tc, nil
}

func parseOccurredAt(path string, obj object, l Limits, now time.Time) (time.Time, *memory.FieldError) {
	s, present, err := obj.str(path, "occurred_at")
	if err != nil {
		return time.Time{}, err
	}
	if !present || s == "" {
		return now, nil
	}
	at, perr := time.Parse(time.RFC3339Nano, s)
	if perr != nil {
		return time.Time{}, &memory.FieldError{Code: memory.CodeInvalidField, Field: path,
			Message: fmt.Sprintf("%q is not an RFC 3339 timestamp", truncate(s, 64))}
	}
	at = at.UTC()
	// The rule turns published straight onto NATS are held to as well.
	if fe := memory.CheckOccurredAt(path, at, now, l.MaxFutureSkew); fe != nil {
		return time.Time{}, fe
	}
	return at, nil
}

func parseMetadata(path string, obj object, l Limits) (map[string]any, *memory.FieldError) {
	raw, ok := obj.get("metadata")
	if !ok || isNull(raw) {
		return nil, nil
	}
	if len(raw) > l.MaxMetadataBytes {
		return nil, &memory.FieldError{Code: memory.CodeTooLarge, Field: path,
			Message: fmt.Sprintf("metadata is %d bytes, the limit is %d", len(raw), l.MaxMetadataBytes)}
	}
	if raw[0] != '{' {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be a JSON object"}
	}
	if !utf8.Valid(raw) {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep large integers (ids, timestamps) exact, and see 1e999999 as it was sent
	var md map[string]any
	if err := dec.Decode(&md); err != nil {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "decode metadata: " + err.Error()}
	}
	// NUL, numbers out of float64's range and over-deep nesting: PostgreSQL or the
	// workers would refuse them; better a 400 now than a dead letter later.
	if fe := memory.CheckMetadata(path, md, l.MaxMetadataBytes); fe != nil {
		return nil, fe
	}
	return md, nil
}

// checkText bounds a free-text field and refuses what PostgreSQL text cannot hold
// (memory.CheckText: NUL, invalid UTF-8).
func checkText(path, s string, maxBytes int) *memory.FieldError {
	return memory.CheckText(path, s, maxBytes)
}

// object is a JSON object's members in order, kept raw so that every field is
// decoded (and its error reported) on its own, and duplicates are visible.
type object struct {
	keys []string
	vals []json.RawMessage
}

func (o object) get(key string) (json.RawMessage, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// objectFields splits a syntactically valid JSON object into its members. It
// stops at the first key that allowed rejects (so a body of a million unknown
// keys costs nothing more) and at duplicate keys: encoding/json would silently
// keep the last one, so two stages could disagree about whose turn it is. Keys
// match exactly; encoding/json would also accept "User_ID".
func objectFields(raw []byte, path string, allowed func(string) bool) (object, *memory.FieldError) {
	var o object
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return o, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be a JSON object"}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return o, &memory.FieldError{Code: memory.CodeMalformedJSON, Field: path, Message: "read key: " + err.Error()}
		}
		key, ok := tok.(string)
		if !ok {
			return o, &memory.FieldError{Code: memory.CodeMalformedJSON, Field: path, Message: "object key is not a string"}
		}
		if !allowed(key) {
			return o, unknownField(path, key)
		}
		if _, dup := o.get(key); dup {
			return o, &memory.FieldError{Code: memory.CodeInvalidField, Field: joinPath(path, key), Message: "duplicate field"}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, &memory.FieldError{Code: memory.CodeMalformedJSON, Field: joinPath(path, key), Message: "read value: " + err.Error()}
		}
		o.keys = append(o.keys, key)
		o.vals = append(o.vals, v)
	}
	return o, nil
}

// hasKey reports whether the JSON object raw has a top-level member key.
func hasKey(raw []byte, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if tok == key {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// arrayElems splits a JSON array into its elements, failing as soon as there
// are more than maxN so that an oversized batch is not materialised first.
func arrayElems(raw []byte, path string, maxN int) ([]json.RawMessage, *memory.FieldError) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be an array"}
	}
	var elems []json.RawMessage
	for dec.More() {
		if len(elems) == maxN {
			return nil, &memory.FieldError{Code: memory.CodeTooLarge, Field: path,
				Message: fmt.Sprintf("batch has more than %d turns", maxN)}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, &memory.FieldError{Code: memory.CodeMalformedJSON, Field: path, Message: "read element: " + err.Error()}
		}
		elems = append(elems, v)
	}
	if len(elems) == 0 {
		return nil, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "batch is empty"}
	}
	return elems, nil
}

// str returns a string member; null counts as absent. It rejects invalid UTF-8,
// which encoding/json would otherwise replace with U+FFFD without a word.
func (o object) str(path, key string) (s string, present bool, ferr *memory.FieldError) {
	raw, ok := o.get(key)
	if !ok || isNull(raw) {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", true, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be a string"}
	}
	if !utf8.Valid(raw) {
		return "", true, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "must be valid UTF-8"}
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, &memory.FieldError{Code: memory.CodeInvalidField, Field: path, Message: "decode string: " + err.Error()}
	}
	return s, true, nil
}

// optionalID returns the id at key, "" when absent, null or empty (clients that
// serialise zero values send "").
func (o object) optionalID(path, key string, l Limits) (string, *memory.FieldError) {
	s, _, err := o.str(path, key)
	if err != nil || s == "" {
		return "", err
	}
	if !memory.ValidID(s, l.MaxIDLen) {
		return "", invalidID(path, s, l)
	}
	return s, nil
}

func (o object) requiredID(path, key string, l Limits) (string, *memory.FieldError) {
	s, err := o.optionalID(path, key, l)
	if err == nil && s == "" {
		err = &memory.FieldError{Code: memory.CodeMissingField, Field: path, Message: key + " is required"}
	}
	return s, err
}

func invalidID(path, s string, l Limits) *memory.FieldError {
	if len(s) > l.MaxIDLen {
		return &memory.FieldError{Code: memory.CodeInvalidField, Field: path,
			Message: fmt.Sprintf("is %d characters, the limit is %d", len(s), l.MaxIDLen)}
	}
	return &memory.FieldError{Code: memory.CodeInvalidField, Field: path,
		Message: fmt.Sprintf("%q: ids may only contain A-Z a-z 0-9 . _ : @ -", truncate(s, 64))}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// truncate shortens client-supplied text echoed in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// syntaxMessage describes why body is not valid JSON, with the byte offset.
func syntaxMessage(body []byte) string {
	var v json.RawMessage // only the syntax check runs; nothing is built
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	}
	if err != nil {
		return "invalid JSON: " + err.Error()
	}
	return "invalid JSON"
}
