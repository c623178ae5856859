-- A held job (a workflow's, waiting for its dependencies) in _job_read's columns.
id, queue, task, payload, tags, idempotency_key, priority, 'held', attempts, max_attempts,
worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at, started_at, updated_at,
errors, cancel_requested, timeout_seconds, retry, workflow_id
