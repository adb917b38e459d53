-- Indexes that match the queries engram runs (issue "One home per role"), read from the
-- store's statements and checked with EXPLAIN on a seeded database:
--
-- * Keyword search of turns is always scoped to one user of one tenant. The old GIN
--   index over (tenant, tsv) ranged over every user of the tenant (or was passed over
--   for the (tenant, user_id, occurred_at) B-tree, which then reads all of the user's
--   turns); one over (tenant, user_id, tsv), via btree_gin, finds the user's matching
--   turns only.
DROP INDEX IF EXISTS turns_tsv;
CREATE INDEX turns_user_tsv ON turns USING gin (tenant, user_id, tsv);

-- * User erasure and hard deletion look ledger entries up by memory id (the primary key
--   is by candidate id): without an index each deletion scans the tenant's ledger.
CREATE INDEX applied_candidates_memory ON applied_candidates (tenant, memory_id) WHERE memory_id IS NOT NULL;

-- * Retrieval records are deleted per user (erasure) and listed per user; nothing reads
--   them by time alone, so the (tenant, created_at) index gives way to a per-user one.
DROP INDEX IF EXISTS retrievals_time;
CREATE INDEX retrievals_user ON retrievals (tenant, user_id, created_at);

-- * Indexes no statement uses: the memories' keyword side ranks the owner's rows after
--   reading them through memories_owner, never through (tenant, tsv); TTL expiry runs
--   per owner through memories_owner, not by expire_at across tenants; nothing reads
--   the audit log by memory. Each cost every write.
DROP INDEX IF EXISTS memories_tsv;
DROP INDEX IF EXISTS memories_expire;
DROP INDEX IF EXISTS audit_log_memory;
