-- Rebuilding memories from the turn log (engram rebuild): the "rebuild" change kind
-- (a memory the rebuild replaced keeps its history, closed by a version of this kind),
-- and the run and per-owner progress records that make a rebuild resumable. Both
-- tables hold ids and counts, never content, and are tenant tables under forced
-- row-level security like every other.

ALTER TABLE memory_versions DROP CONSTRAINT memory_versions_change_check;
ALTER TABLE memory_versions ADD CONSTRAINT memory_versions_change_check CHECK (change IN ('add', 'confirm',
    'update', 'supersede', 'pending', 'promote', 'correct', 'deprecate', 'rollback', 'expire', 'archive',
    'restore', 'decay', 'consolidate', 'rebuild'));
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check CHECK (action IN ('create', 'confirm', 'update',
    'supersede', 'pending', 'promote', 'correct', 'deprecate', 'rollback', 'expire', 'archive', 'restore', 'decay',
    'consolidate', 'delete', 'delete_user', 'export', 'import', 'turn_store', 'turn_purge', 'rebuild'));

-- rebuild_runs records every rebuild that changes something (dry runs write nothing).
-- A run that did not complete is resumed by the next rebuild with the same filters
-- and extractor: the owners it finished are in rebuild_progress.
CREATE TABLE rebuild_runs (
    tenant            text        NOT NULL DEFAULT engram_tenant(),
    id                uuid        NOT NULL,
    status            text        NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    user_filter       text        NOT NULL DEFAULT '',
    since             timestamptz,
    extractor         text        NOT NULL,
    started_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz,
    host              text        NOT NULL DEFAULT '',
    owners_total      integer     NOT NULL DEFAULT 0,
    owners_done       integer     NOT NULL DEFAULT 0,
    counts            jsonb       NOT NULL DEFAULT '{}',
    errors            jsonb       NOT NULL DEFAULT '[]',
    PRIMARY KEY (tenant, id)
);
CREATE INDEX rebuild_runs_latest ON rebuild_runs (tenant, started_at DESC);

-- rebuild_progress marks an owner done within a run. It is written in the owner's
-- transaction, with the replacement itself, so a resumed run neither skips nor
-- repeats an owner.
CREATE TABLE rebuild_progress (
    tenant   text        NOT NULL DEFAULT engram_tenant(),
    run_id   uuid        NOT NULL,
    user_id  text        NOT NULL,
    outcome  text        NOT NULL CHECK (outcome IN ('replaced', 'unchanged', 'empty')),
    done_at  timestamptz NOT NULL DEFAULT now(),
    counts   jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, run_id, user_id),
    FOREIGN KEY (tenant, run_id) REFERENCES rebuild_runs (tenant, id) ON DELETE CASCADE
);
CREATE INDEX rebuild_progress_user ON rebuild_progress (tenant, user_id);

ALTER TABLE rebuild_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE rebuild_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON rebuild_runs USING (tenant = engram_tenant()) WITH CHECK (tenant = engram_tenant());
ALTER TABLE rebuild_progress ENABLE ROW LEVEL SECURITY;
ALTER TABLE rebuild_progress FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON rebuild_progress USING (tenant = engram_tenant()) WITH CHECK (tenant = engram_tenant());
