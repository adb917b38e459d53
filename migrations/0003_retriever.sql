-- Retriever: retrieval records (which memories each search and context call returned)
-- and rolling session summaries for the short-term layer, with forced row-level
-- security like every tenant table in 0001.

-- retrievals records what each read returned, so a later answer can be traced back
-- to the memories it was given. The query itself is not kept, only its hash.
CREATE TABLE retrievals (
    tenant      text        NOT NULL DEFAULT engram_tenant(),
    id          uuid        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('search', 'context')),
    query_hash  bytea       NOT NULL,
    user_id     text        NOT NULL DEFAULT '',
    session_id  text        NOT NULL DEFAULT '',
    memory_ids  uuid[]      NOT NULL DEFAULT '{}',
    turn_ids    text[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id)
);
-- Serves retention (delete older than N days) and per-user listing.
CREATE INDEX retrievals_time ON retrievals (tenant, created_at);

-- session_summaries holds the rolling, extractive summary of a session's older turns,
-- refreshed off the request path once the session grows past the configured size.
CREATE TABLE session_summaries (
    tenant       text        NOT NULL DEFAULT engram_tenant(),
    user_id      text        NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    session_id   text        NOT NULL CHECK (length(session_id) BETWEEN 1 AND 128),
    summary      text        NOT NULL,
    turn_count   integer     NOT NULL CHECK (turn_count >= 0),
    last_turn_at timestamptz,
    method       text        NOT NULL DEFAULT 'extractive',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, user_id, session_id)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['retrievals', 'session_summaries']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant = engram_tenant()) '
                       'WITH CHECK (tenant = engram_tenant())', t);
    END LOOP;
END
$$;
