package consolidator

import (
	"context"
	"errors"
	"fmt"

	"github.com/engramhq/engram/memory"
)

// Forgetting is deliberate and recorded. Per owner, in one transaction under the
// owner's lock (so it cannot interleave with the resolver writing the same owner):
//
//   - TTL: active or pending memories past expire_at become expired.
//   - Archive: active memories unused for ArchiveAfter become archived (out of
//     default retrieval; Lifecycle.Restore brings one back).
//   - Caps: beyond MaxPerOwner active memories, the lowest-valued are archived.
//   - Decay: active memories unused for DecayAfter lose importance (× DecayFactor,
//     never below DecayFloor), at most once per DecayInterval.
//   - Turn retention: raw turns older than TurnRetention lose their content.
//
// Every change (expire, archive, decay) writes a version row and an audit row per
// memory through the store's change writer, one statement per step. Decay changes
// neither what a memory says nor whether it is believed, and does not touch
// updated_at, because "unused" is measured from it (with last_access_at and
// last_confirmed_at: the latest of the three is a memory's last use).
//
// The step's statements and the owner's consolidation_progress row commit together,
// which is what makes a resumed run do each owner's forgetting exactly once.
func (c *Consolidator) forget(ctx context.Context, runID, root int64, o owner, prior Counts, dryRun bool) (Counts, error) {
	var cnt Counts
	err := c.store.InTx(ctx, o.Tenant, func(tx *memory.Tx) error {
		cnt = Counts{}
		if err := tx.LockOwner(ctx, ownerLockKey(o)); err != nil {
			return err
		}
		done, err := tx.OwnerDone(ctx, root, o.UserID)
		if err != nil {
			return err
		}
		if done {
			return nil // a concurrent resumed run got here first (cannot happen under the run lock; cheap to check)
		}
		if cnt.Expired, err = c.expire(ctx, tx, o); err != nil {
			return err
		}
		if cnt.Archived, err = c.archiveCold(ctx, tx, o); err != nil {
			return err
		}
		if cnt.Capped, err = c.enforceCap(ctx, tx, o); err != nil {
			return err
		}
		// Decay last: what was just archived need not lose importance too.
		if cnt.Decayed, err = c.decay(ctx, tx, o); err != nil {
			return err
		}
		if cnt.TurnsPurged, err = c.purgeTurns(ctx, tx, o); err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		all := prior
		all.add(cnt)
		return tx.RecordOwnerDone(ctx, root, runID, o.UserID, all)
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return cnt, err
}

// ownerLockKey is the resolver's lock key for the owner's memories. The agent and
// global pool of a tenant (empty user id) takes the global pool's key, "#global".
func ownerLockKey(o owner) string {
	return memory.Owner{UserID: o.UserID}.LockKey()
}

// expire ends memories whose TTL passed.
func (c *Consolidator) expire(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	return tx.ExpireDue(ctx, o.UserID, c.cfg.Actor, module, "ttl: expire_at passed")
}

// decay lowers the importance of unused memories, unless the owner decayed less than
// DecayInterval ago.
func (c *Consolidator) decay(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.DecayAfter < 0 || c.cfg.DecayFactor >= 1 {
		return 0, nil
	}
	return tx.DecayUnused(ctx, o.UserID, memory.Decay{After: c.cfg.DecayAfter, Factor: c.cfg.DecayFactor,
		Floor: c.cfg.DecayFloor, Interval: c.cfg.DecayInterval, Actor: c.cfg.Actor, Module: module,
		Reason: fmt.Sprintf("unused for %s: importance × %g", c.cfg.DecayAfter, c.cfg.DecayFactor)})
}

func (c *Consolidator) archiveCold(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.ArchiveAfter < 0 {
		return 0, nil
	}
	return tx.ArchiveUnused(ctx, o.UserID, c.cfg.ArchiveAfter, c.cfg.Actor, module,
		fmt.Sprintf("unused for %s", c.cfg.ArchiveAfter))
}

// enforceCap archives the owner's lowest-valued active memories beyond MaxPerOwner.
func (c *Consolidator) enforceCap(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.MaxPerOwner < 0 {
		return 0, nil
	}
	return tx.ArchiveBeyondCap(ctx, o.UserID, c.cfg.MaxPerOwner, c.cfg.Actor, module,
		fmt.Sprintf("over the cap of %d active memories", c.cfg.MaxPerOwner))
}

// purgeTurns deletes the content of old turns (see memory.Tx.PurgeTurnContent), with
// one audit row per owner.
func (c *Consolidator) purgeTurns(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.TurnRetention < 0 || o.UserID == "" {
		return 0, nil
	}
	n, err := tx.PurgeTurnContent(ctx, o.UserID, c.cfg.TurnRetention)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		if err := tx.Audit(ctx, memory.AuditEntry{Action: "turn_purge", Actor: c.cfg.Actor, Module: module,
			Subject: o.UserID, Details: map[string]any{"turns": n, "retention": c.cfg.TurnRetention.String()}}); err != nil {
			return 0, err
		}
	}
	return n, nil
}
