package consolidator

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
// Status changes (expire, archive) write a version row and an audit row per memory,
// like memory.Tx.Apply, but as one statement per step. Decay writes an audit row per
// memory and no version: it changes how much a memory counts, not what it says or
// whether it is believed, and a version per memory per night would bury the history
// that matters. Nothing here touches updated_at except status changes, because
// "unused" is measured from it (with last_access_at and last_confirmed_at: the latest
// of the three is a memory's last use).
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
		var done bool
		if err := tx.Raw().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM consolidation_progress
			WHERE root_id = $1 AND tenant = $2 AND user_id = $3)`, root, o.Tenant, o.UserID).Scan(&done); err != nil {
			return fmt.Errorf("checking progress: %w", err)
		}
		if done {
			return nil // a concurrent resumed run got here first (cannot happen under the run lock; cheap to check)
		}
		var err error
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
		if _, err := tx.Raw().Exec(ctx, `INSERT INTO consolidation_progress (root_id, tenant, user_id, run_id, counts)
			VALUES ($1, $2, $3, $4, $5)`, root, o.Tenant, o.UserID, runID, all); err != nil {
			return fmt.Errorf("recording progress: %w", err)
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return cnt, err
}

// ownerLockKey is the resolver's lock key for the owner's memories.
func ownerLockKey(o owner) string {
	if o.UserID == "" {
		return "#global"
	}
	return o.UserID
}

// transition moves the memories a predicate selects to a new status, writing a version
// and an audit row per memory in the same statement. where is a boolean SQL
// expression over the memories row m, whose parameters start at $5 ($1 tenant, $2
// user, $3 actor, $4 reason); extraSet adds assignments.
func (c *Consolidator) transition(ctx context.Context, tx *memory.Tx, o owner, change memory.Change, status memory.Status,
	reason, extraSet, where string, args ...any) (int, error) {
	q := `WITH t AS (
			UPDATE memories m SET status = '` + string(status) + `', version = m.version + 1, updated_at = now()` + extraSet + `
			WHERE m.tenant = $1 AND m.user_id = $2 AND (` + where + `)
			RETURNING m.*
		), v AS (
			INSERT INTO memory_versions (tenant, memory_id, version, change, content, status, category, key,
				importance, confidence, valid_from, valid_to, recorded_at, reason, actor)
			SELECT tenant, id, version, '` + string(change) + `', content, status, category, key, importance,
				confidence, valid_from, valid_to, now(), $4, $3 FROM t
		), a AS (
			INSERT INTO audit_log (tenant, action, actor, module, memory_id, subject, version, content_hash, details)
			SELECT tenant, '` + string(change) + `', $3, 'consolidator', id, user_id, version,
				sha256(convert_to(content, 'UTF8')), jsonb_build_object('status', status, 'reason', $4::text) FROM t
		)
		SELECT count(*) FROM t`
	var n int
	if err := tx.Raw().QueryRow(ctx, q, append([]any{o.Tenant, o.UserID, c.cfg.Actor, reason}, args...)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s memories of %s: %w", change, o, err)
	}
	return n, nil
}

// expire ends memories whose TTL passed. valid_to is when they stopped holding: the
// expiry time, not the moment this run noticed.
func (c *Consolidator) expire(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	return c.transition(ctx, tx, o, memory.ChangeExpire, memory.StatusExpired, "ttl: expire_at passed",
		`, valid_to = coalesce(m.valid_to, greatest(m.valid_from, least(m.expire_at, now())))`,
		`m.status IN ('active', 'pending') AND m.expire_at <= now()`)
}

// decay lowers the importance of unused memories in one statement, with an audit row
// each, unless the owner decayed less than DecayInterval ago.
func (c *Consolidator) decay(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.DecayAfter < 0 || c.cfg.DecayFactor >= 1 {
		return 0, nil
	}
	var due bool
	if err := tx.Raw().QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM owners WHERE tenant = $1 AND user_id = $2
		AND last_decay_at > now() - make_interval(secs => $3))`, o.Tenant, o.UserID, max(c.cfg.DecayInterval.Seconds(), 0)).Scan(&due); err != nil {
		return 0, fmt.Errorf("checking the last decay of %s: %w", o, err)
	}
	if !due {
		return 0, nil
	}
	var n int
	err := tx.Raw().QueryRow(ctx, `WITH d AS (
			UPDATE memories m SET importance = greatest($3::real, (m.importance * $4)::real)
			WHERE m.tenant = $1 AND m.user_id = $2 AND m.status = 'active' AND m.importance > $3::real
			  AND greatest(m.last_access_at, m.last_confirmed_at, m.updated_at) < now() - make_interval(secs => $5)
			RETURNING m.tenant, m.id, m.user_id, m.version, m.importance, m.content
		), a AS (
			INSERT INTO audit_log (tenant, action, actor, module, memory_id, subject, version, content_hash, details)
			SELECT tenant, 'decay', $6, 'consolidator', id, user_id, version, sha256(convert_to(content, 'UTF8')),
				jsonb_build_object('importance', importance, 'factor', $4::float8) FROM d
		)
		SELECT count(*) FROM d`, o.Tenant, o.UserID, c.cfg.DecayFloor, c.cfg.DecayFactor, c.cfg.DecayAfter.Seconds(), c.cfg.Actor).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("decaying memories of %s: %w", o, err)
	}
	if _, err := tx.Raw().Exec(ctx, `INSERT INTO owners (tenant, user_id, last_decay_at) VALUES ($1, $2, now())
		ON CONFLICT (tenant, user_id) DO UPDATE SET last_decay_at = now()`, o.Tenant, o.UserID); err != nil {
		return 0, fmt.Errorf("recording the decay of %s: %w", o, err)
	}
	return n, nil
}

