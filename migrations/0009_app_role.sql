-- Two roles (issue 12): the role that runs these migrations owns every table (the
-- owner: `engram` on the project-local cluster and in deploy/), and serve and the
-- workers connect as engram_app, which owns nothing, is neither superuser nor
-- BYPASSRLS and holds only the grants below. Forced row-level security binds both,
-- but only an owner can lift it (ALTER TABLE ... NO FORCE ROW LEVEL SECURITY), so
-- the application can no longer lift its own guard; memory.CheckRole refuses to run
-- as anything else.
--
-- Cross-tenant operator work (the nightly run's owner listing and run records, the
-- metrics' tenant listing) no longer rests on a session setting any transaction
-- could set (0002's engram.operator): it goes through the SECURITY DEFINER functions
-- below, owned by the owner, executable by engram_app only, each returning only what
-- its one caller needs. The owner sees every row of owners, consolidation_runs and
-- consolidation_progress through a policy for the owner alone; engram_app sees its
-- transaction's tenant only.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'engram_app') THEN
        RAISE EXCEPTION 'role engram_app does not exist: create it first (LOGIN NOSUPERUSER NOBYPASSRLS; '
            'scripts/services.sh and deploy/postgres-init.sql do), then run the migrations again as the owner role';
    END IF;
    IF pg_has_role('engram_app', current_user, 'MEMBER') THEN
        RAISE EXCEPTION 'migrations run as %, which engram_app is (or is a member of): run them as the owner role, '
            'a role engram_app is not a member of', current_user;
    END IF;
END
$$;

-- The registry without the session switch: a tenant sees its own rows, the owner all.
DROP POLICY tenant_isolation ON owners;
CREATE POLICY tenant_isolation ON owners USING (tenant = engram_tenant()) WITH CHECK (tenant = engram_tenant());
CREATE POLICY operator ON owners TO CURRENT_USER USING (true) WITH CHECK (true);

-- Progress rows belong to a tenant's owner: written and read in that tenant's
-- transactions; read across tenants by the operator functions only.
ALTER TABLE consolidation_progress ENABLE ROW LEVEL SECURITY;
ALTER TABLE consolidation_progress FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consolidation_progress USING (tenant = engram_tenant())
    WITH CHECK (tenant = engram_tenant());
CREATE POLICY operator ON consolidation_progress TO CURRENT_USER USING (true) WITH CHECK (true);

-- Run records: a tenant's transaction reads the runs that covered it (unfiltered, or
-- filtered to it) for the console, and only the columns granted below (not errors,
-- which name other tenants' owners). Writes go through the operator functions.
ALTER TABLE consolidation_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE consolidation_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON consolidation_runs FOR SELECT USING (tenant_filter IN ('', engram_tenant()));
CREATE POLICY operator ON consolidation_runs TO CURRENT_USER USING (true) WITH CHECK (true);

-- Grants. Every table (also those later migrations create: default privileges) is
-- read and written by engram_app under its row-level security; the exceptions follow.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO engram_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO engram_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO engram_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO engram_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO engram_app;
-- The audit log is append-only for the application.
REVOKE UPDATE, DELETE ON audit_log FROM engram_app;
-- The schema's version is read (serve checks it), never written, by the application.
REVOKE INSERT, UPDATE, DELETE ON engram_migrations FROM engram_app;
REVOKE ALL ON consolidation_runs FROM engram_app;
-- A user erasure rewrites the tables it deleted from (VACUUM FULL), which takes the
-- owner or, from PostgreSQL 17, the MAINTAIN privilege (vacuum, analyze, reindex,
-- lock; not ALTER). Older servers: the owner's pool does it (memory.CompactErased).
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 170000 THEN
        EXECUTE 'GRANT MAINTAIN ON ALL TABLES IN SCHEMA public TO engram_app';
        EXECUTE 'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT MAINTAIN ON TABLES TO engram_app';
    END IF;
END
$$;
GRANT SELECT (id, resumes, root_id, started_at, finished_at, status, tenant_filter, user_filter, dry_run)
    ON consolidation_runs TO engram_app;

-- The operator functions. SECURITY DEFINER: they run as the owner, which the operator
-- policies above let read across tenants; search_path is pinned so a caller's objects
-- cannot stand in for the tables they name.

-- The nightly run's owner listing: the (tenant, user_id) pairs the filters select
-- ('' is no filter), and whether chain p_root already finished each.
CREATE FUNCTION engram_op_owners(p_tenant text, p_user text, p_root bigint)
RETURNS TABLE (tenant text, user_id text, done boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
    SELECT o.tenant, o.user_id, EXISTS (SELECT 1 FROM consolidation_progress p
            WHERE p.root_id = p_root AND p.tenant = o.tenant AND p.user_id = o.user_id)
    FROM owners o WHERE (p_tenant = '' OR o.tenant = p_tenant) AND (p_user = '' OR o.user_id = p_user)
    ORDER BY o.tenant, o.user_id
$$;

-- The metrics' tenant listing: tenant names only.
CREATE FUNCTION engram_op_tenants() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$ SELECT DISTINCT tenant FROM owners ORDER BY 1 $$;

-- Starting a run (under the run lock the caller holds): runs still "running" belong to
-- a process that died and are closed as interrupted with what their progress says;
-- the run resumes the latest run of the same filters when that one was interrupted or
-- failed and its chain is younger than p_resume_within_secs (<= 0: never).
CREATE FUNCTION engram_op_start_run(p_tenant text, p_user text, p_dry boolean, p_resume_within_secs float8, p_host text)
RETURNS TABLE (out_id bigint, out_resumes bigint, out_root bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    prev record;
    v_id bigint;
    v_resumes bigint;
    v_root bigint;
BEGIN
    UPDATE consolidation_runs r SET status = 'interrupted', finished_at = now(),
        owners_done = (SELECT count(*) FROM consolidation_progress p WHERE p.run_id = r.id),
        counts = coalesce((SELECT jsonb_object_agg(k, s) FROM (
            SELECT e.key AS k, sum(e.value::bigint) AS s
            FROM consolidation_progress p, jsonb_each_text(p.counts) e
            WHERE p.run_id = r.id GROUP BY e.key) x), '{}')
    WHERE r.status = 'running';
    IF NOT p_dry AND p_resume_within_secs > 0 THEN
        SELECT r.id, root.id AS root, r.status, extract(epoch FROM now() - root.started_at)::float8 AS age
        INTO prev
        FROM consolidation_runs r JOIN consolidation_runs root ON root.id = coalesce(r.root_id, r.id)
        WHERE NOT r.dry_run AND r.tenant_filter = p_tenant AND r.user_filter = p_user
        ORDER BY r.id DESC LIMIT 1;
        IF FOUND AND prev.status IN ('interrupted', 'failed') AND prev.age < p_resume_within_secs THEN
            v_resumes := prev.id;
            v_root := prev.root;
        END IF;
    END IF;
    INSERT INTO consolidation_runs (resumes, root_id, status, tenant_filter, user_filter, dry_run, host)
    VALUES (v_resumes, v_root, 'running', p_tenant, p_user, p_dry, p_host) RETURNING id INTO v_id;
    IF v_root IS NULL THEN
        v_root := v_id;
        UPDATE consolidation_runs SET root_id = v_id WHERE id = v_id;
    END IF;
    RETURN QUERY SELECT v_id, coalesce(v_resumes, 0), v_root;
END
$$;

-- Recording the end of run p_id.
CREATE FUNCTION engram_op_finish_run(p_id bigint, p_status text, p_owners int, p_done int, p_skipped int,
    p_counts jsonb, p_llm_calls int, p_errors jsonb) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
    UPDATE consolidation_runs SET status = p_status, finished_at = now(), owners_total = p_owners,
        owners_done = p_done, owners_skipped = p_skipped, counts = p_counts, llm_calls = p_llm_calls, errors = p_errors
    WHERE id = p_id
$$;

-- The operator's run listing (engram consolidate runs): the latest p_limit runs.
CREATE FUNCTION engram_op_runs(p_limit int) RETURNS SETOF consolidation_runs
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$ SELECT * FROM consolidation_runs ORDER BY id DESC LIMIT p_limit $$;

-- Whether an unfiltered, real run started at or after p_since and is running or
-- completed (another replica served a schedule tick).
CREATE FUNCTION engram_op_run_served_since(p_since timestamptz) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM consolidation_runs WHERE NOT dry_run AND tenant_filter = '' AND user_filter = ''
        AND status IN ('running', 'completed') AND started_at >= p_since)
$$;

-- User erasure's part of the run records: the user's filter and error entries go. The
-- tenant is the caller's transaction's (engram_tenant()), never an argument, so a
-- tenant can scrub only its own users.
CREATE FUNCTION engram_forget_user_runs(p_user text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_tenant text := engram_tenant();
BEGIN
    IF v_tenant IS NULL THEN
        RAISE EXCEPTION 'engram_forget_user_runs: no tenant set for this transaction';
    END IF;
    UPDATE consolidation_runs SET user_filter = '(deleted)' WHERE tenant_filter = v_tenant AND user_filter = p_user;
    UPDATE consolidation_runs SET errors = (SELECT coalesce(jsonb_agg(e), '[]')
            FROM jsonb_array_elements(errors) e WHERE NOT (e->>'tenant' = v_tenant AND e->>'user_id' = p_user))
    WHERE errors @> jsonb_build_array(jsonb_build_object('tenant', v_tenant, 'user_id', p_user));
END
$$;

DO $$
DECLARE f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['engram_op_owners(text, text, bigint)', 'engram_op_tenants()',
        'engram_op_start_run(text, text, boolean, float8, text)',
        'engram_op_finish_run(bigint, text, int, int, int, jsonb, int, jsonb)', 'engram_op_runs(int)',
        'engram_op_run_served_since(timestamptz)', 'engram_forget_user_runs(text)']
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO engram_app', f);
    END LOOP;
END
$$;
