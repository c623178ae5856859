-- The columns of a job that a claim reads before it takes the row (the rest are the claim's).
id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts, run_at,
created_at, errors, timeout_seconds, retry
