package memory

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// What the store and the workers can hold. Every entry point (POST /v1/turns, turns
// published straight onto NATS, explicit memories, corrections, search and context
// queries) checks its input with the functions below, so that what is accepted can be
// stored: a value PostgreSQL refuses would otherwise be accepted with 202 and then fail
// in a worker on every delivery and replay.
const (
	// MaxTurnContentBytes bounds a turn's content and tool error in the store: far
	// above what ingest accepts by default (32 KiB), and low enough that a turn's
	// tsvector stays under PostgreSQL's 1 MB limit.
	MaxTurnContentBytes = 256 << 10
	// MaxMetadataBytes bounds a metadata object (as JSON) in the store.
	MaxMetadataBytes = 64 << 10
	// MaxMetadataDepth bounds how deeply metadata objects and arrays nest: deeper
	// documents are abuse, not data, and cost stack in every JSON parser on the way.
	MaxMetadataDepth = 20
)

// CheckText explains why s cannot be stored as PostgreSQL text (nil when it can):
// it holds a NUL byte (text cannot), is not valid UTF-8 (the database encoding
// refuses it), or is longer than maxBytes (0: no bound). field names it in the error.
func CheckText(field, s string, maxBytes int) *FieldError {
	if maxBytes > 0 && len(s) > maxBytes {
		return &FieldError{Code: CodeTooLarge, Field: field, Message: fmt.Sprintf("is %d bytes, the limit is %d", len(s), maxBytes)}
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return Invalid(field, "contains a NUL byte (at byte %d), which PostgreSQL text cannot hold", i)
	}
	if !utf8.ValidString(s) {
		return Invalid(field, "is not valid UTF-8")
	}
	return nil
}

// MaxReasonBytes bounds the reason of a manual change (it is kept in every version
// row and audit entry it writes).
const MaxReasonBytes = 2000

// Field is one decoded string under the name its caller gave it, and the bound on it
// (0: only storability), for CheckTexts and CheckIDs: the API's edge and the console
// check what they decode with them before calling a service.
type Field struct {
	Name     string
	Value    string
	MaxBytes int
}

// CheckTexts returns the first field CheckText refuses, nil when all can be stored.
func CheckTexts(fields ...Field) error {
	if fe := checkFields(fields); fe != nil {
		return fe
	}
	return nil // an untyped nil: a nil *FieldError would be a non-nil error
}

// checkFields is CheckTexts for callers that return a *FieldError.
func checkFields(fields []Field) *FieldError {
	for _, f := range fields {
		if fe := CheckText(f.Name, f.Value, f.MaxBytes); fe != nil {
			return fe
		}
	}
	return nil
}

// CheckIDs returns the first field that is set and not a valid id (CheckID), as an
// invalid field; nil when all are valid or empty.
func CheckIDs(fields ...Field) error {
	for _, f := range fields {
		if f.Value == "" {
			continue
		}
		if fe := CheckID(f.Name, f.Value, MaxIDLength); fe != nil {
			fe.Code = CodeInvalidField
			return fe
		}
	}
	return nil
}

// CheckTime explains why t cannot be stored and sent back (nil when it can): its year
// in UTC is outside 0–9999, which RFC 3339, and so every JSON encoding of it (events,
// answers), cannot write. An offset can move a time that is in range as sent out of
// it in UTC ("9999-12-31T23:59:59-23:59"), so the check is on the UTC year.
func CheckTime(field string, t time.Time) *FieldError {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return Invalid(field, "is in year %d in UTC; timestamps must fall in years 0000 to 9999 (UTC)", y)
	}
	return nil
}

// DefaultMaxFutureSkew is how far ahead of the receiver's clock a turn's occurred_at may
// lie: clients' clocks drift, but a turn from hours ahead is a bug, and would sort after
// every turn that really comes later.
const DefaultMaxFutureSkew = 5 * time.Minute

// CheckOccurredAt explains why at is no time a turn can have happened at (nil when it
// can): before 1970 (a zero value or a seconds-vs-milliseconds bug in the client, never
// real conversation history) or more than maxFutureSkew after now. HTTP ingest and turns
// published straight onto NATS share it.
func CheckOccurredAt(field string, at, now time.Time, maxFutureSkew time.Duration) *FieldError {
	if at.After(now.Add(maxFutureSkew)) {
		return Invalid(field, "%s is more than %s in the future", at.UTC().Format(time.RFC3339), maxFutureSkew)
	}
	return CheckSince1970(field, at)
}

// CheckSince1970 is CheckOccurredAt's floor alone, for a consumer that leaves the
// ceiling to the edge that set it.
func CheckSince1970(field string, at time.Time) *FieldError {
	if at.Unix() < 0 {
		return Invalid(field, "%s is before 1970", at.UTC().Format(time.RFC3339))
	}
	return nil
}

