INSERT INTO claimq_jobs (id, queue, task, payload, tags, idempotency_key, priority, status,
                         attempts, max_attempts, run_at, created_at, updated_at, errors,
                         timeout_seconds, retry)
SELECT id, queue, task, coalesce(:payload, payload), tags, idempotency_key,
       coalesce(:priority, priority), 'pending', 0, max_attempts, :now, created_at, :now,
       errors, timeout_seconds, retry
FROM claimq_dead
WHERE id = :id
RETURNING id, queue
