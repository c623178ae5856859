-- A dead workflow job back to held (resurrect; the caller deletes it from dead and sets its
-- waiting): a fresh start as resurrect.sql gives a plain one.
INSERT INTO claimq_held ({job_columns}, waiting, run_if)
SELECT id, queue, task, coalesce(:payload, payload), tags, idempotency_key,
       coalesce(:priority, priority), 'pending', 0, max_attempts, NULL, NULL, NULL, NULL, :now,
       created_at, NULL, :now, errors, 0, timeout_seconds, retry, NULL, NULL, NULL, NULL, NULL,
       NULL, workflow_id, 0, run_if
FROM claimq_dead
WHERE id = :id
RETURNING id
