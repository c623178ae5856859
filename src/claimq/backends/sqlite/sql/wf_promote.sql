-- Released: held -> jobs as pending, due no earlier than now (the caller then deletes them
-- from held).
INSERT INTO claimq_jobs ({job_columns})
SELECT id, queue, task, payload, tags, idempotency_key, priority, 'pending', attempts,
       max_attempts, worker_id, claim_token, lease_until, heartbeat_at, max(run_at, :now),
       created_at, started_at, :now, errors, cancel_requested, timeout_seconds, retry,
       trace_context, concurrency_key, concurrency_limit, sequence_key, sequence_wait, rate_key,
       workflow_id
FROM claimq_held
WHERE id IN (SELECT value FROM json_each(:ids))
ORDER BY id
