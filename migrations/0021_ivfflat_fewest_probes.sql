-- IVFFlat owner indexes are read through the fewest lists whose measured recall still
-- reaches the target (memory/index_recall.go, tuneIndexReads; issue 17): the pass used
-- to keep the default (one list in 50, at least 40) whenever it reached the target.
-- Clearing their measure makes the next maintenance pass measure each once more and
-- lower its probes where the sample allows; searches keep reading them meanwhile.
UPDATE hnsw_owner_indexes SET recall = NULL WHERE method = 'ivfflat';
