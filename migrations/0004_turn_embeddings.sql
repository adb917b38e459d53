-- Turn vectors: the turns layer is searched by vector as well as by keyword when turn
-- embedding is enabled. Same shape as memory_embeddings (0001): one row per turn and
-- model, the owner repeated so the exact per-owner scan reads one index range.
CREATE TABLE turn_embeddings (
    tenant     text        NOT NULL DEFAULT engram_tenant(),
    turn_id    text        NOT NULL,
    model      text        NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
    dims       integer     NOT NULL CHECK (dims BETWEEN 1 AND 16000),
    user_id    text        NOT NULL,
    embedding  vector      NOT NULL CHECK (vector_dims(embedding) = dims),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, turn_id, model),
    FOREIGN KEY (tenant, turn_id) REFERENCES turns (tenant, turn_id) ON DELETE CASCADE
);
CREATE INDEX turn_embeddings_owner ON turn_embeddings (tenant, model, user_id);

-- A vector is derived from the content, so it goes when retention purges the content
-- (the turn row itself stays for lineage, so the foreign key's cascade does not fire).
-- The trigger runs as the caller, inside the caller's tenant, under RLS like any write.
CREATE FUNCTION engram_drop_turn_embeddings() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM turn_embeddings e
    USING purged p
    WHERE e.tenant = p.tenant AND e.turn_id = p.turn_id AND p.content IS NULL;
    RETURN NULL;
END
$$;
CREATE TRIGGER turns_drop_embeddings AFTER UPDATE ON turns
    REFERENCING NEW TABLE AS purged FOR EACH STATEMENT EXECUTE FUNCTION engram_drop_turn_embeddings();

ALTER TABLE turn_embeddings ENABLE ROW LEVEL SECURITY;
ALTER TABLE turn_embeddings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON turn_embeddings USING (tenant = engram_tenant())
    WITH CHECK (tenant = engram_tenant());
