-- Listing (GET /v1/memories) pages a user's memories in (updated_at, id) order with a
-- keyset cursor: this index serves each page as one range scan, and a metadata filter
-- (jsonb containment) is applied to the rows of that range.
--
-- No GIN index on metadata: under the row-level security engram forces on every table,
-- PostgreSQL cannot use an index for a qual whose operator is not LEAKPROOF (jsonb @>
-- is not, and only a superuser may mark it so), so such an index would cost every write
-- and serve no query (checked with EXPLAIN under FORCE ROW LEVEL SECURITY).
CREATE INDEX memories_list_user ON memories (tenant, user_id, updated_at, id);
