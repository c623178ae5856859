-- Every column a live job has, in claimq_jobs' order; claimq_held has the same ones (then
-- waiting and run_if): {live_columns} in the statements that move a job held <-> jobs.
id, queue, task, payload, tags, idempotency_key, priority, status, attempts, max_attempts,
worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at, started_at, updated_at,
errors, cancel_requested, timeout_seconds, retry, trace_context, concurrency_key,
concurrency_limit, sequence_key, sequence_wait, rate_key, workflow_id
