-- The jobs table's columns in its order but the last, workflow_id (held has them all, then
-- waiting and run_if): a job moves between the two by these.
id, queue, task, payload, tags, idempotency_key, priority, status, attempts, max_attempts,
worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at, started_at, updated_at,
errors, cancel_requested, timeout_seconds, retry, trace_context, concurrency_key,
concurrency_limit, sequence_key, sequence_wait, rate_key
