-- A live job as read outside the claim (get_job, list_jobs, find_jobs, workflow_jobs); the
-- held, archive and dead forms line up with it by position (UNION ALL names by the first).
id, queue, task, payload, tags, idempotency_key, priority, status, attempts, max_attempts,
worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at, started_at, updated_at,
errors, cancel_requested, timeout_seconds, retry, workflow_id
