-- Dead row versions in the jobs table (the statistics' count): each claim and completion leaves
-- some, and their entries in the claim index are stepped over by every claim until a vacuum.
SELECT coalesce(sum(n_dead_tup), 0)::bigint AS dead
FROM pg_stat_user_tables
WHERE schemaname = %(schema)s AND relname = 'jobs'
