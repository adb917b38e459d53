-- Schema v1: turns, memories, versions, lineage, embeddings, audit, with forced
-- row-level security on every tenant table.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- engram_tenant is the tenant of the current transaction, set by the store with
-- set_config('engram.tenant', $1, true). Unset means NULL, and NULL matches no row:
-- a query that forgets the tenant sees nothing.
CREATE FUNCTION engram_tenant() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('engram.tenant', true), '') $$;

CREATE TABLE turns (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    turn_id      text        NOT NULL CHECK (length(turn_id) BETWEEN 1 AND 128),
    user_id      text        NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    agent_id     text        NOT NULL DEFAULT '',
    session_id   text        NOT NULL CHECK (length(session_id) BETWEEN 1 AND 128),
    task_id      text        NOT NULL DEFAULT '',
    role         text        NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
    -- content is NULL once retention deleted it; the hash keeps lineage verifiable.
    content      text,
    content_hash bytea       NOT NULL,
    search_text  text        NOT NULL DEFAULT '',
    tsv          tsvector    GENERATED ALWAYS AS (to_tsvector('english', search_text)) STORED,
    tool         jsonb,
    metadata     jsonb       NOT NULL DEFAULT '{}',
    occurred_at  timestamptz NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    stored_at    timestamptz NOT NULL DEFAULT now(),
    seq          bigint      GENERATED ALWAYS AS IDENTITY,
    content_deleted_at timestamptz,
    PRIMARY KEY (tenant, turn_id),
    CHECK (tool IS NULL OR tool->>'status' IN ('success', 'failure'))
);
CREATE INDEX turns_session ON turns (tenant, user_id, session_id, occurred_at, seq);
CREATE INDEX turns_user_time ON turns (tenant, user_id, occurred_at);
CREATE INDEX turns_tsv ON turns USING gin (tenant, tsv);

CREATE TABLE memories (
    tenant            text        NOT NULL DEFAULT engram_tenant(),
    id                uuid        NOT NULL,
    user_id           text        NOT NULL DEFAULT '',
    agent_id          text        NOT NULL DEFAULT '',
    session_id        text        NOT NULL DEFAULT '',
    scope             text        NOT NULL CHECK (scope IN ('user', 'agent', 'session', 'global')),
    type              text        NOT NULL CHECK (type IN ('episodic', 'semantic', 'procedural')),
    category          text        NOT NULL CHECK (category IN ('preference', 'fact', 'constraint', 'event',
                          'skill', 'decision', 'profile', 'goal', 'relationship', 'task', 'other')),
    key               text        CHECK (key IS NULL OR length(key) BETWEEN 1 AND 200),
    content           text        NOT NULL CHECK (length(content) BETWEEN 1 AND 8000),
    search_text       text        NOT NULL DEFAULT '',
    tsv               tsvector    GENERATED ALWAYS AS (to_tsvector('english', search_text)) STORED,
    importance        real        NOT NULL CHECK (importance BETWEEN 0 AND 1),
    confidence        real        NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    status            text        NOT NULL CHECK (status IN ('active', 'pending', 'superseded', 'deprecated',
                          'expired', 'archived')),
    version           integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    valid_from        timestamptz NOT NULL,
    valid_to          timestamptz,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    expire_at         timestamptz,
    access_count      bigint      NOT NULL DEFAULT 0,
    last_access_at    timestamptz,
    confirm_count     integer     NOT NULL DEFAULT 1,
    last_confirmed_at timestamptz NOT NULL DEFAULT now(),
    consolidated_at   timestamptz,
    source            text        NOT NULL CHECK (source IN ('user', 'assistant', 'tool', 'consolidation', 'manual')),
    extractor         text        NOT NULL DEFAULT '',
    extractor_version text        NOT NULL DEFAULT '',
    model             text        NOT NULL DEFAULT '',
    metadata          jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, id),
    CHECK (valid_to IS NULL OR valid_to >= valid_from),
    -- The owner columns must match the scope, so owner-scoped searches cannot miss rows.
    CHECK (CASE scope
        WHEN 'user' THEN user_id <> ''
        WHEN 'session' THEN user_id <> '' AND session_id <> ''
        WHEN 'agent' THEN agent_id <> ''
        ELSE true END)
) WITH (fillfactor = 85); -- room on each page for in-place (HOT) updates: confirmations, access counts
-- Every search is scoped to one owner: this B-tree serves the owner filter, the
-- recency list and the exact vector scan (FACTS.md: ~2 ms for 1,000 vectors).
CREATE INDEX memories_owner ON memories (tenant, user_id, status, updated_at DESC);
CREATE INDEX memories_agent ON memories (tenant, agent_id, status) WHERE scope = 'agent';
CREATE INDEX memories_key ON memories (tenant, user_id, key) WHERE key IS NOT NULL;
CREATE INDEX memories_expire ON memories (expire_at) WHERE expire_at IS NOT NULL AND status IN ('active', 'pending');
-- One GIN over (tenant, tsvector) keeps keyword search inside a tenant fast (FACTS.md).
CREATE INDEX memories_tsv ON memories USING gin (tenant, tsv);

