package consolidator

import "github.com/engramhq/engram/memory"

// QueuedFor is how many candidates of c's owner wait in r's owner batches.
func QueuedFor(r *Resolver, c memory.Candidate) int {
	return r.batches.waiting(batchKey(c))
}

// Leading reports whether a leader has taken c's owner's batch and nobody waits
// behind it yet: the moment a test may start queueing candidates.
func Leading(r *Resolver, c memory.Candidate) bool {
	r.batches.mu.Lock()
	defer r.batches.mu.Unlock()
	oq := r.batches.owners[batchKey(c)]
	return oq != nil && oq.leader != nil && len(oq.waiting) == 0
}

// LockKey is the key c's owner's writers serialise on.
func LockKey(c memory.Candidate) string { return lockKey(c) }
