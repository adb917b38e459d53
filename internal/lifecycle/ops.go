package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
)

// Ops are the operator's actions on one memory: read it with its history, correct
// it, deprecate it, roll it back, or ask what it said at a time. The HTTP API and the
// CLI share them. Every change is a new version with an actor and a reason.
type Ops struct {
	store *memory.Store
	emb   Embedder         // nil: changed content keeps no vector until re-embedded
	red   *redact.Redactor // nil: corrections are stored as given
}

// NewOps makes the operations on store; emb re-embeds corrected content (nil allowed).
func NewOps(store *memory.Store, emb Embedder) *Ops { return &Ops{store: store, emb: emb} }

// SetRedactor makes corrections go through r like every other text engram stores: a
// secret pasted into a correction becomes its placeholder.
func (o *Ops) SetRedactor(r *redact.Redactor) { o.red = r }

// Correction is a manual edit of a memory.
type Correction struct {
	Content    string
	Category   *memory.Category
	Importance *float64
	Reason     string
	// ExpectVersion, when non-zero, refuses the edit unless the memory is at that
	// version (memory.ErrVersionMismatch), so two editors cannot overwrite each other.
	ExpectVersion int
}

// Get reads a memory with its versions and lineage.
func (o *Ops) Get(ctx context.Context, tenant string, id uuid.UUID) (memory.Detail, error) {
	return o.store.Detail(ctx, tenant, id)
}

// History reads a memory's versions, oldest first.
func (o *Ops) History(ctx context.Context, tenant string, id uuid.UUID) ([]memory.Version, error) {
	var vs []memory.Version
	err := o.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		if _, err := tx.Get(ctx, id); err != nil {
			return err
		}
		var err error
		vs, err = tx.Versions(ctx, id)
		return err
	})
	return vs, err
}

// AsOf returns the version that was believed true at at (memory.ErrNotFound if none).
func (o *Ops) AsOf(ctx context.Context, tenant string, id uuid.UUID, at time.Time) (memory.Version, error) {
	return o.store.AsOf(ctx, tenant, id, at)
}

// Correct writes a corrected version (change "correct"). A person's correction is
// authoritative: confidence becomes 1 and a pending memory becomes active.
func (o *Ops) Correct(ctx context.Context, tenant string, id uuid.UUID, c Correction, actor string) (memory.Memory, error) {
	content := strings.TrimSpace(c.Content)
	if o.red != nil {
		content, _ = o.red.Redact(content)
		c.Reason, _ = o.red.Redact(c.Reason)
	}
	switch {
	case content == "":
		return memory.Memory{}, memory.Invalid("content", "must not be empty")
	case utf8.RuneCountInString(content) > 8000:
		return memory.Memory{}, memory.Invalid("content", "must be at most 8000 characters")
	case c.Category != nil && !c.Category.Valid():
		return memory.Memory{}, memory.Invalid("category", "%q is not one of %v", *c.Category, memory.Categories())
	case c.Importance != nil && !(*c.Importance >= 0 && *c.Importance <= 1):
		return memory.Memory{}, memory.Invalid("importance", "must be between 0 and 1")
	case c.ExpectVersion < 0:
		return memory.Memory{}, memory.Invalid("expect_version", "must be positive")
	}
	vec, err := o.embed(ctx, content)
	if err != nil {
		return memory.Memory{}, err
	}
	one := 1.0
	return o.change(ctx, tenant, id, vec, func(cur memory.Memory, _ *memory.Tx) (memory.Update, error) {
		u := memory.Update{Change: memory.ChangeCorrect, Content: &content, Category: c.Category,
			Importance: c.Importance, Confidence: &one, ExpectVersion: c.ExpectVersion,
			Actor: actor, Module: "api", Reason: c.Reason}
		if cur.Status == memory.StatusPending {
			active := memory.StatusActive
			u.Status = &active
		}
		return u, nil
	})
}

// Deprecate marks a memory deprecated: it stays in history but is no longer believed.
// Deprecating a deprecated memory changes nothing.
func (o *Ops) Deprecate(ctx context.Context, tenant string, id uuid.UUID, reason, actor string) (memory.Memory, error) {
	return o.change(ctx, tenant, id, nil, func(cur memory.Memory, _ *memory.Tx) (memory.Update, error) {
		if cur.Status == memory.StatusDeprecated {
			return memory.Update{}, errUnchanged
		}
		st := memory.StatusDeprecated
		return memory.Update{Change: memory.ChangeDeprecate, Status: &st, Actor: actor, Module: "api", Reason: reason}, nil
	})
}

