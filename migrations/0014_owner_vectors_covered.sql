-- An owner's vectors in one index range, read without the table (issue 17, items 1
-- and 4). The exact per-owner scan (a search's vector side, the resolver's nearest
-- memories) read each of an owner's vectors from the heap: a thousand vectors of a
-- thousand memories lie on a thousand pages, one buffer visit each. This index holds
-- them in its leaf pages, in the owner's key order, so the scan is an index-only range
-- of about a quarter as many pages (measured on 1,000,000 memories of 384 dimensions:
-- 1,003 buffers and 2.4–3.3 ms per owner of 1,000 through memory_embeddings_owner and
-- the heap, 261 buffers and 1.6–2.0 ms through this index).
--
-- Partial: a B-tree entry holds at most about 2.7 kB, so only vectors of up to 512
-- dimensions (2 kB) fit; larger models keep the heap path. The scans name the same
-- condition (memory.coveredDims) so the planner may use the index with generic plans.
CREATE INDEX memory_embeddings_owner_covered ON memory_embeddings (tenant, model, user_id)
    INCLUDE (memory_id, embedding) WHERE dims <= 512;
