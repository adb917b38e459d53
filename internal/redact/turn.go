package redact

import (
	"strings"

	"github.com/engramhq/engram/memory"
)

// RedactTurn replaces secrets in the turn's free text (content, tool name and error,
// and every string and key of its metadata; the tool call and metadata are copied, not
// written through) and returns the kinds found, which is all that may be logged. Every
// turn is redacted before it is stored: ingest does it before publishing, the TURNS
// consumer again for turns published straight onto NATS. The second pass must leave a
// turn redacted already as it is (its content hash is how a resent turn is told from a
// conflicting one), so placeholders are never redacted again (see redactOutside).
func (r *Redactor) Turn(t *memory.Turn) []string {
	var kinds []string
	t.Content = r.redactOutside(t.Content, &kinds)
	if t.Tool != nil {
		tool := *t.Tool // copy rather than write through a pointer the caller may share
		tool.Error = r.redactOutside(tool.Error, &kinds)
		tool.Name = r.redactOutside(tool.Name, &kinds)
		t.Tool = &tool
	}
	if t.Metadata != nil {
		t.Metadata = r.redactValueOutside(t.Metadata, &kinds).(map[string]any)
	}
	return kinds
}

// redactOutside is r.Redact without the findings that lie inside a placeholder: the
// labelled rules see "password: [REDACTED:password]" as a password, and replacing the
// placeholder would change a redacted text on every pass (into "[REDACTED:secret]", or
// "[REDACTED:password]]" where the match stops before the bracket). A finding that
// reaches past a placeholder is kept: it may hold a live secret. The kinds found are
// appended to kinds.
func (r *Redactor) redactOutside(s string, kinds *[]string) string {
	out, findings := r.Redact(s)
	if len(findings) == 0 {
		return s
	}
	held := r.placeholders.FindAllStringIndex(s, -1)
	if len(held) == 0 {
		for _, f := range findings {
			*kinds = append(*kinds, f.Kind)
		}
		return out
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range findings { // sorted and non-overlapping
		if insideAny(f, held) {
			continue
		}
		*kinds = append(*kinds, f.Kind)
		b.WriteString(s[last:f.Start])
		b.WriteString(Placeholder(f.Kind))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

func insideAny(f Finding, spans [][]int) bool {
	for _, sp := range spans {
		if f.Start >= sp[0] && f.End <= sp[1] {
			return true
		}
	}
	return false
}

// redactValueOutside is r.RedactValue with redactOutside: a copy of a decoded JSON value with
// every string, keys included, redacted.
func (r *Redactor) redactValueOutside(v any, kinds *[]string) any {
	switch x := v.(type) {
	case string:
		return r.redactOutside(x, kinds)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[r.redactOutside(k, kinds)] = r.redactValueOutside(e, kinds)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = r.redactValueOutside(e, kinds)
		}
		return s
	default:
		return v
	}
}
