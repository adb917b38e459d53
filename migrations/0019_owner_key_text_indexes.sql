-- The keyword sides read their own tenant's owner only (issue 17). 0011 keyed the
-- full-text indexes by (user_id, tsv), leaving the tenant out because a tenant's GIN
-- entry lists every row of the tenant. But a user id is the tenant's own name for its
-- user: "alice" or "user-1" recur across tenants, and the global scope is user_id ''
-- in every tenant. A search then read and rechecked every tenant's rows of that id
-- holding a term: measured with three tenants whose large users share an id, the
-- keyword side of the 100,000-memory user read 8,419 rows to rank its own 545 (20 of
-- its 25 ms), and each tenant's global scope read every tenant's global memories.
--
-- owner_key is one value per (tenant, owner): a 64-bit hash of both, so the GIN index
-- holds one entry per owner, as with user_id. The statements that use the index ask
-- for the same hash of their tenant and user (ownerKeySQL in memory/) besides the
-- tenant and user conditions, which stay: a collision of two owners' hashes costs a
-- recheck, never a wrong row. It is a stored column, not an expression of the index,
-- because the application role reads under forced row-level security, where only
-- leakproof conditions reach an index: int8 equality is, the concatenation is not.
--
-- Adding the columns rewrites both tables under an exclusive lock, as 0006 did (here
-- 2 minutes for 3.1 million memories and 1.1 million turns, with other work beside it).
-- A process started before this migration keeps running (a rolling update): its
-- keyword side reads the owner's rows without the full-text index, slower but right.
ALTER TABLE memories ADD COLUMN owner_key bigint
    GENERATED ALWAYS AS (hashtextextended(tenant || '/' || user_id, 0)) STORED;
ALTER TABLE turns ADD COLUMN owner_key bigint
    GENERATED ALWAYS AS (hashtextextended(tenant || '/' || user_id, 0)) STORED;

CREATE INDEX memories_owner_tsv ON memories USING gin (owner_key, tsv) WITH (fastupdate = off);
DROP INDEX memories_user_tsv;
CREATE INDEX turns_owner_tsv ON turns USING gin (owner_key, tsv) WITH (fastupdate = off);
DROP INDEX turns_user_tsv;

ANALYZE memories;
ANALYZE turns;
