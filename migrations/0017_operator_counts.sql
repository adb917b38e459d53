-- Counts across tenants (issue 17). The memories gauge, the vector coverage that
-- /readyz reports and the background re-embedding's check counted each tenant in a
-- transaction of its own: with 86,000 tenants that was 350,000 round trips and seconds
-- of both cores a minute in each serve and worker process, and a turn waited behind
-- it (turn -> retrievable p95 above 100 ms).
--
-- The functions below return counts, or a memory's tenant, status, type and models,
-- never content. They run as the owner (SECURITY DEFINER, like 0009's operator
-- functions) and turn engram.op_aggregate on (a function's SET clause may not name a
-- custom setting unless a superuser made it), and the policies below let the owner
-- read the rows while it is on; index maintenance, which connects as the owner, turns
-- it on in a read-only transaction of its own. The application role is not the owner
-- and not a member of it, so the setting opens nothing to it; the owner could lift
-- row-level security anyway.

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memories', 'memory_embeddings', 'turns', 'turn_embeddings']
    LOOP
        EXECUTE format('CREATE POLICY operator_counts ON %I FOR SELECT TO CURRENT_USER '
            'USING (current_setting(''engram.op_aggregate'', true) = ''on'')', t);
    END LOOP;
END
$$;

-- The census of memories: a cursor over every memory's tenant, status, type and the
-- models it has a vector in (NULL: none), never its content. The gauges and the vector
-- coverage all derive from it, so a process counts once for them all. The caller
-- reads it in its own read-only transaction a batch at a time and pauses between
-- batches (memory.MemoryCensus), so that a count never holds a core for long; being a
-- sequential scan, it reads the table through a small ring of buffers and does not
-- push the searches' pages out of shared_buffers, as a scan by block ranges or by
-- tenant would. engram.op_aggregate stays on for the rest of the caller's
-- transaction: the cursor's rows are read after this returns, and the policy is
-- checked as they are.
CREATE FUNCTION engram_op_memory_census() RETURNS refcursor
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE c refcursor := 'engram_memory_census';
BEGIN
    PERFORM set_config('engram.op_aggregate', 'on', true);
    OPEN c NO SCROLL FOR SELECT m.tenant, m.status, m.type,
            (SELECT array_agg(e.model) FROM memory_embeddings e
             WHERE e.tenant = m.tenant AND e.memory_id = m.id)
        FROM memories m;
    RETURN c;
END
$$;

-- Vector coverage of turns (memory.Store.TurnCoverage for every tenant), counted only
-- where turns are embedded (ENGRAM_EMBED_TURNS): a row with model NULL holds the
-- tenant's turns with content, one row per model those with a vector in it. One core,
-- not three: a background count should not take the machine from the requests.
CREATE FUNCTION engram_op_turn_coverage()
RETURNS TABLE (tenant text, model text, n bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    PERFORM set_config('engram.op_aggregate', 'on', true);
    RETURN QUERY SELECT t.tenant, NULL::text, count(*) FROM turns t
        WHERE t.content IS NOT NULL AND t.content <> '' GROUP BY 1
        UNION ALL
        SELECT e.tenant, e.model, count(*) FROM turn_embeddings e
        JOIN turns t ON t.tenant = e.tenant AND t.turn_id = e.turn_id
        WHERE t.content IS NOT NULL AND t.content <> '' GROUP BY 1, 2;
    PERFORM set_config('engram.op_aggregate', '', true);
END
$$;

DO $$
DECLARE f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['engram_op_memory_census()', 'engram_op_turn_coverage()']
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO engram_app', f);
    END LOOP;
END
$$;