func (c *Consolidator) archiveCold(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.ArchiveAfter < 0 {
		return 0, nil
	}
	return c.transition(ctx, tx, o, memory.ChangeArchive, memory.StatusArchived,
		fmt.Sprintf("unused for %s", c.cfg.ArchiveAfter), "",
		`m.status = 'active' AND greatest(m.last_access_at, m.last_confirmed_at, m.updated_at) < now() - make_interval(secs => $5)`,
		c.cfg.ArchiveAfter.Seconds())
}

// enforceCap archives the owner's lowest-valued active memories beyond MaxPerOwner.
func (c *Consolidator) enforceCap(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.MaxPerOwner < 0 {
		return 0, nil
	}
	var active int
	if err := tx.Raw().QueryRow(ctx, `SELECT count(*) FROM memories WHERE tenant = $1 AND user_id = $2 AND status = 'active'`,
		o.Tenant, o.UserID).Scan(&active); err != nil {
		return 0, fmt.Errorf("counting active memories of %s: %w", o, err)
	}
	excess := active - c.cfg.MaxPerOwner
	if excess <= 0 {
		return 0, nil
	}
	rows, err := tx.Raw().Query(ctx, `SELECT id FROM memories WHERE tenant = $1 AND user_id = $2 AND status = 'active'
		ORDER BY importance * confidence / (1 + extract(epoch FROM now() - greatest(last_access_at, last_confirmed_at, updated_at)) / 86400.0 / 30), id
		LIMIT $3`, o.Tenant, o.UserID, excess)
	if err != nil {
		return 0, fmt.Errorf("ranking memories of %s: %w", o, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, fmt.Errorf("ranking memories of %s: %w", o, err)
	}
	return c.transition(ctx, tx, o, memory.ChangeArchive, memory.StatusArchived,
		fmt.Sprintf("over the cap of %d active memories", c.cfg.MaxPerOwner), "",
		`m.status = 'active' AND m.id = ANY($5)`, ids)
}

// purgeTurns deletes the content of old turns: ids, hashes and times stay, so lineage
// still resolves (to a turn marked deleted). A tool call keeps its name and status
// but loses its error text, which may quote content. One audit row per owner.
func (c *Consolidator) purgeTurns(ctx context.Context, tx *memory.Tx, o owner) (int, error) {
	if c.cfg.TurnRetention < 0 || o.UserID == "" {
		return 0, nil
	}
	var n int
	err := tx.Raw().QueryRow(ctx, `WITH p AS (
			UPDATE turns SET content = NULL, search_text = '', content_deleted_at = now(),
				tool = CASE WHEN tool IS NULL THEN NULL ELSE jsonb_build_object('name', tool->'name', 'status', tool->'status') END
			WHERE tenant = $1 AND user_id = $2 AND content IS NOT NULL
			  AND occurred_at < now() - make_interval(secs => $3)
			RETURNING 1
		) SELECT count(*) FROM p`, o.Tenant, o.UserID, c.cfg.TurnRetention.Seconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("purging old turns of %s: %w", o, err)
	}
	if n > 0 {
		if err := tx.Audit(ctx, memory.AuditEntry{Action: "turn_purge", Actor: c.cfg.Actor, Module: module,
			Subject: o.UserID, Details: map[string]any{"turns": n, "retention": c.cfg.TurnRetention.String()}}); err != nil {
			return 0, err
		}
	}
	return n, nil
}
