-- Dead letters for locked rows, each with its reason and its history (the caller's).
INSERT INTO claimq_dead (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                         max_attempts, worker_id, run_at, created_at, started_at, timeout_seconds,
                         retry, workflow_id, finished_at, reason, errors)
SELECT {dead_columns}, j.workflow_id, {now}, d.reason, d.history
FROM claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', reason VARCHAR(64) PATH '$[1]',
    history LONGTEXT PATH '$[2]')) AS d ON d.item_id = j.id
WHERE j.id IN %(ids)s
