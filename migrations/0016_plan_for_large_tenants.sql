-- Generic plans in a database of many tenants (issue 17). Searches, context calls and
-- the resolver run generic plans: planned once per connection for any tenant and user,
-- from each column's distinct count. With 86,000 tenants (most of them a few rows, as
-- a service's free tier or test tenants are) "tenant = $1" was estimated at 190 of
-- 1,370,000 turns, and the planner ANDed the user's full-text entries
-- (turns_user_tsv, whose key is user_id, tsv) with that tenant's whole range of the
-- primary key: for a tenant of 1,050,000 turns each search read a million index
-- entries, and a search over memories and turns took 61 ms at the median instead of
-- 8. The same estimate had kept 0014's dependency statistics off memories, where a
-- fair estimate of a user led the context's profile statement into the same AND.
--
-- A generic plan is now made for the largest tenant: n_distinct 1 makes the planner
-- estimate "tenant = $1" as the most common tenant's share of the table (it never
-- estimates an equality above that share), and a plan that is right for the largest
-- tenant is cheap for a small one, which has few rows whatever the plan. With a
-- parameter's value known (custom plans, every other statement), a tenant's estimate
-- still comes from its own frequency, and a tenant outside the most common values is
-- never estimated above the least common of them. The dependency user_id -> tenant
-- now holds on memories as on turns, so a user is estimated as the table's rows over
-- its users and the keyword side reads the user's full-text entries
-- (memories_user_tsv) instead of every row of the user.
ALTER TABLE memories ALTER COLUMN tenant SET (n_distinct = 1);
ALTER TABLE turns ALTER COLUMN tenant SET (n_distinct = 1);
CREATE STATISTICS memories_owner_dependency (dependencies) ON tenant, user_id FROM memories;
ANALYZE memories;
ANALYZE turns;
