-- Nightly consolidation: the owners registry, run records and per-owner progress.
--
-- Row-level security and cross-tenant work. The nightly run must visit every tenant,
-- but engram's role is bound by FORCE ROW LEVEL SECURITY on every content table, and
-- that binds the tables' owner too: a SECURITY DEFINER function owned by the same role
-- would see no more than its caller. So tenants and users are discovered from a small
-- registry, `owners`, that a trigger fills on every insert into memories and turns.
-- `owners` is row-level secured like every tenant table, with one addition: a
-- transaction that declares itself an operator (set_config('engram.operator', 'on',
-- true)) may read across tenants. Only the consolidator's owner listing does. The run
-- tables below hold run ids, counts and owner ids of the operator's own runs, never
-- content, and have no row-level security. Every tenant-scoped read and write the run
-- makes still goes through a transaction that sets engram.tenant.

-- owners lists every (tenant, user_id) that has memories or turns; user_id '' is a
-- tenant's pool of agent and global memories.
CREATE TABLE owners (
    tenant        text        NOT NULL CHECK (length(tenant) BETWEEN 1 AND 128),
    user_id       text        NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    -- When importance decay last ran for this owner: decay runs at most once per
    -- NightlyConfig.DecayInterval, however many runs there are.
    last_decay_at timestamptz,
    PRIMARY KEY (tenant, user_id)
);

-- A statement-level trigger sees a batch insert once. ON CONFLICT DO NOTHING takes no
-- lock on an existing row, so known owners cost one index probe per statement.
CREATE FUNCTION engram_note_owners() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO owners (tenant, user_id)
    SELECT DISTINCT tenant, user_id FROM new_rows
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_note_owners AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_note_owners();
CREATE TRIGGER turns_note_owners AFTER INSERT ON turns
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_note_owners();

-- Backfill the registry from existing rows. FORCE is lifted for the duration of this
-- transaction only (ALTER TABLE holds an exclusive lock until commit, so no other
-- session ever sees the tables unforced); a superuser migrator bypasses RLS anyway.
ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE turns NO FORCE ROW LEVEL SECURITY;
INSERT INTO owners (tenant, user_id)
    SELECT tenant, user_id FROM memories UNION SELECT tenant, user_id FROM turns
    ON CONFLICT DO NOTHING;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
ALTER TABLE turns FORCE ROW LEVEL SECURITY;

ALTER TABLE owners ENABLE ROW LEVEL SECURITY;
ALTER TABLE owners FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON owners
    USING (tenant = engram_tenant() OR current_setting('engram.operator', true) = 'on')
    WITH CHECK (tenant = engram_tenant() OR current_setting('engram.operator', true) = 'on');

-- consolidation_runs records every run (operator table, no RLS: see above).
CREATE TABLE consolidation_runs (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- resumes is the interrupted or failed run whose leftover work this run did;
    -- root_id is the first run of such a chain, and progress is recorded under it.
    resumes       bigint      REFERENCES consolidation_runs (id) ON DELETE SET NULL,
    root_id       bigint,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    status        text        NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    tenant_filter text        NOT NULL DEFAULT '',
    user_filter   text        NOT NULL DEFAULT '',
    dry_run       boolean     NOT NULL DEFAULT false,
    owners_total  integer     NOT NULL DEFAULT 0,
    owners_done   integer     NOT NULL DEFAULT 0,
    owners_skipped integer    NOT NULL DEFAULT 0,
    counts        jsonb       NOT NULL DEFAULT '{}',
    llm_calls     integer     NOT NULL DEFAULT 0,
    errors        jsonb       NOT NULL DEFAULT '[]',
    host          text        NOT NULL DEFAULT ''
);
CREATE INDEX consolidation_runs_filters ON consolidation_runs (tenant_filter, user_filter, id DESC);

-- consolidation_progress marks an owner done within a chain of runs. It is written in
-- the same transaction as the owner's forgetting, so a restarted run neither skips
-- nor repeats an owner's work.
CREATE TABLE consolidation_progress (
    root_id bigint      NOT NULL REFERENCES consolidation_runs (id) ON DELETE CASCADE,
    tenant  text        NOT NULL,
    user_id text        NOT NULL,
    run_id  bigint      NOT NULL,
    done_at timestamptz NOT NULL DEFAULT now(),
    counts  jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (root_id, tenant, user_id)
);
CREATE INDEX consolidation_progress_run ON consolidation_progress (run_id);
CREATE INDEX consolidation_progress_owner ON consolidation_progress (tenant, user_id);

-- Distillation reads an owner's active, not yet consolidated episodes; consolidated
-- ones leave this partial index, so it stays the size of the backlog.
CREATE INDEX memories_unconsolidated ON memories (tenant, user_id, valid_from)
    WHERE type = 'episodic' AND status = 'active' AND consolidated_at IS NULL;