// Rollback writes a new version (change "rollback") whose content, status, category,
// key, importance and confidence equal version n's. A version that was superseded
// comes back active: "superseded" marks that it was replaced, not a state it held.
func (o *Ops) Rollback(ctx context.Context, tenant string, id uuid.UUID, n int, reason, actor string) (memory.Memory, error) {
	if n < 1 {
		return memory.Memory{}, memory.Invalid("version", "must be a version number (1 or more)")
	}
	// The target's content is needed before the transaction to embed it.
	var target memory.Version
	err := o.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		target, err = versionOf(ctx, tx, id, n)
		return err
	})
	if err != nil {
		return memory.Memory{}, err
	}
	vec, err := o.embed(ctx, target.Content)
	if err != nil {
		return memory.Memory{}, err
	}
	return o.change(ctx, tenant, id, vec, func(cur memory.Memory, tx *memory.Tx) (memory.Update, error) {
		v, err := versionOf(ctx, tx, id, n)
		if err != nil {
			return memory.Update{}, err
		}
		if n == cur.Version {
			return memory.Update{}, memory.Invalid("version", "memory is at version %d already", n)
		}
		if v.Content != target.Content {
			return memory.Update{}, fmt.Errorf("version %d of %s changed while rolling back: %w", n, id, ErrConflict)
		}
		st := v.Status
		if st == memory.StatusSuperseded {
			st = memory.StatusActive
		}
		content, cat, key, imp, conf := v.Content, v.Category, v.Key, v.Importance, v.Confidence
		if reason == "" {
			reason = fmt.Sprintf("rollback to version %d", n)
		}
		return memory.Update{Change: memory.ChangeRollback, Content: &content, Status: &st, Category: &cat,
			Key: &key, Importance: &imp, Confidence: &conf,
			Actor: actor, Module: "api", Reason: reason}, nil
	})
}

var errUnchanged = errors.New("nothing to change")

// ErrConflict is returned when a concurrent change got in the way of an operation
// (the caller may retry it).
var ErrConflict = errors.New("concurrent change")

func versionOf(ctx context.Context, tx *memory.Tx, id uuid.UUID, n int) (memory.Version, error) {
	vs, err := tx.Versions(ctx, id)
	if err != nil {
		return memory.Version{}, err
	}
	if len(vs) == 0 {
		if _, err := tx.Get(ctx, id); err != nil {
			return memory.Version{}, err
		}
	}
	for _, v := range vs {
		if v.Version == n {
			return v, nil
		}
	}
	return memory.Version{}, memory.Invalid("version", "memory %s has no version %d", id, n)
}

func (o *Ops) embed(ctx context.Context, text string) ([]float32, error) {
	if o.emb == nil {
		return nil, nil
	}
	vs, err := o.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embedding the new content with %s: %w", o.emb.Model(), err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedding the new content with %s: got %d vectors", o.emb.Model(), len(vs))
	}
	return vs[0], nil
}

// change runs one edit under the owner's lock, so it cannot interleave with the
// resolver deciding on the same owner's memories.
func (o *Ops) change(ctx context.Context, tenant string, id uuid.UUID, vec []float32,
	build func(cur memory.Memory, tx *memory.Tx) (memory.Update, error)) (memory.Memory, error) {
	var out memory.Memory
	err := o.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		cur, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.LockOwner(ctx, memoryLockKey(cur)); err != nil {
			return err
		}
		if cur, err = tx.Get(ctx, id); err != nil { // as of after the lock
			return err
		}
		u, err := build(cur, tx)
		if errors.Is(err, errUnchanged) {
			out = cur
			return nil
		}
		if err != nil {
			return err
		}
		oldContent := cur.Content
		if out, err = tx.Apply(ctx, id, u); err != nil {
			return err
		}
		if out.Content == oldContent {
			return nil
		}
		// The content changed: the vectors of the old text would match the wrong thing.
		keep := ""
		if o.emb != nil && len(vec) > 0 {
			if err := tx.PutEmbedding(ctx, id, out.UserID, memory.Embedding{Model: o.emb.Model(), Vector: vec}); err != nil {
				return err
			}
			keep = o.emb.Model()
		}
		return tx.DropOtherEmbeddings(ctx, id, keep)
	})
	return out, err
}

// memoryLockKey is lockKey for an existing memory.
func memoryLockKey(m memory.Memory) string {
	return memory.Owner{UserID: m.UserID, AgentID: m.AgentID, Scope: m.Scope}.LockKey()
}