CREATE TABLE memory_versions (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    memory_id    uuid        NOT NULL,
    version      integer     NOT NULL CHECK (version >= 1),
    change       text        NOT NULL CHECK (change IN ('add', 'confirm', 'update', 'supersede', 'pending',
                     'promote', 'correct', 'deprecate', 'rollback', 'expire', 'archive', 'restore', 'decay',
                     'consolidate')),
    content      text        NOT NULL,
    old_content  text,
    status       text        NOT NULL CHECK (status IN ('active', 'pending', 'superseded', 'deprecated',
                     'expired', 'archived')),
    category     text        NOT NULL,
    key          text,
    importance   real        NOT NULL,
    confidence   real        NOT NULL,
    valid_from   timestamptz NOT NULL,
    valid_to     timestamptz,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    reason       text        NOT NULL DEFAULT '',
    actor        text        NOT NULL CHECK (actor <> ''),
    candidate_id text,
    PRIMARY KEY (tenant, memory_id, version),
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
-- A candidate can produce at most one version, anywhere in the tenant: re-applying it
-- is impossible at the database level, whatever the application does.
CREATE UNIQUE INDEX memory_versions_candidate ON memory_versions (tenant, candidate_id)
    WHERE candidate_id IS NOT NULL;

-- applied_candidates is the resolver's idempotency ledger: every candidate id it has
-- decided on, including decisions that write no version (confirm, noop).
CREATE TABLE applied_candidates (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    candidate_id text        NOT NULL,
    memory_id    uuid,
    decision     text        NOT NULL CHECK (decision IN ('add', 'confirm', 'update', 'supersede', 'pending',
                     'promote', 'noop', 'drop')),
    reason       text        NOT NULL DEFAULT '',
    applied_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, candidate_id)
);

CREATE TABLE memory_lineage (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    memory_id    uuid        NOT NULL,
    source_kind  text        NOT NULL CHECK (source_kind IN ('turn', 'memory')),
    source_id    text        NOT NULL,
    candidate_id text,
    added_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id, source_kind, source_id),
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX memory_lineage_source ON memory_lineage (tenant, source_kind, source_id);

-- Vectors are stored per model with their dimensions, so models of different sizes
-- coexist and a new one is rolled in by re-embedding. The owner is repeated here so
-- the exact scan reads one index range without touching memories first.
CREATE TABLE memory_embeddings (
    tenant     text        NOT NULL DEFAULT engram_tenant(),
    memory_id  uuid        NOT NULL,
    model      text        NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
    dims       integer     NOT NULL CHECK (dims BETWEEN 1 AND 16000),
    user_id    text        NOT NULL DEFAULT '',
    embedding  vector      NOT NULL CHECK (vector_dims(embedding) = dims),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id, model),
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX memory_embeddings_owner ON memory_embeddings (tenant, model, user_id);

-- audit_log keeps who did what to which memory, with a content hash and never the
-- content, so it may outlive a hard deletion.
CREATE TABLE audit_log (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    id           bigint      GENERATED ALWAYS AS IDENTITY,
    at           timestamptz NOT NULL DEFAULT now(),
    action       text        NOT NULL CHECK (action IN ('create', 'confirm', 'update', 'supersede', 'pending',
                     'promote', 'correct', 'deprecate', 'rollback', 'expire', 'archive', 'restore', 'decay',
                     'consolidate', 'delete', 'delete_user', 'export', 'import', 'turn_store', 'turn_purge')),
    actor        text        NOT NULL CHECK (actor <> ''),
    module       text        NOT NULL CHECK (module <> ''),
    memory_id    uuid,
    subject      text        NOT NULL DEFAULT '',
    version      integer,
    content_hash bytea,
    details      jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, id)
);
CREATE INDEX audit_log_memory ON audit_log (tenant, memory_id) WHERE memory_id IS NOT NULL;

-- Forced row-level security: the policy binds the table owner too. The application
-- role must be neither superuser nor BYPASSRLS (checked at start-up).
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['turns', 'memories', 'memory_versions', 'applied_candidates',
                             'memory_lineage', 'memory_embeddings', 'audit_log']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant = engram_tenant()) '
                       'WITH CHECK (tenant = engram_tenant())', t);
    END LOOP;
END
$$;
