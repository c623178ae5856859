-- The live jobs as list_jobs / find_jobs read them: the jobs table and the held workflow jobs
-- (status 'held'), with the same columns.
(SELECT j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.status,
        j.attempts, j.max_attempts, j.worker_id, j.claim_token, j.lease_until, j.heartbeat_at,
        j.run_at, j.created_at, j.started_at, j.updated_at, j.errors, j.cancel_requested,
        j.timeout_seconds, j.retry, j.workflow_id
 FROM {schema}.jobs j
 UNION ALL
 SELECT h.id, h.queue, h.task, h.payload, h.tags, h.idempotency_key, h.priority, 'held',
        h.attempts, h.max_attempts, NULL, NULL, NULL, NULL, h.run_at, h.created_at, NULL,
        h.updated_at, h.errors, h.cancel_requested, h.timeout_seconds, h.retry, h.workflow_id
 FROM {schema}.held h)
