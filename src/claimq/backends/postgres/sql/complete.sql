-- Completion moves the job to the archive in one statement, guarded by its token.
WITH done AS (
    DELETE FROM {schema}.jobs j
    USING unnest(%(ids)s::bigint[], %(tokens)s::uuid[], %(results)s::jsonb[]) AS o(id, token, result)
    WHERE j.id = o.id AND j.claim_token = o.token AND j.status = 'processing'
    RETURNING j.*, o.result
)
INSERT INTO {schema}.archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                              max_attempts, worker_id, run_at, created_at, started_at,
                              finished_at, duration, result, errors, timeout_seconds, retry)
SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
       worker_id, run_at, created_at, started_at, now(),
       extract(epoch FROM now() - started_at), result, errors, timeout_seconds, retry
FROM done
RETURNING id
