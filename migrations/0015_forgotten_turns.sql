-- A turn whose memory was hard-deleted on request (issue 18). A context call falls
-- back to the user's own words from earlier sessions that no memory came from; a turn
-- loses its lineage when the memory it produced is deleted, and without this mark the
-- words the user asked to forget would come back through that fallback. Set for the
-- deleted memory's source turns, never cleared; the turn itself stays (other memories,
-- the audit trail and the turns layer of a search may name it).
ALTER TABLE turns ADD COLUMN forgotten boolean NOT NULL DEFAULT false;
