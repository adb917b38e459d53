package consolidator

import "github.com/engramhq/engram/memory"

// QueuedFor is how many candidates of c's owner wait in r's owner batches.
func QueuedFor(r *Resolver, c memory.Candidate) int {
	return r.batches.waiting(batchKey(c))
}

// LockKey is the key c's owner's writers serialise on.
func LockKey(c memory.Candidate) string { return lockKey(c) }
