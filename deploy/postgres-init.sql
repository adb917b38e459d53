-- engram connects as a role that row-level security binds: not a superuser and
-- without BYPASSRLS (engram refuses to start otherwise). CREATEDB lets the test
-- harness clone one database per test. Extensions are created by the superuser
-- in template1 and in engram, so migrations and cloned databases find them.
-- Full-text match (@@) is declared leakproof so that, under row-level security, the
-- per-user full-text indexes can be used (see scripts/services.sh).
CREATE ROLE engram LOGIN PASSWORD 'engram' CREATEDB NOSUPERUSER NOBYPASSRLS;
CREATE DATABASE engram OWNER engram;
\c template1
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
\c engram
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
