INSERT INTO claimq_dead (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                         max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                         reason, errors, timeout_seconds, retry)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, started_at, :now, :reason,
       json_insert(claimq_errors(errors), '$[#]', json(:error)), timeout_seconds, retry
FROM claimq_jobs
WHERE id = :id AND status IN ('fetched', 'processing') AND lease_until < :now
