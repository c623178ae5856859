-- A dead letter back to pending with fresh attempts (its queue row: the jobs table's trigger).
INSERT INTO claimq_jobs (id, queue, task, payload, tags, idempotency_key, priority, status,
                         attempts, max_attempts, run_at, created_at, updated_at, errors,
                         timeout_seconds, retry)
SELECT id, queue, task, coalesce(%(payload)s, payload), tags, idempotency_key,
       coalesce(%(priority)s, priority), 'pending', 0, max_attempts, {now}, created_at, {now},
       errors, timeout_seconds, retry
FROM claimq_dead
WHERE id = %(id)s
