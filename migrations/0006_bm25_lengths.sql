-- Okapi BM25 keyword ranking (issue 18) needs each document's length and, per owner,
-- the number of documents and their average length. Document frequencies come from
-- the matching rows themselves (every row that holds a query term matches the
-- OR-query), so only the length is stored.
--
-- The length is the number of distinct lexemes of the row's tsvector, length(tsv):
-- a built-in, where counting every position would take a set-returning function per
-- written row (twice the write cost, measured); for turns and memories, short texts,
-- the two rarely differ. Stopwords are not counted, as in BM25 over a stopped index.
-- A generated column cannot read another generated column, so it is computed from
-- search_text with the configuration of tsv ('english': PostgreSQL's Snowball
-- English stemmer and stopword list).
ALTER TABLE turns ADD COLUMN tsv_len integer
    GENERATED ALWAYS AS (length(to_tsvector('english', search_text))) STORED;
ALTER TABLE memories ADD COLUMN tsv_len integer
    GENERATED ALWAYS AS (length(to_tsvector('english', search_text))) STORED;

-- A user's turn count and average length are read with every turn search: the
-- per-user time index carries the length, so they come from an index-only range
-- scan of that user instead of the heap. Same key as before, so the queries that
-- read turns by user and time keep their plans.
CREATE INDEX turns_user_time_len ON turns (tenant, user_id, occurred_at) INCLUDE (tsv_len);
DROP INDEX turns_user_time;
ALTER INDEX turns_user_time_len RENAME TO turns_user_time;
