package httpapi

import "net/http"

// BodyBytesHeld is what request bodies' reservations hold now in h, a handler of New.
func BodyBytesHeld(h http.Handler) int64 { return h.(*edge).bodies.held.Load() }
