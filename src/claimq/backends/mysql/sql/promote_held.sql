-- Released held jobs into claimq_jobs as pending, keeping their id and their own later run_at
-- (the jobs table's trigger makes a missing queue row). delete_held.sql deletes them from held.
INSERT INTO claimq_jobs ({live_columns})
SELECT id, queue, task, payload, tags, idempotency_key, priority, 'pending', attempts,
       max_attempts, NULL, NULL, NULL, NULL, GREATEST(run_at, {now}), created_at, NULL, {now},
       errors, FALSE, timeout_seconds, retry, trace_context, concurrency_key, concurrency_limit,
       sequence_key, sequence_wait, rate_key, workflow_id
FROM claimq_held
WHERE id IN %(ids)s
