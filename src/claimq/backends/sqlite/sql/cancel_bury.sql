-- Cancel of a job no handler has started: straight to dead letters.
INSERT INTO claimq_dead (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                         max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                         reason, errors, timeout_seconds, retry)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, started_at, :now, 'cancelled', errors, timeout_seconds,
       retry
FROM claimq_jobs
WHERE id = :id AND status IN ('pending', 'fetched')
