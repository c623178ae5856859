-- The reaper reads in-flight rows through jobs_inflight (a bounded set: what workers hold), so
-- a separate index on lease_until only cost an index entry per claim and made every heartbeat a
-- non-HOT update.
DROP INDEX IF EXISTS {schema}.jobs_lease;
