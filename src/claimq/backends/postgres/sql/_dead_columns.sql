-- The columns a dead letter copies from its job's row, for every statement that buries a job
-- (each adds finished_at, reason and errors of its own): {dead_columns} in a query.
id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts, worker_id,
run_at, created_at, started_at, timeout_seconds, retry, workflow_id
