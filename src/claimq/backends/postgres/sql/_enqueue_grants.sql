-- Enqueue: new ids, new jobs (COPY too), their queues' rows, idempotency keys (held keys are
-- locked and dropped; archive and dead are read to see whether a key is still held).
GRANT USAGE ON SEQUENCE {schema}.job_ids TO {role};
GRANT INSERT ON {schema}.jobs, {schema}.queues TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.idempotency_keys TO {role};
-- Flow control: a queue given a job with a concurrency key is marked keyed; debounce
-- (on_conflict="replace") gives the pending holder of a key the new payload and run_at.
GRANT UPDATE (keyed, updated_at) ON {schema}.queues TO {role};
GRANT UPDATE (payload, run_at, updated_at) ON {schema}.jobs TO {role};
-- Waiting for a result (app.result): the waiter's registration, read by the finished trigger.
GRANT SELECT, INSERT, DELETE ON {schema}.result_waiters TO {role};
-- `claimq enqueue` without --app checks a task name against the live workers' tasks.
GRANT SELECT ON {schema}.workers TO {role};
-- Workflows: a new workflow's row, its edges and its jobs that wait (held).
GRANT USAGE ON SEQUENCE {schema}.workflows_id_seq TO {role};
GRANT INSERT ON {schema}.workflows, {schema}.deps, {schema}.held TO {role};
