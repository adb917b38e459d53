-- The measured recall of each owner index (issue 17). Two HNSW builds of the same
-- owner with the same parameters found 0.944 and 0.982 of the exact top 10 of
-- `engram bench large`'s global scope of 100,000, so the maintenance pass measures an
-- index on sample queries before searches rely on it (memory/index_recall.go),
-- rebuilds or reads more of one that falls short, and keeps the measure here. NULL:
-- not measured yet (indexes built before this migration; the next pass measures them).
ALTER TABLE hnsw_owner_indexes
    ADD COLUMN recall real CHECK (recall BETWEEN 0 AND 1);
