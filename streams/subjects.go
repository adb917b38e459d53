package streams

import (
	"errors"
	"fmt"
	"strings"

	"github.com/engramhq/engram/memory"
)

// MaxIDLength is the longest tenant, user, stage or other id that may reach a subject.
const MaxIDLength = memory.MaxIDLength

// Subject roots. The tokens after them are encoded with EncodeToken.
const (
	TurnSubjectPrefix      = "engram.turns."
	CandidateSubjectPrefix = "engram.candidates."
	DLQSubjectPrefix       = "engram.dlq."
)

// noUserToken stands for "no user" in a candidate subject (global and agent-scoped
// candidates). A bare "_" is never produced by EncodeToken, so it cannot collide.
const noUserToken = "_"

// unknownTenantToken is the DLQ subject token used when a dead letter's tenant cannot
// be determined (a poison message with neither header nor parseable subject).
const unknownTenantToken = "_"

const hexDigits = "0123456789ABCDEF"

// ValidateID checks that id is 1–128 characters of engram's id alphabet
// (memory.CheckID); field names the value in the error.
func ValidateID(field, id string) error {
	if err := memory.CheckID(field, id, MaxIDLength); err != nil {
		return err
	}
	return nil
}

// keptChar reports whether c passes through EncodeToken unchanged.
func keptChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// EncodeToken turns any string into a single NATS subject token, reversibly and
// deterministically: [A-Za-z0-9-] are kept and every other byte (including '_') becomes
// _XX in upper-case hex. Dots, wildcards and whitespace therefore never reach a subject.
// The empty string encodes to the empty string, which is not a valid token; callers
// validate first.
func EncodeToken(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !keptChar(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keptChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0x0F])
	}
	return b.String()
}

// ErrBadToken is wrapped by every DecodeToken error.
var ErrBadToken = errors.New("invalid subject token")

// DecodeToken reverses EncodeToken. It accepts only canonical encodings (upper-case hex,
// no escaped characters that would have been kept), so decoding is a bijection.
func DecodeToken(tok string) (string, error) {
	if tok == "" {
		return "", fmt.Errorf("%w: empty", ErrBadToken)
	}
	if !strings.Contains(tok, "_") {
		for i := 0; i < len(tok); i++ {
			if !keptChar(tok[i]) {
				return "", fmt.Errorf("%w %q: character %q", ErrBadToken, tok, tok[i])
			}
		}
		return tok, nil
	}
	out := make([]byte, 0, len(tok))
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if keptChar(c) {
			out = append(out, c)
			continue
		}
		if c != '_' || i+2 >= len(tok) {
			return "", fmt.Errorf("%w %q: bad escape at byte %d", ErrBadToken, tok, i)
		}
		hi, lo := unhex(tok[i+1]), unhex(tok[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("%w %q: bad hex at byte %d", ErrBadToken, tok, i)
		}
		v := byte(hi<<4 | lo)
		if keptChar(v) {
			return "", fmt.Errorf("%w %q: %q needlessly escaped", ErrBadToken, tok, v)
		}
		out = append(out, v)
		i += 2
	}
	return string(out), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func idToken(field, id string) (string, error) {
	if err := ValidateID(field, id); err != nil {
		return "", err
	}
	return EncodeToken(id), nil
}

// TurnSubject is the subject a tenant's user's turns are published on:
// engram.turns.<tenant>.<user>.
func TurnSubject(tenant, user string) (string, error) {
	return twoTokenSubject(TurnSubjectPrefix, "tenant", tenant, "user", user)
}

// CandidateSubject is the subject candidates for a tenant's user are published on:
// engram.candidates.<tenant>.<user>.
func CandidateSubject(tenant, user string) (string, error) {
	return twoTokenSubject(CandidateSubjectPrefix, "tenant", tenant, "user", user)
}

// dlqStageFilter is the subject filter matching every dead letter of stage, or of
// every stage when stage is empty.
func dlqStageFilter(stage string) (string, error) {
	if stage == "" {
		return DLQSubjectPrefix + ">", nil
	}
	tok, err := idToken("stage", stage)
	if err != nil {
		return "", err
	}
	return DLQSubjectPrefix + tok + ".*", nil
}

func twoTokenSubject(prefix, f1, v1, f2, v2 string) (string, error) {
	t1, err := idToken(f1, v1)
	if err != nil {
		return "", err
	}
	t2, err := idToken(f2, v2)
	if err != nil {
		return "", err
	}
	return prefix + t1 + "." + t2, nil
}

// tenantFromSubject extracts the tenant from a turn, candidate or DLQ subject.
func tenantFromSubject(subject string) (string, error) {
	var tok string
	toks := strings.Split(subject, ".")
	switch {
	case len(toks) != 4 || toks[0] != "engram":
		return "", fmt.Errorf("subject %q is not an engram subject", subject)
	case toks[1] == "turns" || toks[1] == "candidates":
		tok = toks[2]
	case toks[1] == "dlq":
		tok = toks[3]
	default:
		return "", fmt.Errorf("subject %q is not an engram subject", subject)
	}
	tenant, err := DecodeToken(tok)
	if err != nil {
		return "", fmt.Errorf("tenant of subject %q: %w", subject, err)
	}
	return tenant, nil
}

// stageFromDLQSubject extracts the stage token of engram.dlq.<stage>.<tenant>.
func stageFromDLQSubject(subject string) (string, error) {
	toks := strings.Split(subject, ".")
	if len(toks) != 4 || toks[0] != "engram" || toks[1] != "dlq" {
		return "", fmt.Errorf("subject %q is not a DLQ subject", subject)
	}
	return DecodeToken(toks[2])
}
