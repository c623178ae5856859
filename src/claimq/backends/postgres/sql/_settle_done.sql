-- The completions of a claim statement (settle.sql, claim_flow.sql): `done` deletes the
-- finished jobs still held with their tokens, `archived` stores them.
done AS (
    DELETE FROM {schema}.jobs j
    USING unnest(%(ids)s::bigint[], %(tokens)s::uuid[], %(results)s::jsonb[]) AS o(id, token, result)
    -- `id = ANY`: an index condition on the primary key, whatever the plan (a prepared, generic
    -- plan cannot know how many ids come, and may otherwise scan every job in flight).
    WHERE j.id = ANY(%(ids)s::bigint[])
      AND j.id = o.id AND j.claim_token = o.token AND j.status = 'processing'
      -- A claim with nothing to complete skips this part outright (a one-time filter): a plan
      -- that reads the in-flight index would otherwise scan every job every worker holds.
      AND cardinality(%(ids)s::bigint[]) > 0
    RETURNING j.*, o.result
),
archived AS (
    INSERT INTO {schema}.archive (id, queue, task, payload, tags, idempotency_key, priority, attempts,
                                  max_attempts, worker_id, run_at, created_at, started_at,
                                  finished_at, duration, result, errors, timeout_seconds, retry)
    SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
           worker_id, run_at, created_at, started_at, {now},
           extract(epoch FROM {now} - started_at), result, errors, timeout_seconds, retry
    FROM done
    RETURNING id
)
