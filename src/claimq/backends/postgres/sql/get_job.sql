SELECT j.*, NULL::timestamptz AS finished_at, NULL::jsonb AS result, NULL::text AS reason
FROM {schema}.jobs j WHERE j.id = %(id)s
UNION ALL
SELECT a.id, a.queue, a.task, a.payload, a.tags, a.idempotency_key, a.priority, 'succeeded',
       a.attempts, a.max_attempts, a.worker_id, NULL, NULL, NULL, a.run_at, a.created_at,
       a.started_at, a.finished_at, a.errors, false, a.timeout_seconds, a.retry, NULL, NULL,
       a.finished_at, a.result, NULL
FROM {schema}.archive a WHERE a.id = %(id)s
UNION ALL
SELECT d.id, d.queue, d.task, d.payload, d.tags, d.idempotency_key, d.priority, 'dead',
       d.attempts, d.max_attempts, d.worker_id, NULL, NULL, NULL, d.run_at, d.created_at,
       d.started_at, d.finished_at, d.errors, false, d.timeout_seconds, d.retry, NULL, NULL,
       d.finished_at, NULL, d.reason
FROM {schema}.dead d WHERE d.id = %(id)s
