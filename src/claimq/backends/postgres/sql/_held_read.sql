-- A held job (a workflow's, waiting for its dependencies) in _job_read's columns: never claimed,
-- so no worker, token, lease or start.
id, queue, task, payload, tags, idempotency_key, priority, 'held', attempts, max_attempts,
NULL, NULL, NULL, NULL, run_at, created_at, NULL, updated_at, errors, cancel_requested,
timeout_seconds, retry, workflow_id
