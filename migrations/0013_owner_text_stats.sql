-- BM25 collection statistics of each searched owner, kept between searches (issue 17,
-- items 4 and 5). A keyword search needs the owner's document count and mean length,
-- and to prune it needs the owner's frequent terms (a word of nearly every row: "user",
-- the speaker's own name), whose rows it scores but never reads as candidates. Counted
-- per search they cost a pass over the owner's rows, and learnt per process they are
-- unknown to an owner's first search, which then reads and scores most of the owner.
-- The retriever reads this row instead and refreshes it in the background when it is
-- older than its cache life (counts) or ten of them (frequent terms): the search
-- never waits for the counting once the row exists. Statistics stay the owner's own:
-- one row per tenant, layer and owner, under the tenant's row-level security.
CREATE TABLE owner_text_stats (
    tenant     text        NOT NULL DEFAULT engram_tenant(),
    layer      text        NOT NULL CHECK (layer IN ('memories', 'turns')),
    -- Whose rows: scope 'user' with the user id (memories of a user, or a user's
    -- turns), 'agent' with the agent id, 'global' with ''.
    scope      text        NOT NULL CHECK (scope IN ('user', 'agent', 'global')),
    subject    text        NOT NULL,
    docs       float8      NOT NULL CHECK (docs >= 0),
    avg_len    float8      NOT NULL CHECK (avg_len >= 0),
    counted_at timestamptz NOT NULL,
    -- The frequent terms (lexemes of the 'english' configuration) and their document
    -- frequencies, in lexeme order, when they were last counted.
    terms      text[]      NOT NULL DEFAULT '{}',
    dfs        float8[]    NOT NULL DEFAULT '{}' CHECK (cardinality(dfs) = cardinality(terms)),
    terms_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, layer, scope, subject)
);

ALTER TABLE owner_text_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE owner_text_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON owner_text_stats USING (tenant = engram_tenant())
    WITH CHECK (tenant = engram_tenant());
