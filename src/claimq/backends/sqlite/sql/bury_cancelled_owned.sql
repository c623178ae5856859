-- Release of a job whose cancel was requested: it goes to dead letters, not back to pending.
INSERT INTO claimq_dead (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                         max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                         reason, errors, timeout_seconds, retry)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, started_at, :now, 'cancelled', errors, timeout_seconds,
       retry
FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
  AND cancel_requested = 1
