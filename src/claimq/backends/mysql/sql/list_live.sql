-- Live jobs, held ones included (status 'held'), by id.
SELECT {live_columns} FROM claimq_jobs
WHERE (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
  AND (%(status)s IS NULL OR status = %(status)s)
UNION ALL
SELECT id, queue, task, payload, tags, idempotency_key, priority, 'held', attempts,
       max_attempts, worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at,
       started_at, updated_at, errors, cancel_requested, timeout_seconds, retry, trace_context,
       concurrency_key, concurrency_limit, sequence_key, sequence_wait, rate_key, workflow_id
FROM claimq_held
WHERE (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
  AND (%(status)s IS NULL OR %(status)s = 'held')
ORDER BY id
LIMIT %(limit)s OFFSET %(offset)s
