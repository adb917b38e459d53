-- Counts across tenants (issue 17). The memories gauge, the vector coverage that
-- /readyz reports and the background re-embedding's check counted each tenant in a
-- transaction of its own: with 86,000 tenants that was 350,000 round trips and seconds
-- of both cores a minute in each serve and worker process, and a turn waited behind
-- it (turn -> retrievable p95 above 100 ms).
--
-- The functions below return counts only, grouped by tenant, never a row's content.
-- They run as the owner (SECURITY DEFINER, like 0009's operator functions) and turn
-- engram.op_aggregate on for their one query (a function's SET clause may not name a
-- custom setting unless a superuser made it), and the policies below let the owner
-- read the rows while it is on. The application role is not the owner and not a
-- member of it, so the setting opens nothing to it; the owner could lift row-level
-- security anyway. One core each, not three: a background count should not take the
-- machine from the requests beside it.

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

-- The census of memories, a range of the table's blocks at a time (the caller paces
-- the ranges so that a count never holds a core for long): each tenant's memories by
-- status and type (model NULL), and their vectors by status and model (type NULL). The
-- gauges and the vector coverage all derive from it, so a process counts once for
-- them all. A block range is read in physical order, as a sequential scan reads it; a
-- row updated while a census runs may move across the ranges and be counted twice or
-- not at all, which the next census corrects.
CREATE FUNCTION engram_op_memory_census(p_from bigint, p_to bigint)
RETURNS TABLE (tenant text, status text, type text, model text, n bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    PERFORM set_config('engram.op_aggregate', 'on', true);
    RETURN QUERY WITH c AS MATERIALIZED (SELECT m.tenant, m.id, m.status, m.type FROM memories m
            WHERE m.ctid >= format('(%s,0)', p_from)::tid AND m.ctid < format('(%s,0)', p_to)::tid)
        SELECT c.tenant, c.status, c.type, NULL::text, count(*) FROM c GROUP BY 1, 2, 3
        UNION ALL
        SELECT c.tenant, c.status, NULL::text, e.model, count(*) FROM c
        JOIN memory_embeddings e ON e.tenant = c.tenant AND e.memory_id = c.id GROUP BY 1, 2, 4;
    PERFORM set_config('engram.op_aggregate', '', true);
END
$$;

-- Vector coverage of turns (memory.Store.TurnCoverage for every tenant): a row with
-- model NULL holds the tenant's turns with content, one row per model those with a
-- vector in it.
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
    FOREACH f IN ARRAY ARRAY['engram_op_memory_census(bigint, bigint)', 'engram_op_turn_coverage()']
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO engram_app', f);
    END LOOP;
END
$$;
