package retriever

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
