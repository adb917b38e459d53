-- A turn whose memory was hard-deleted on request (issue 18). A context call falls
-- back to the user's own words from earlier sessions that no memory came from; a turn
-- loses its lineage when the memory it produced is deleted, and without this mark the
-- words the user asked to forget would come back through that fallback. Set for the
-- deleted memory's source turns, never cleared; the turn itself stays (other memories,
-- the audit trail and the turns layer of a search may name it).
ALTER TABLE turns ADD COLUMN forgotten boolean NOT NULL DEFAULT false;

-- Deletions made before this migration, from the audit log: a single memory's entry
-- names its source turns; forgetting all of a user's memories names none, so every turn
-- of the user stored before it is marked. FORCE is lifted for this transaction only, as
-- in 0002 (the owner is bound by forced row-level security too).
ALTER TABLE turns NO FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_log NO FORCE ROW LEVEL SECURITY;
UPDATE turns t SET forgotten = true
FROM (SELECT a.tenant, jsonb_array_elements_text(a.details->'source_turn_ids') AS turn_id
      FROM audit_log a
      WHERE a.action = 'delete' AND jsonb_typeof(a.details->'source_turn_ids') = 'array') d
WHERE t.tenant = d.tenant AND t.turn_id = d.turn_id;
UPDATE turns t SET forgotten = true
FROM (SELECT a.tenant, a.subject, max(a.at) AS at
      FROM audit_log a
      WHERE a.action = 'delete' AND a.details @> '{"forget_user_memories": true}'
      GROUP BY a.tenant, a.subject) f
WHERE t.tenant = f.tenant AND t.user_id = f.subject AND t.received_at <= f.at;
ALTER TABLE turns FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;
