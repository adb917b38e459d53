package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// defaultListLimit is a page's size when the request names none.
const defaultListLimit = 50

// listResponse is a page of GET /v1/memories. NextCursor, passed back as ?cursor=
// with the same filters, reads the next page; it is absent on the last page.
type listResponse struct {
	Memories   []memory.Memory `json:"memories"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// listParams are the query parameters GET /v1/memories accepts (besides metadata[k]).
var listParams = []string{"user_id", "agent_id", "type", "category", "status", "key", "updated_after", "limit", "cursor"}

// cursor is the decoded form of next_cursor: the last memory of a page and a hash of
// the filters it was read with, so a cursor cannot silently continue another listing.
type cursor struct {
	UpdatedAt time.Time `json:"u"`
	ID        uuid.UUID `json:"i"`
	Filters   uint64    `json:"f"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == uuid.Nil || c.UpdatedAt.IsZero() {
		return c, newProblem(http.StatusBadRequest, "invalid_field", "cursor is not a cursor engram returned", "cursor")
	}
	return c, nil
}

// filtersHash hashes every parameter but limit and cursor, in a canonical order.
func filtersHash(v url.Values) uint64 {
	keys := make([]string, 0, len(v))
	for k := range v {
		if k != "limit" && k != "cursor" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		vs := slices.Clone(v[k])
		slices.Sort(vs)
		h.Write([]byte(k + "=" + strings.Join(vs, "\x00") + "\x01"))
	}
	return h.Sum64()
}

// multi reads a parameter that may repeat or hold a comma-separated list.
func multi(v url.Values, name string) []string {
	var out []string
	for _, s := range v[name] {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func typed[T ~string](vs []string) []T {
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = T(v)
	}
	return out
}

// parseList reads the query of GET /v1/memories; an unknown parameter is refused so
// that a misspelt filter does not silently list everything.
func parseList(v url.Values) (memory.ListQuery, error) {
	q := memory.ListQuery{Limit: defaultListLimit}
	for k := range v {
		if name, ok := strings.CutPrefix(k, "metadata["); ok {
			key, ok := strings.CutSuffix(name, "]")
			if !ok || key == "" {
				return q, newProblem(http.StatusBadRequest, "invalid_field", "metadata filters are written metadata[key]=value", k)
			}
			if len(v[k]) != 1 {
				return q, newProblem(http.StatusBadRequest, "invalid_field", k+" may be given once", k)
			}
			// The filter becomes jsonb: a NUL is refused by PostgreSQL and invalid
			// UTF-8 would silently become U+FFFD, filtering on something not sent.
			if fe := memory.CheckText(k, key, 0); fe != nil {
				fe.Message = "key " + fe.Message
				return q, fe
			}
			if err := memory.CheckTexts(memory.Field{Name: k, Value: v.Get(k)}); err != nil {
				return q, err
			}
			if q.Metadata == nil {
				q.Metadata = map[string]any{}
			}
			q.Metadata[key] = v.Get(k)
			continue
		}
		if !slices.Contains(listParams, k) {
			return q, newProblem(http.StatusBadRequest, "unknown_field",
				"unknown parameter "+k+"; known: "+strings.Join(listParams, ", ")+", metadata[key]", k)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"user_id", &q.UserID}, {"agent_id", &q.AgentID}} {
		if s := v.Get(f.name); s != "" {
			if err := streams.ValidateID(f.name, s); err != nil {
				return q, newProblem(http.StatusBadRequest, "invalid_field", err.Error(), f.name)
			}
			*f.dst = s
		}
	}
	q.Types = typed[memory.Type](multi(v, "type"))
	q.Categories = typed[memory.Category](multi(v, "category"))
	q.Statuses = typed[memory.Status](multi(v, "status"))
	q.Key = v.Get("key")
	if err := memory.CheckTexts(memory.Field{Name: "key", Value: q.Key}); err != nil {
		return q, err
	}
	if s := v.Get("updated_after"); s != "" {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return q, newProblem(http.StatusBadRequest, "invalid_field", "updated_after must be an RFC 3339 time", "updated_after")
		}
		q.UpdatedAfter = &at
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > memory.MaxListLimit {
			return q, newProblem(http.StatusBadRequest, "invalid_field",
				"limit must be a whole number from 1 to "+strconv.Itoa(memory.MaxListLimit), "limit")
		}
		q.Limit = n
	}
	if s := v.Get("cursor"); s != "" {
		c, err := decodeCursor(s)
		if err != nil {
			return q, err
		}
		if c.Filters != filtersHash(v) {
			return q, newProblem(http.StatusBadRequest, "invalid_field",
				"cursor belongs to a listing with other filters; repeat the filters it was returned with", "cursor")
		}
		q.After = &memory.ListPosition{UpdatedAt: c.UpdatedAt, ID: c.ID}
	}
	return q, nil
}

// listMemories serves GET /v1/memories: the tenant's memories, filtered, in pages
// ordered by (updated_at, id). A memory created or changed while a client pages
// through sorts after the pages already read and is met on a later page; only a write
// stamped before a page was read but committed after it can land behind the cursor.
func (e *edge) listMemories(w http.ResponseWriter, r *http.Request, p Principal) error {
	v := r.URL.Query()
	q, err := parseList(v)
	if err != nil {
		return err
	}
	// A token limited to users lists one of them, never the tenant's.
	if err := forbidUser(p, "user_id", q.UserID); err != nil {
		return err
	}
	page, err := e.memories.List(r.Context(), p.Tenant, q)
	if err != nil {
		return err
	}
	resp := listResponse{Memories: page.Memories}
	if resp.Memories == nil {
		resp.Memories = []memory.Memory{}
	}
	if page.Next != nil {
		resp.NextCursor = encodeCursor(cursor{UpdatedAt: page.Next.UpdatedAt, ID: page.Next.ID, Filters: filtersHash(v)})
	}
	WriteJSON(w, http.StatusOK, resp)
	return nil
}

// deleteUserMemories serves DELETE /v1/users/{user_id}/memories: the user's memories
// are forgotten and the turns kept; ?turns=true deletes the user entirely (as DELETE
// /v1/users/{user_id}).
func (e *edge) deleteUserMemories(w http.ResponseWriter, r *http.Request, p Principal) error {
	user, err := userID(r)
	if err != nil {
		return err
	}
	if err := forbidUser(p, "user_id", user); err != nil {
		return err
	}
	turns := false
	for k := range r.URL.Query() {
		if k != "turns" {
			return newProblem(http.StatusBadRequest, "unknown_field", "unknown parameter "+k+"; known: turns", k)
		}
	}
	if s := r.URL.Query().Get("turns"); s != "" {
		if turns, err = strconv.ParseBool(s); err != nil {
			return newProblem(http.StatusBadRequest, "invalid_field", "turns must be true or false", "turns")
		}
	}
	d, err := e.lifecycle.DeleteUserMemories(r.Context(), p.Tenant, user, turns, actorOf(p))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, d)
	return nil
}
