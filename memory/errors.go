package memory

import "fmt"

// Error codes of a FieldError: the "code" of engram's JSON error answers.
const (
	CodeMalformedJSON = "malformed_json"
	CodeUnknownField  = "unknown_field"
	CodeMissingField  = "missing_field"
	CodeInvalidField  = "invalid_field"
	CodeTooLarge      = "too_large"
)

// FieldError is a client error about one field of the input (a JSON path such as
// "turns[3].user_id", "" for the input as a whole). It is engram's one input error:
// every entry point returns it and the HTTP edge answers it with 400 naming the field.
// It matches ErrInvalid.
type FieldError struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (e *FieldError) Error() string {
	if e.Code != "" {
		return e.Code + ": " + e.Reason()
	}
	return e.Reason()
}

// Reason is the error without its code: "field: message".
func (e *FieldError) Reason() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Unwrap makes a FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Invalid is a FieldError with code invalid_field.
func Invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Code: CodeInvalidField, Field: field, Message: fmt.Sprintf(format, args...)}
}

// MaxIDLength bounds every id engram accepts (tenants, users, agents, sessions, turns,
// tasks, stages).
const MaxIDLength = 128

// IsIDChar reports whether c is in engram's id alphabet [A-Za-z0-9._:@-]: safe in NATS
// subjects (after EncodeToken), URLs, logs and lock keys, and enough for UUIDs,
// e-mail-like and namespaced ids.
func IsIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == ':' || c == '@'
}

// ValidID reports whether s is 1 to maxLen characters of the id alphabet.
func ValidID(s string, maxLen int) bool {
	return CheckID("", s, maxLen) == nil
}

// CheckID explains why id is not a valid id (nil when it is); field names it. The
// error has no code: it reads "field: reason", and the edge answers it as invalid_field.
func CheckID(field, id string, maxLen int) *FieldError {
	bad := func(format string, args ...any) *FieldError {
		return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case id == "":
		return bad("must not be empty")
	case len(id) > maxLen:
		return bad("%d characters, longer than %d", len(id), maxLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '*' || c == '>':
			return bad("wildcard %q not allowed in %q", c, id)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return bad("whitespace not allowed in %q", id)
		case !IsIDChar(c):
			return bad("character %q not allowed in %q (allowed: A-Z a-z 0-9 . _ : @ -)", c, id)
		}
	}
	return nil
}
