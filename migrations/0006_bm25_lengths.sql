-- Okapi BM25 keyword ranking (issue 18) needs each document's length and, per owner,
-- the number of documents and their average length. Document frequencies come from
-- the matching rows themselves (every row that holds a query term matches the
-- OR-query), so only the length is stored.
--
-- engram_tsv_tokens counts the tokens a tsvector was made of (the positions of all
-- its lexemes; a lexeme without positions counts once): the document length BM25
-- normalises by. Stopwords are not counted, which is what BM25 implementations over
-- a stopped index do.
CREATE FUNCTION engram_tsv_tokens(v tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer FROM unnest(v) u);

-- A generated column cannot read another generated column, so the length is computed
-- from search_text with the same configuration as tsv ('english': PostgreSQL's
-- Snowball English stemmer and stopword list).
ALTER TABLE turns ADD COLUMN tsv_len integer
    GENERATED ALWAYS AS (engram_tsv_tokens(to_tsvector('english', search_text))) STORED;
ALTER TABLE memories ADD COLUMN tsv_len integer
    GENERATED ALWAYS AS (engram_tsv_tokens(to_tsvector('english', search_text))) STORED;

-- A user's turn count and average length are read with every turn search: the
-- per-user time index carries the length, so they come from an index-only range
-- scan of that user instead of the heap. Same key as before, so the queries that
-- read turns by user and time keep their plans.
CREATE INDEX turns_user_time_len ON turns (tenant, user_id, occurred_at) INCLUDE (tsv_len);
DROP INDEX turns_user_time;
ALTER INDEX turns_user_time_len RENAME TO turns_user_time;
