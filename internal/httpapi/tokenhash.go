package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"time"
)

// TokenHash is the sha256 of a token: what a holder of a session keeps instead of
// the token itself (the console re-checks its sessions with it).
func TokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// CheckHash is Check for a token known only by its TokenHash, also returning when the
// token expires (zero: never), so that a session can end with its token.
func (t *Tokens) CheckHash(h [32]byte) (Principal, time.Time, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	found, revoked := -1, false
	for i := range t.entries { // every entry, in constant time, as Check does
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 {
			found = i
			revoked = revoked || t.entries[i].revoked
		}
	}
	switch {
	case found < 0:
		return Principal{}, time.Time{}, ErrUnknownToken
	case revoked:
		return Principal{}, time.Time{}, ErrTokenRevoked
	}
	e := t.entries[found]
	now := time.Now
	if t.now != nil {
		now = t.now
	}
	if !e.expiresAt.IsZero() && !now().Before(e.expiresAt) {
		return Principal{}, time.Time{}, fmt.Errorf("%w at %s", ErrTokenExpired, e.expiresAt.Format(time.RFC3339))
	}
	p := e.Principal
	p.Users = slices.Clone(p.Users)
	return p, e.expiresAt, nil
}
