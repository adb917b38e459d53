package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// CodeForbidden is the error code of a 403: the token may not act for the user.
const CodeForbidden = "forbidden"

// A token may be limited to some users of its tenant (TokenEntry.Users). Every route
// that names a user (in the body, the query or the path) or acts on something a user
// owns (a memory by id: its owner; a retrieval record: its user) checks the user
// against the token with the functions below; a turn batch is checked by ingest
// before anything of it is published.

// forbidUser is nil when p may act for userID, else a 403 naming field.
func forbidUser(p Principal, field, userID string) error {
	if p.MayActFor(userID) {
		return nil
	}
	if userID == "" {
		return newProblem(http.StatusForbidden, CodeForbidden,
			fmt.Sprintf("this token may act only for users %s; name one of them in %s", strings.Join(p.Users, ", "), field), field)
	}
	return newProblem(http.StatusForbidden, CodeForbidden,
		fmt.Sprintf("this token may not act for user %q (only for %s)", userID, strings.Join(p.Users, ", ")), field)
}

// forbidMemory is nil when p may act for the owner of memory id: a token limited to
// users may touch only their memories, not another user's nor the tenant's global
// ones. An unknown id is the route's not-found answer.
func (e *edge) forbidMemory(r *http.Request, p Principal, id uuid.UUID) error {
	if !p.Scoped() {
		return nil
	}
	if e.memories == nil {
		return newProblem(http.StatusServiceUnavailable, "unavailable",
			"memory operations are not configured, so a token limited to users cannot be checked against the memory's owner", "")
	}
	d, err := e.memories.Get(r.Context(), p.Tenant, id)
	if err != nil {
		return err
	}
	if p.MayActFor(d.Memory.UserID) {
		return nil
	}
	owner := "the tenant (no user)"
	if d.Memory.UserID != "" {
		owner = fmt.Sprintf("user %q", d.Memory.UserID)
	}
	return newProblem(http.StatusForbidden, CodeForbidden,
		fmt.Sprintf("memory %s belongs to %s; this token may act only for %s", id, owner, strings.Join(p.Users, ", ")), "user_id")
}
