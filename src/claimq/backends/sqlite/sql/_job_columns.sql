-- Every column of claimq_jobs, in order (claimq_held has them all, then waiting and run_if):
-- {job_columns} in a query that moves a job between the two.
id, queue, task, payload, tags, idempotency_key, priority, status, attempts, max_attempts,
worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at, started_at, updated_at,
errors, cancel_requested, timeout_seconds, retry, trace_context, concurrency_key,
concurrency_limit, sequence_key, sequence_wait, rate_key, workflow_id
