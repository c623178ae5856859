-- The columns a dead letter copies from its job's row (each burial adds finished_at, reason and
-- errors of its own): {dead_columns} in a query.
j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.attempts,
j.max_attempts, j.worker_id, j.run_at, j.created_at, j.started_at, j.timeout_seconds, j.retry
