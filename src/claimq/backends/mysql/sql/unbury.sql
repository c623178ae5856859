-- Resurrect: a dead workflow job (locked by lock_dead.sql) back into held with fresh attempts,
-- waiting 0 until the caller derives it from its edges; delete_dead.sql then deletes it.
INSERT INTO claimq_held (id, queue, task, payload, tags, idempotency_key, priority, status,
                         attempts, max_attempts, run_at, created_at, updated_at, errors,
                         timeout_seconds, retry, workflow_id, waiting, run_if)
SELECT id, queue, task, coalesce(%(payload)s, payload), tags, idempotency_key,
       coalesce(%(priority)s, priority), 'pending', 0, max_attempts, {now}, created_at, {now},
       errors, timeout_seconds, retry, workflow_id, 0, run_if
FROM claimq_dead
WHERE id = %(id)s
