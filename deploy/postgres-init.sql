-- Two roles, neither superuser nor BYPASSRLS, so row-level security binds both:
-- engram owns the tables and runs the migrations (`engram migrate`, the compose
-- file's migrate service); engram_app is what serve and the workers connect as. It
-- owns nothing, so it cannot lift row-level security (engram refuses to start as a
-- role that could); migration 0008 grants it what it needs. CREATEDB lets the test
-- harness clone one database per test. Extensions are created by the superuser
-- in template1 and in engram, so migrations and cloned databases find them.
-- Full-text match (@@) is declared leakproof so that, under row-level security, the
-- per-user full-text indexes can be used (see scripts/services.sh). pg_prewarm lets
-- the index maintainer keep the owners' IVFFlat indexes in shared buffers.
CREATE ROLE engram LOGIN PASSWORD 'engram' CREATEDB NOSUPERUSER NOBYPASSRLS;
CREATE ROLE engram_app LOGIN PASSWORD 'engram_app' NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
CREATE DATABASE engram OWNER engram;
\c template1
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
\c engram
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
