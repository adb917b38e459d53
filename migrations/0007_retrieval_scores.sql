-- Retrieval records keep the score each returned memory and turn had, aligned with
-- memory_ids and turn_ids (NULL where an item was not ranked by score: a context's
-- profile memories and session turns), so "why did the agent see this" shows the
-- ranking as it was, not only the order.
ALTER TABLE retrievals
    ADD COLUMN memory_scores float8[] NOT NULL DEFAULT '{}',
    ADD COLUMN turn_scores   float8[] NOT NULL DEFAULT '{}';
