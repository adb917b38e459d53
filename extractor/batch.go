// Package extractor turns conversation turns into memory candidates: a rule gate that skips
// chit-chat before any model is called, extractors (an LLM one and the offline bilingual rule
// extractor), relative-date resolution, source trust and deterministic candidate ids.
package extractor

import (
	"context"
	"unicode/utf8"

	"github.com/engramhq/engram/memory"
)

// MaxExtractBytes bounds what the gate and the extractors read of one turn: its first
// 8 KiB. The whole content is still stored and searchable; what an agent says worth
// remembering comes in sentences, not in the middle of a pasted 32 KB log, and the gate's
// regular expressions cost time in proportion to what they read (about 217 ms for 32 KB),
// so one tenant's huge turns would otherwise hold the extractor for everyone.
const MaxExtractBytes = 8 << 10

// Batch is a micro-batch of one session's turns to extract from.
type Batch struct {
	Tenant, UserID, AgentID, SessionID string
	// New are the turns to extract from, in order.
	New []memory.Turn
	// Window holds earlier turns of the session, older first. They give context (a tool
	// failure before a success, the assistant claim a user confirms) but are not extracted.
	Window []memory.Turn
}

// timeline is Window followed by New: the whole ordered conversation the batch can see.
func (b Batch) timeline() []memory.Turn {
	out := make([]memory.Turn, 0, len(b.Window)+len(b.New))
	out = append(out, b.Window...)
	return append(out, b.New...)
}

// Extractor proposes memory candidates from a batch. Implementations fill every candidate
// field except ID, which the pipeline assigns with CandidateID.
type Extractor interface {
	Name() string
	Version() string
	Model() string
	Extract(ctx context.Context, b Batch) ([]memory.Candidate, error)
}

// bounded returns b with every turn's content cut to its first limit bytes, on a rune
// boundary. The turns are copies: the caller's slices are left as they are.
func (b Batch) bounded(limit int) Batch {
	b.New = boundedTurns(b.New, limit)
	b.Window = boundedTurns(b.Window, limit)
	return b
}

func boundedTurns(turns []memory.Turn, limit int) []memory.Turn {
	out := turns
	for i, t := range turns {
		if len(t.Content) <= limit {
			continue
		}
		if &out[0] == &turns[0] { // copy on the first cut only
			out = append([]memory.Turn(nil), turns...)
		}
		out[i].Content = prefix(t.Content, limit)
	}
	return out
}

// prefix is s cut to at most limit bytes without splitting a rune.
func prefix(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
