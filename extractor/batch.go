// Package extractor turns conversation turns into memory candidates: a rule gate that skips
// chit-chat before any model is called, extractors (an LLM one and the offline bilingual rule
// extractor), relative-date resolution, source trust and deterministic candidate ids.
package extractor

import (
	"context"

	"github.com/engramhq/engram/memory"
)

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
