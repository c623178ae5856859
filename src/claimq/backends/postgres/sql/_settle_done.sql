-- The completions of a claim statement (settle.sql, claim_flow.sql, claim_keyed.sql): `done`
-- deletes the finished jobs still held with their tokens, `archived` stores them, and
-- `wf_released` releases their workflows' dependents in the same statement.
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
                                  finished_at, duration, result, errors, timeout_seconds, retry,
                                  workflow_id)
    SELECT id, queue, task, payload, tags, idempotency_key, priority, attempts, max_attempts,
           worker_id, run_at, created_at, started_at, {now},
           extract(epoch FROM {now} - started_at), result, errors, timeout_seconds, retry,
           workflow_id
    FROM done
    RETURNING id
),
-- Workflows: the rule (migration 014's wf_release()) for the completed workflow jobs, in this
-- statement's transaction: their edges resolved, their held dependents counted down under
-- their row locks (a parent finishing at the same time in another transaction counted first,
-- or waits), those with nothing left to wait for moved to jobs and their queues notified.
-- Called only when the batch has a workflow job: a batch without one reads `done` once more
-- and touches no other table (_settle_answer.sql reads this part, so that it runs).
wf_released AS (
    SELECT {schema}.wf_release(array_agg(id), '{}', '{}', {now}) FROM done
    WHERE workflow_id IS NOT NULL
    HAVING count(*) > 0
)
