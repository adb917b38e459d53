-- Listing (GET /v1/memories) pages a user's memories in (updated_at, id) order with a
-- keyset cursor: this index serves each page as one range scan.
CREATE INDEX memories_list_user ON memories (tenant, user_id, updated_at, id);
-- Metadata filters (search and listing) are jsonb containment (metadata @> '{"k":"v"}'),
-- which a jsonb_path_ops GIN index answers.
CREATE INDEX memories_metadata ON memories USING gin (metadata jsonb_path_ops);
