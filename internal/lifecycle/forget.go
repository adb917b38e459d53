package lifecycle

import (
	"context"
	"fmt"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// List reads one page of the tenant's memories that pass q's filters.
func (o *Ops) List(ctx context.Context, tenant string, q memory.ListQuery) (memory.MemoryPage, error) {
	if err := memory.CheckTenant(tenant); err != nil {
		return memory.MemoryPage{}, err
	}
	return o.store.ListMemories(ctx, tenant, q)
}

// UserMemoriesDeletion reports what DeleteUserMemories removed.
type UserMemoriesDeletion struct {
	Tenant     string `json:"tenant"`
	UserID     string `json:"user_id"`
	Memories   int    `json:"memories"`
	Versions   int    `json:"versions"`
	Lineage    int    `json:"lineage"`
	Embeddings int    `json:"embeddings"`
	// CandidateMsgs are the user's candidates still in flight (CANDIDATES and their
	// dead letters), dropped so they cannot bring a forgotten memory back.
	CandidateMsgs int `json:"candidate_messages"`
	// TurnsKept is false when the turns went too (a full user erasure, DeleteUser).
	TurnsKept bool `json:"turns_kept"`
	Turns     int  `json:"turns"`
	// Erasure is DeleteUser's report when the turns were deleted too.
	Erasure *UserDeletion `json:"erasure,omitempty"`
}

// DeleteUserMemories forgets every memory of one user. Without turns it hard-deletes
// the memories as DeleteMemory does, each with its own "delete" audit entry (id,
// version and content hash, never content): versions, lineage and embeddings go,
// ledger entries stay marked dropped so the kept turns' candidates cannot recreate
// them, and the user's candidates in flight are purged before and after. With turns
// it is DeleteUser: the right to erasure, everything of the user.
func (l *Lifecycle) DeleteUserMemories(ctx context.Context, tenant, userID string, turns bool, actor string) (UserMemoriesDeletion, error) {
	rep := UserMemoriesDeletion{Tenant: tenant, UserID: userID, TurnsKept: !turns}
	if turns {
		d, err := l.DeleteUser(ctx, tenant, userID, actor)
		if err != nil {
			return rep, err
		}
		rep.Memories, rep.Versions, rep.Lineage, rep.Embeddings = d.Memories, d.Versions, d.Lineage, d.Embeddings
		rep.CandidateMsgs, rep.Turns, rep.Erasure = d.CandidateMsgs, d.Turns, &d
		return rep, nil
	}
	if err := checkUser(tenant, userID); err != nil {
		return rep, err
	}
	if err := l.purgeCandidates(ctx, tenant, userID, &rep); err != nil {
		return rep, err
	}
	err := l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		if err := tx.LockOwner(ctx, userID); err != nil {
			return err
		}
		gone, n, err := tx.DeleteUserMemories(ctx, userID)
		if err != nil {
			return err
		}
		rep.Memories, rep.Versions, rep.Lineage, rep.Embeddings = len(gone), n.Versions, n.Lineage, n.Embeddings
		for _, g := range gone {
			if err := tx.Audit(ctx, memory.AuditEntry{Action: "delete", Actor: actorOr(actor), Module: module,
				MemoryID: g.ID, Subject: userID, Version: g.Version, ContentHash: g.ContentHash,
				Details: map[string]any{"forget_user_memories": true}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("forgetting user %s's memories: %w", userID, err)
	}
	if err := l.purgeCandidates(ctx, tenant, userID, &rep); err != nil {
		return rep, err
	}
	l.log.Info("user's memories forgotten", "tenant", tenant, "user", userID, "memories", rep.Memories)
	return rep, nil
}

// purgeCandidates drops the user's messages from CANDIDATES and their dead letters.
func (l *Lifecycle) purgeCandidates(ctx context.Context, tenant, userID string, rep *UserMemoriesDeletion) error {
	if l.js == nil {
		return nil
	}
	subj, err := streams.CandidateSubject(tenant, userID)
	if err != nil {
		return fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	n, err := purgeSubject(ctx, l.js, streams.CandidatesStream, subj)
	if err != nil {
		return fmt.Errorf("forgetting user %s's memories: %w", userID, err)
	}
	d, err := deleteDeadLetters(ctx, l.js, tenant, map[string]bool{subj: true})
	if err != nil {
		return fmt.Errorf("forgetting user %s's memories: %w", userID, err)
	}
	rep.CandidateMsgs += n + d
	return nil
}
