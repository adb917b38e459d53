-- IVFFlat indexes for the largest owners (issue 17). An owner above the HNSW
-- threshold gets a partial HNSW index of its own (0012); from a second, larger size
-- on it gets a partial IVFFlat index instead: on the hashing embedder's vectors of a
-- 1,000,000-memory owner, HNSW at ef_search 400 reached recall@10 0.90 at 21 ms p95,
-- IVFFlat (2,000 lists of half-precision vectors, 40 probed) 0.97 at 10-12 ms (docs/perf-search.md,
-- session 26).
-- The registry keeps one row per owner and says which method its index uses and how
-- it is searched: ef_search for HNSW, lists (fixed at build) and probes for IVFFlat.
-- ef_search stays set on every row, so a binary from before this migration (a rolling
-- update, a rollback) reads an IVFFlat row as an HNSW one: its statement matches no
-- index (the IVFFlat index is over halfvec) and scans exactly, slow but right.
-- The table keeps its name: it is the registry of the owners' approximate indexes.
ALTER TABLE hnsw_owner_indexes
    ADD COLUMN method text NOT NULL DEFAULT 'hnsw' CHECK (method IN ('hnsw', 'ivfflat')),
    ADD COLUMN lists integer CHECK (lists BETWEEN 1 AND 32768),
    ADD COLUMN probes integer CHECK (probes BETWEEN 1 AND 32768),
    DROP CONSTRAINT hnsw_owner_indexes_index_name_check,
    ADD CONSTRAINT hnsw_owner_indexes_index_name_check CHECK (index_name ~ '^engram_(hnsw|ivf)_[0-9a-f]{16}$'),
    ADD CONSTRAINT hnsw_owner_indexes_method_params CHECK (CASE method
        WHEN 'hnsw' THEN lists IS NULL AND probes IS NULL
        ELSE lists IS NOT NULL AND probes IS NOT NULL AND probes <= lists END);
