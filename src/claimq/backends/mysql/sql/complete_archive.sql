-- Archives the owner's processing rows the caller locked (lock_owned), each with its result.
INSERT INTO claimq_archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                            max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                            duration, result, errors, timeout_seconds, retry, workflow_id)
SELECT j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.attempts,
       j.max_attempts, j.worker_id, j.run_at, j.created_at, j.started_at, {now},
       TIMESTAMPDIFF(MICROSECOND, j.started_at, {now}) / 1e6, d.result, j.errors,
       j.timeout_seconds, j.retry, j.workflow_id
FROM claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', result LONGTEXT PATH '$[1]')) AS d ON d.item_id = j.id
WHERE j.id IN %(ids)s
