-- A run_if='failed' job none of whose dependencies failed: archived unrun, result NULL.
INSERT INTO claimq_archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                            max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                            duration, result, errors, timeout_seconds, retry, workflow_id)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, NULL, :now, NULL, NULL, errors, timeout_seconds, retry,
       workflow_id
FROM claimq_held
WHERE id IN (SELECT value FROM json_each(:ids))
