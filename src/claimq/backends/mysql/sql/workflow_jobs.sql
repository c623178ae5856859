-- Every job of a workflow wherever it is, by id, in one statement (one snapshot). The
-- branches line up by position, named by the first; columns a table lacks are NULL.
SELECT j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.status,
       j.attempts, j.max_attempts, j.worker_id, j.claim_token, j.lease_until, j.heartbeat_at,
       j.run_at, j.created_at, j.started_at, j.updated_at, j.errors, j.cancel_requested,
       j.timeout_seconds, j.retry, NULL AS finished_at, NULL AS result, NULL AS reason,
       j.workflow_id
FROM claimq_jobs j WHERE j.workflow_id = %(workflow_id)s
UNION ALL
SELECT h.id, h.queue, h.task, h.payload, h.tags, h.idempotency_key, h.priority, 'held',
       h.attempts, h.max_attempts, h.worker_id, h.claim_token, h.lease_until, h.heartbeat_at,
       h.run_at, h.created_at, h.started_at, h.updated_at, h.errors, h.cancel_requested,
       h.timeout_seconds, h.retry, NULL, NULL, NULL, h.workflow_id
FROM claimq_held h WHERE h.workflow_id = %(workflow_id)s
UNION ALL
SELECT a.id, a.queue, a.task, a.payload, a.tags, a.idempotency_key, a.priority, 'succeeded',
       a.attempts, a.max_attempts, a.worker_id, NULL, NULL, NULL, a.run_at, a.created_at,
       a.started_at, NULL, a.errors, 0, a.timeout_seconds, a.retry, a.finished_at, a.result,
       NULL, a.workflow_id
FROM claimq_archive a WHERE a.workflow_id = %(workflow_id)s
UNION ALL
SELECT d.id, d.queue, d.task, d.payload, d.tags, d.idempotency_key, d.priority, 'dead',
       d.attempts, d.max_attempts, d.worker_id, NULL, NULL, NULL, d.run_at, d.created_at,
       d.started_at, NULL, d.errors, 0, d.timeout_seconds, d.retry, d.finished_at, NULL,
       d.reason, d.workflow_id
FROM claimq_dead d WHERE d.workflow_id = %(workflow_id)s
ORDER BY id
