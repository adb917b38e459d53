-- The memories' keyword side reads only the owner's rows that hold a query term
-- (issue 17, item 4): a GIN index over (tenant, user_id, tsv), via btree_gin, finds
-- them in one index probe, where ranking every row of the owner made a search cost
-- grow with the owner's size. (0005 dropped the (tenant, tsv) index that no query
-- used, because the owner's rows were materialised before ranking.) tsvector @@
-- tsquery is LEAKPROOF, so the index is usable under the row-level security engram
-- forces on every table. Agent-scoped searches keep the memories_agent B-tree.
CREATE INDEX memories_owner_tsv ON memories USING gin (tenant, user_id, tsv);
