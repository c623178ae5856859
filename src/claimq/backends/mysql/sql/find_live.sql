-- Live jobs, held ones included (status 'held'), newest first.
SELECT {live_columns} FROM claimq_jobs j
WHERE {find_where}
  AND (%(status)s IS NULL OR status = %(status)s)
  AND (%(state)s IS NULL OR {in_state})
UNION ALL
SELECT id, queue, task, payload, tags, idempotency_key, priority, 'held', attempts,
       max_attempts, worker_id, claim_token, lease_until, heartbeat_at, run_at, created_at,
       started_at, updated_at, errors, cancel_requested, timeout_seconds, retry, trace_context,
       concurrency_key, concurrency_limit, sequence_key, sequence_wait, rate_key, workflow_id
FROM claimq_held
WHERE {find_where}
  AND (%(status)s IS NULL OR %(status)s = 'held')
  AND (%(state)s IS NULL OR %(state)s = 'held')
ORDER BY id DESC
LIMIT %(limit)s
