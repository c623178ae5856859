-- Jobs this transaction just inserted, moved to held: items are [id, waiting, run_if]
-- (delete_ids.sql then deletes them from claimq_jobs).
INSERT INTO claimq_held ({live_columns}, waiting, run_if)
SELECT j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.status,
       j.attempts, j.max_attempts, j.worker_id, j.claim_token, j.lease_until, j.heartbeat_at,
       j.run_at, j.created_at, j.started_at, j.updated_at, j.errors, j.cancel_requested,
       j.timeout_seconds, j.retry, j.trace_context, j.concurrency_key, j.concurrency_limit,
       j.sequence_key, j.sequence_wait, j.rate_key, j.workflow_id, d.waiting, d.run_if
FROM claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', waiting INT PATH '$[1]',
    run_if VARCHAR(16) PATH '$[2]')) AS d ON d.item_id = j.id
WHERE j.id IN %(ids)s
