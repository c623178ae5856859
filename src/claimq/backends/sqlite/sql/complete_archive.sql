INSERT INTO claimq_archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                            max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                            duration, result, errors, timeout_seconds, retry)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, started_at, :now, :now - started_at, :result, errors,
       timeout_seconds, retry
FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status = 'processing'
