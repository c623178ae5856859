-- Released run_if = 'failed' jobs none of whose dependencies failed: archived unrun (result
-- NULL, started_at NULL, finished now). delete_held.sql deletes them from held.
INSERT INTO claimq_archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                            max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                            duration, result, errors, timeout_seconds, retry, workflow_id)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts, NULL,
       run_at, created_at, NULL, {now}, NULL, NULL, errors, timeout_seconds, retry, workflow_id
FROM claimq_held
WHERE id IN %(ids)s
