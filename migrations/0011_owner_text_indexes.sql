-- The keyword sides read only the owner's rows that hold a query term (issue 17,
-- item 4), through GIN indexes over (user_id, tsv) via btree_gin; ranking every row
-- of the owner made a search cost grow with the owner's size. (0005 dropped the
-- memories' (tenant, tsv) index, which no query used while the owner's rows were
-- materialised before ranking.)
--
-- The tenant is left out of the key on purpose: in a GIN index each column value is
-- an entry of its own, and a tenant's entry lists every row of the tenant, so a scan
-- that must also match it walks that whole posting tree (measured on 1,000,000
-- memories of one tenant: 375 index pages and 25 ms for one owner's 24 matches, with
-- (user_id, tsv) 31 pages and under 1 ms). The tenant is still checked on every row
-- the index returns (the query's tenant condition and row-level security), so another
-- tenant's user of the same id costs a recheck, never a leak. tsvector @@ tsquery is
-- LEAKPROOF, so the index is usable under the row-level security engram forces.
--
-- fastupdate is off: with it, new entries wait in a pending list that every search
-- scans linearly (up to 4 MB), which puts the cost of recent writes on reads.
CREATE INDEX memories_user_tsv ON memories USING gin (user_id, tsv) WITH (fastupdate = off);

DROP INDEX IF EXISTS turns_user_tsv;
CREATE INDEX turns_user_tsv ON turns USING gin (user_id, tsv) WITH (fastupdate = off);
