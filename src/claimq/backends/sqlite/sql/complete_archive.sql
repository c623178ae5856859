-- :items is a JSON array of [id, token, result-as-JSON-text-or-null]; only the owner's
-- processing rows are archived (the caller then deletes exactly the ids returned; those with
-- a workflow_id go through the release rule).
INSERT INTO claimq_archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                            max_attempts, worker_id, run_at, created_at, started_at, finished_at,
                            duration, result, errors, timeout_seconds, retry, workflow_id)
SELECT j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority, j.attempts,
       j.max_attempts, j.worker_id, j.run_at, j.created_at, j.started_at, :now,
       :now - j.started_at, d.value ->> 2, j.errors, j.timeout_seconds, j.retry, j.workflow_id
FROM json_each(:items) AS d
JOIN claimq_jobs AS j ON j.id = d.value ->> 0 AND j.claim_token = d.value ->> 1
WHERE j.status = 'processing'
RETURNING id, workflow_id
