package retriever

import (
	"context"

	"github.com/engramhq/engram/memory"
)

// HoldHelpers takes every helper slot of r (searchLayers then reads both layers in
// one transaction) until release is called.
func (r *Retriever) HoldHelpers() (release func()) {
	n := cap(r.parallel)
	for range n {
		r.parallel <- struct{}{}
	}
	return func() {
		for range n {
			<-r.parallel
		}
	}
}

// Helpers is the number of helper slots.
func (r *Retriever) Helpers() int { return cap(r.parallel) }

// MemoryCandidates is the candidate read a search makes (memoryCandidates).
func (r *Retriever) MemoryCandidates(ctx context.Context, tx *memory.Tx, ms memory.MemorySearch) ([]memory.MemoryHit, []memory.TermDF, error) {
	return r.memoryCandidates(ctx, tx, ms)
}
