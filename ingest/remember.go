package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// RememberRequest is a memory stated explicitly by the agent or the user, rather than
// extracted from turns (the body of POST /v1/memories).
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

// RememberResult says which candidate carries the memory through the pipeline.
type RememberResult struct {
	CandidateID string `json:"candidate_id"`
	Duplicate   bool   `json:"duplicate"`
}

const maxRememberContent = 4000

// Remember validates an explicit memory and publishes it to CANDIDATES for tenant
// (from authentication) as actor, so it is deduplicated, versioned and superseded by
// the same resolver as extracted ones. It returns once JetStream has acknowledged
// it; an invalid request returns its *memory.FieldError, an unacknowledged publish
// an error matching ErrUnavailable.
func (s *Service) Remember(ctx context.Context, tenant, actor string, req RememberRequest) (RememberResult, error) {
	c, fe := s.candidateFrom(tenant, actor, req)
	if fe != nil {
		return RememberResult{}, fe
	}
	pctx, cancel := context.WithTimeout(ctx, s.ackTimeout)
	defer cancel()
	dup, err := streams.PublishCandidate(pctx, s.pub, streams.CandidateEvent{V: 1, Candidate: c})
	if err != nil {
		s.log.Warn("publishing an explicit memory", "tenant", tenant, "err", err)
		return RememberResult{}, fmt.Errorf("publishing an explicit memory: %w: %w", ErrUnavailable, err)
	}
	return RememberResult{CandidateID: c.ID, Duplicate: dup}, nil
}

func (s *Service) candidateFrom(tenant, actor string, req RememberRequest) (memory.Candidate, *memory.FieldError) {
	bad := func(field, msg string) *memory.FieldError {
		return &memory.FieldError{Code: memory.CodeInvalidField, Field: field, Message: msg}
	}
	if req.UserID == "" {
		return memory.Candidate{}, &memory.FieldError{Code: memory.CodeMissingField, Field: "user_id", Message: "user_id is required"}
	}
	for field, v := range map[string]string{"user_id": req.UserID, "agent_id": req.AgentID, "session_id": req.SessionID, "id": req.ID} {
		if v != "" && !memory.ValidID(v, s.limits.MaxIDLen) {
			return memory.Candidate{}, bad(field, field+" must be 1-128 characters of [A-Za-z0-9._:@-]")
		}
	}
	content := strings.TrimSpace(req.Content)
	if content == "" {
		return memory.Candidate{}, &memory.FieldError{Code: memory.CodeMissingField, Field: "content", Message: "content is required"}
	}
	// The store's rules (NUL, UTF-8, size), shared with every entry point: a memory
	// PostgreSQL cannot hold must be a 400 here, not a dead letter in the resolver.
	if fe := memory.CheckText("content", content, maxRememberContent); fe != nil {
		return memory.Candidate{}, fe
	}
	if fe := memory.CheckText("key", req.Key, 200); fe != nil {
		return memory.Candidate{}, fe
	}
	if fe := memory.CheckMetadata("metadata", req.Metadata, s.limits.MaxMetadataBytes); fe != nil {
		return memory.Candidate{}, fe
	}
	content, _ = s.redactor.Redact(content)
	req.Key, _ = s.redactor.Redact(req.Key)
	if s.redactor.IsSecret(content) {
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
	importance := 0.7
	if req.Importance != nil {
		if *req.Importance < 0 || *req.Importance > 1 {
			return memory.Candidate{}, bad("importance", "importance must be in [0,1]")
		}
		importance = *req.Importance
	}
	// The event, the store and every answer write these times in UTC; outside years
	// 0–9999 there they cannot be encoded: the publish would fail, answered as an
	// outage, or the stored memory would break every answer that holds it.
	for _, f := range []struct {
		name string
		at   *time.Time
	}{{"valid_from", req.ValidFrom}, {"expire_at", req.ExpireAt}} {
		if f.at != nil {
			if fe := memory.CheckTime(f.name, *f.at); fe != nil {
				return memory.Candidate{}, fe
			}
		}
	}
	now := s.now().UTC()
	validFrom := now
	if req.ValidFrom != nil {
		validFrom = req.ValidFrom.UTC()
	}
	var expireAt *time.Time
	if req.ExpireAt != nil {
		at := req.ExpireAt.UTC()
		if !at.After(validFrom) {
			return memory.Candidate{}, bad("expire_at", "expire_at must be after valid_from")
		}
		expireAt = &at
	}
	id := req.ID
	if id == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return memory.Candidate{}, bad("id", "could not generate an id")
		}
		id = u.String()
	}
	// The caller's metadata is kept (it is what listings and searches filter on); the
	// actor is recorded beside it and wins over a caller's "actor" key.
	meta := map[string]any{}
	if len(req.Metadata) > 0 {
		raw, err := json.Marshal(req.Metadata)
		if err != nil {
			return memory.Candidate{}, bad("metadata", "metadata must be a JSON object")
		}
		if len(raw) > s.limits.MaxMetadataBytes {
			return memory.Candidate{}, &memory.FieldError{Code: memory.CodeTooLarge, Field: "metadata",
				Message: fmt.Sprintf("metadata is %d bytes, the limit is %d", len(raw), s.limits.MaxMetadataBytes)}
		}
		maps.Copy(meta, req.Metadata)
	}
	meta["actor"] = actor
	scope := memory.ScopeUser
	return memory.Candidate{
		ID: "manual_" + id, Tenant: tenant, UserID: req.UserID, AgentID: req.AgentID, SessionID: req.SessionID,
		Scope: scope, Type: req.Type, Category: req.Category, Key: req.Key, Content: content,
		Importance: importance, Confidence: 1, ValidFrom: validFrom, ExpireAt: expireAt,
		Source: memory.SourceManual, Trusted: true, Extractor: "api", ExtractorVersion: "1",
		Metadata: meta, CreatedAt: now,
	}, nil
}
