-- Approximate vector indexes for very large owners (issue 17). Searches scan an
-- owner's vectors exactly; an owner (a user, or a tenant's global scope: user_id '')
-- above a measured size gets a partial HNSW index of its own over memory_embeddings,
-- built with CREATE INDEX CONCURRENTLY by the maintenance path (memory.MaintainHNSW,
-- run as the owner role: the application role owns nothing and cannot create an
-- index, and CREATE INDEX CONCURRENTLY cannot run inside a function or transaction,
-- so a SECURITY DEFINER function cannot do it). This table records which owners have
-- one; a search reads its tenant's row to choose the index path.
CREATE TABLE hnsw_owner_indexes (
    tenant     text        NOT NULL DEFAULT engram_tenant(),
    model      text        NOT NULL,
    user_id    text        NOT NULL, -- '' is the tenant's global scope
    dims       integer     NOT NULL CHECK (dims BETWEEN 1 AND 2000),
    index_name text        NOT NULL UNIQUE CHECK (index_name ~ '^engram_hnsw_[0-9a-f]{16}$'),
    -- building: CREATE INDEX CONCURRENTLY runs (or died: the maintainer drops and
    -- rebuilds it); ready: searches use it.
    state      text        NOT NULL CHECK (state IN ('building', 'ready')),
    rows_at_build bigint   NOT NULL,
    ef_search  integer     NOT NULL CHECK (ef_search BETWEEN 1 AND 1000),
    created_at timestamptz NOT NULL DEFAULT now(),
    ready_at   timestamptz,
    PRIMARY KEY (tenant, model, user_id)
);

-- A tenant's transaction reads its own rows (the search's lookup); the owner role,
-- which maintains the indexes across tenants, sees and writes every row.
ALTER TABLE hnsw_owner_indexes ENABLE ROW LEVEL SECURITY;
ALTER TABLE hnsw_owner_indexes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON hnsw_owner_indexes USING (tenant = engram_tenant())
    WITH CHECK (tenant = engram_tenant());
CREATE POLICY operator ON hnsw_owner_indexes TO CURRENT_USER USING (true) WITH CHECK (true);
-- The application only reads it (default privileges granted it all four).
REVOKE INSERT, UPDATE, DELETE ON hnsw_owner_indexes FROM engram_app;
