package ingest

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// RememberRequest is the body of POST /v1/memories: a memory stated explicitly by
// the agent or the user, rather than extracted from turns.
type RememberRequest struct {
	// ID makes the call idempotent: the same id is remembered once. Optional.
	ID         string          `json:"id,omitempty"`
	UserID     string          `json:"user_id"`
	AgentID    string          `json:"agent_id,omitempty"`
	SessionID  string          `json:"session_id,omitempty"`
	Type       memory.Type     `json:"type,omitempty"`
	Category   memory.Category `json:"category,omitempty"`
	Key        string          `json:"key,omitempty"`
	Content    string          `json:"content"`
	Importance *float64        `json:"importance,omitempty"`
	ValidFrom  *time.Time      `json:"valid_from,omitempty"`
	ExpireAt   *time.Time      `json:"expire_at,omitempty"`
	Metadata   map[string]any  `json:"metadata,omitempty"`
}

// RememberResponse says which candidate carries the memory through the pipeline.
type RememberResponse struct {
	CandidateID string `json:"candidate_id"`
	Duplicate   bool   `json:"duplicate"`
}

const maxRememberContent = 4000

// handleRemember publishes an explicit memory to CANDIDATES, so it is deduplicated,
// versioned and superseded by the same resolver as extracted ones. It answers 202
// once JetStream has acknowledged it.
func (a *API) handleRemember(w http.ResponseWriter, r *http.Request) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		httpapi.Unauthorized(w, "missing authentication")
		return
	}
	var req RememberRequest
	if !httpapi.DecodeJSON(w, r, 64<<10, &req) {
		return
	}
	c, fe := a.candidateFrom(p, req)
	if fe != nil {
		httpapi.WriteError(w, http.StatusBadRequest, fe.Code, fe.Message, fe.Field)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.ackTimeout)
	defer cancel()
	dup, err := streams.PublishCandidate(ctx, a.pub, streams.CandidateEvent{V: 1, Candidate: c})
	if err != nil {
		a.log.Warn("publishing an explicit memory", "tenant", p.Tenant, "err", err)
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, http.StatusServiceUnavailable, CodeUnavailable, "the memory was not acknowledged by JetStream; retry with the same id", "")
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, RememberResponse{CandidateID: c.ID, Duplicate: dup})
}

func (a *API) candidateFrom(p httpapi.Principal, req RememberRequest) (memory.Candidate, *memory.FieldError) {
	bad := func(field, msg string) *memory.FieldError {
		return &memory.FieldError{Code: memory.CodeInvalidField, Field: field, Message: msg}
	}
	if req.UserID == "" {
		return memory.Candidate{}, &memory.FieldError{Code: memory.CodeMissingField, Field: "user_id", Message: "user_id is required"}
	}
	for field, v := range map[string]string{"user_id": req.UserID, "agent_id": req.AgentID, "session_id": req.SessionID, "id": req.ID} {
		if v != "" && !ValidID(v, a.limits.MaxIDLen) {
			return memory.Candidate{}, bad(field, field+" must be 1-128 characters of [A-Za-z0-9._:@-]")
		}
	}
	content := strings.TrimSpace(req.Content)
	switch {
	case content == "":
		return memory.Candidate{}, &memory.FieldError{Code: memory.CodeMissingField, Field: "content", Message: "content is required"}
	case !utf8.ValidString(content):
		return memory.Candidate{}, bad("content", "content must be valid UTF-8")
	case len(content) > maxRememberContent:
		return memory.Candidate{}, &memory.FieldError{Code: memory.CodeTooLarge, Field: "content", Message: "content exceeds 4000 bytes"}
	}
	content, _ = a.redactor.Redact(content)
	if a.redactor.IsSecret(content) {
		return memory.Candidate{}, bad("content", "content is essentially a secret; engram does not store secrets")
	}
	if req.Type == "" {
		req.Type = memory.Semantic
	}
	if !req.Type.Valid() {
		return memory.Candidate{}, bad("type", "type must be episodic, semantic or procedural")
	}
	if req.Category == "" {
		req.Category = memory.CatFact
	}
	if !req.Category.Valid() {
		return memory.Candidate{}, bad("category", "unknown category")
	}
	if len(req.Key) > 200 {
		return memory.Candidate{}, bad("key", "key exceeds 200 characters")
	}
	importance := 0.7
	if req.Importance != nil {
		if *req.Importance < 0 || *req.Importance > 1 {
			return memory.Candidate{}, bad("importance", "importance must be in [0,1]")
		}
		importance = *req.Importance
	}
	now := a.now().UTC()
	validFrom := now
	if req.ValidFrom != nil {
		validFrom = req.ValidFrom.UTC()
	}
	if req.ExpireAt != nil && !req.ExpireAt.After(validFrom) {
		return memory.Candidate{}, bad("expire_at", "expire_at must be after valid_from")
	}
	id := req.ID
	if id == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return memory.Candidate{}, bad("id", "could not generate an id")
		}
		id = u.String()
	}
	scope := memory.ScopeUser
	return memory.Candidate{
		ID: "manual_" + id, Tenant: p.Tenant, UserID: req.UserID, AgentID: req.AgentID, SessionID: req.SessionID,
		Scope: scope, Type: req.Type, Category: req.Category, Key: req.Key, Content: content,
		Importance: importance, Confidence: 1, ValidFrom: validFrom, ExpireAt: req.ExpireAt,
		Source: memory.SourceManual, Trusted: true, Extractor: "api", ExtractorVersion: "1",
		Metadata: map[string]any{"actor": "api:" + p.Name}, CreatedAt: now,
	}, nil
}
