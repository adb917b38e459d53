package extractor

import (
	"time"

	"github.com/engramhq/engram/memory"
)

// clampTimes brings a candidate's derived times (valid_from and expire_at, which an
// extractor computes from the turn's time and the words) within years 0000–9999 UTC.
// Clamped rather than dropped: an expiry past 9999 still marks a memory that ends, and
// one before year 0 a memory that has ended; dropping either would make it last forever.
// Out of range, the candidate could not be encoded, and its batch would fail with it.
func clampTimes(c *memory.Candidate) {
	c.ValidFrom = clampTime(c.ValidFrom)
	if c.ExpireAt != nil {
		e := clampTime(*c.ExpireAt) // a copy: the pointer may be shared
		c.ExpireAt = &e
	}
}

// clampTime brings t within the times RFC 3339, and so every event and answer carrying
// a time, can write: years 0000 to 9999 in UTC (memory.CheckTime).
func clampTime(t time.Time) time.Time {
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	switch u := t.UTC(); {
	case u.Before(lo):
		return lo
	case u.After(hi):
		return hi
	}
	return t
}
