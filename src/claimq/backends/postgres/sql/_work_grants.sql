-- Work: claim, start, heartbeat, settle, fail, release, reap (rows of jobs updated and moved to
-- archive or dead letters); the limited queues' rows are locked (FOR UPDATE needs UPDATE).
GRANT UPDATE, DELETE ON {schema}.jobs TO {role};
GRANT UPDATE ON {schema}.queues TO {role};
-- Circuit breakers: a failure counts towards opening one, a claim lets its probe through.
GRANT UPDATE ON {schema}.breakers TO {role};
-- Per-key rate limits: a claim spends a key's bucket, a Throttled pauses a key.
GRANT INSERT, UPDATE ON {schema}.rate_keys TO {role};
GRANT INSERT ON {schema}.archive, {schema}.dead TO {role};
-- ... whose insert records on the job's idempotency key when it finished (key_finished()).
GRANT SELECT (key, job_id), UPDATE (finished_at) ON {schema}.idempotency_keys TO {role};
-- The scheduler fires due schedules (and writes code-declared ones at start); handlers report
-- progress; the pruner's lease row (pruning itself needs DELETE on archive and dead: admin).
GRANT INSERT, UPDATE ON {schema}.schedules TO {role};
GRANT INSERT, UPDATE, DELETE ON {schema}.progress TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.leases TO {role};
-- The worker registry: a worker writes, refreshes and deletes its own row, and its reaper marks
-- silent ones dead and prunes them.
GRANT INSERT, UPDATE, DELETE ON {schema}.workers TO {role};
-- Workflows: a job's end resolves its edges and moves its dependents held -> jobs, archive or
-- dead letters (the completing statement, wf_release()); spawn makes the spawner's dependents
-- wait for its new jobs.
GRANT UPDATE (resolved) ON {schema}.deps TO {role};
GRANT UPDATE, DELETE ON {schema}.held TO {role};