// CheckMetadata explains why md cannot be stored as jsonb and read back by the
// workers (nil when it can): a string or key CheckText refuses, a number outside
// float64's range (such as 1e999999: Go decodes it to an error, PostgreSQL's numeric
// overflows), NaN or an infinity, nesting deeper than MaxMetadataDepth, a value JSON
// cannot encode, or more than maxBytes of JSON (0: MaxMetadataBytes). The error names
// the offending member, e.g. "turns[0].metadata.scores[2]".
func CheckMetadata(field string, md map[string]any, maxBytes int) *FieldError {
	if md == nil {
		return nil
	}
	if maxBytes <= 0 || maxBytes > MaxMetadataBytes {
		maxBytes = MaxMetadataBytes
	}
	if fe := checkJSONValue(field, md, 1); fe != nil {
		return fe
	}
	b, err := json.Marshal(md)
	if err != nil {
		return Invalid(field, "cannot be encoded as JSON: %v", err)
	}
	if len(b) > maxBytes {
		return &FieldError{Code: CodeTooLarge, Field: field, Message: fmt.Sprintf("is %d bytes as JSON, the limit is %d", len(b), maxBytes)}
	}
	return nil
}

// checkJSONValue walks a decoded JSON value (from encoding/json, with or without
// UseNumber); depth is the nesting level of v's container.
func checkJSONValue(path string, v any, depth int) *FieldError {
	switch v := v.(type) {
	case nil, bool, string, json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return checkScalar(path, v)
	case map[string]any:
		if depth > MaxMetadataDepth {
			return Invalid(path, "nests deeper than %d levels", MaxMetadataDepth)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first problem reported is the same every time
		for _, k := range keys {
			p := path + "." + k
			if fe := CheckText(p, k, 0); fe != nil {
				fe.Message = "key " + fe.Message
				return fe
			}
			if fe := checkJSONValue(p, v[k], depth+1); fe != nil {
				return fe
			}
		}
		return nil
	case []any:
		if depth > MaxMetadataDepth {
			return Invalid(path, "nests deeper than %d levels", MaxMetadataDepth)
		}
		for i, e := range v {
			if fe := checkJSONValue(path+"["+strconv.Itoa(i)+"]", e, depth+1); fe != nil {
				return fe
			}
		}
		return nil
	default:
		// A Go caller's own type (a struct, a typed map or slice): check what it
		// encodes to, which is what the workers will decode.
		b, err := json.Marshal(v)
		if err != nil {
			return Invalid(path, "cannot be encoded as JSON: %v", err)
		}
		var back any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		if err := dec.Decode(&back); err != nil {
			return Invalid(path, "cannot be decoded back from JSON: %v", err)
		}
		return checkJSONValue(path, back, depth)
	}
}

func checkScalar(path string, v any) *FieldError {
	switch v := v.(type) {
	case string:
		return CheckText(path, v, 0)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return Invalid(path, "number %s is out of range (at most ±%g)", truncateText(string(v), 32), math.MaxFloat64)
		}
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return Invalid(path, "number %v is not finite", v)
		}
	case float32:
		if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
			return Invalid(path, "number %v is not finite", v)
		}
	}
	return nil
}

// CheckTurn explains why a decoded turn cannot be stored (nil when it can). path is
// the turn's JSON path ("turns[3]"; "" for a single turn or a stream message). It
// holds the rules the store needs, whatever the entry point: ingest adds its own,
// tighter, configurable limits on top.
func CheckTurn(path string, t Turn) *FieldError {
	p := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, f := range []struct {
		name, v  string
		optional bool
	}{
		{"turn_id", t.TurnID, false}, {"user_id", t.UserID, false}, {"agent_id", t.AgentID, true},
		{"session_id", t.SessionID, false}, {"task_id", t.TaskID, true},
	} {
		if f.optional && f.v == "" {
			continue
		}
		if fe := CheckID(p(f.name), f.v, MaxIDLength); fe != nil {
			fe.Code = CodeInvalidField
			return fe
		}
	}
	if !t.Role.Valid() {
		return Invalid(p("role"), "unknown role %q: want user, assistant, tool or system", truncateText(string(t.Role), 32))
	}
	if fe := CheckText(p("content"), t.Content, MaxTurnContentBytes); fe != nil {
		return fe
	}
	// A time JSON cannot write would be stored, then fail every event and answer that
	// carries it. Zero (absent) is in range: the entry point defaults it.
	if fe := CheckTime(p("occurred_at"), t.OccurredAt); fe != nil {
		return fe
	}
	if fe := CheckTime(p("received_at"), t.ReceivedAt); fe != nil {
		return fe
	}
	if t.Tool != nil {
		if fe := CheckText(p("tool.name"), t.Tool.Name, MaxIDLength); fe != nil {
			return fe
		}
		if strings.TrimSpace(t.Tool.Name) == "" {
			return &FieldError{Code: CodeMissingField, Field: p("tool.name"), Message: "tool name is required"}
		}
		if t.Tool.Status != "success" && t.Tool.Status != "failure" {
			return Invalid(p("tool.status"), "unknown tool status %q: want success or failure", truncateText(t.Tool.Status, 32))
		}
		if fe := CheckText(p("tool.error"), t.Tool.Error, MaxTurnContentBytes); fe != nil {
			return fe
		}
	}
	return CheckMetadata(p("metadata"), t.Metadata, MaxMetadataBytes)
}

// truncateText shortens client-supplied text echoed in an error message.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
