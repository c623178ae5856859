-- A dead-lettered job in _job_read's columns.
id, queue, task, payload, tags, idempotency_key, priority, 'dead', attempts, max_attempts,
worker_id, NULL, NULL, NULL, run_at, created_at, started_at, NULL, errors, 0, timeout_seconds,
retry, workflow_id
