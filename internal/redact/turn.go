package redact

import "github.com/engramhq/engram/memory"

// Turn replaces secrets in the turn's free text (content, tool name and error, and
// every string and key of its metadata; the tool call and metadata are copied, not
// written through) and returns the kinds found, which is all that may be logged.
// Every turn is redacted before it is stored: ingest does it before publishing, the
// TURNS consumer again for turns published straight onto NATS. The second pass leaves
// a turn redacted already as it is (placeholders are never redacted again, see
// outsidePlaceholders), so its content hash still tells a resent turn from a
// conflicting one.
func (r *Redactor) Turn(t *memory.Turn) []string {
	var kinds []string
	text := func(s string) string {
		out, fs := r.Redact(s)
		for _, f := range fs {
			kinds = append(kinds, f.Kind)
		}
		return out
	}
	t.Content = text(t.Content)
	if t.Tool != nil {
		tool := *t.Tool // copy rather than write through a pointer the caller may share
		tool.Error = text(tool.Error)
		tool.Name = text(tool.Name)
		t.Tool = &tool
	}
	if t.Metadata != nil {
		m, k := r.RedactValue(t.Metadata)
		t.Metadata = m.(map[string]any)
		kinds = append(kinds, k...)
	}
	return kinds
}
