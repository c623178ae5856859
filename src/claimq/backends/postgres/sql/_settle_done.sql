-- The completions of a claim statement (settle.sql, claim_flow.sql, claim_keyed.sql): `done`
-- deletes the finished jobs still held with their tokens, `archived` stores them, and the wf_
-- parts release their workflows' dependents in the same statement (migration 014: the rule).
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
-- Workflows: the completed jobs' unresolved edges resolved (a batch without a workflow job
-- skips this outright: a one-time filter), ...
wf_edges AS (
    UPDATE {schema}.deps d SET resolved = true
    WHERE d.parent = ANY(ARRAY(SELECT id FROM done WHERE workflow_id IS NOT NULL))
      AND NOT d.resolved
      AND EXISTS (SELECT 1 FROM done WHERE workflow_id IS NOT NULL)
    RETURNING d.child
),
wf_counts AS (
    SELECT child, count(*)::int AS n FROM wf_edges GROUP BY child
),
-- ... each held child's row locked (in id order) and read as it is now: a parent finishing at
-- the same time in another transaction has counted it down first, or waits for this one ...
wf_locked AS (
    SELECT h.id, h.waiting, h.run_if FROM {schema}.held h
    WHERE h.id IN (SELECT child FROM wf_counts)
    ORDER BY h.id
    FOR UPDATE
),
-- ... those left with nothing to wait for moved to jobs, the others counted down: each row by
-- exactly one of the two (one statement must not write a row twice). A run_if job counted
-- down to zero is moved by the trigger held_wf_ready, after this statement.
wf_released AS (
    DELETE FROM {schema}.held h
    USING wf_locked l, wf_counts c
    WHERE h.id = l.id AND c.child = l.id AND l.waiting <= c.n AND l.run_if IS NULL
    RETURNING h.*
),
wf_waiting AS (
    UPDATE {schema}.held h SET waiting = l.waiting - c.n, updated_at = {now}
    FROM wf_locked l, wf_counts c
    WHERE h.id = l.id AND c.child = l.id AND (l.waiting > c.n OR l.run_if IS NOT NULL)
),
wf_started AS (
    INSERT INTO {schema}.jobs (id, queue, task, payload, tags, idempotency_key, priority, status,
                               attempts, max_attempts, run_at, created_at, updated_at, errors,
                               timeout_seconds, retry, trace_context, concurrency_key,
                               concurrency_limit, sequence_key, sequence_wait, rate_key,
                               workflow_id)
    SELECT id, queue, task, payload, tags, idempotency_key, priority, 'pending', attempts,
           max_attempts, greatest(run_at, {now}), created_at, {now}, errors, timeout_seconds,
           retry, trace_context, concurrency_key, concurrency_limit, sequence_key,
           sequence_wait, rate_key, workflow_id
    FROM wf_released
    -- wakes idle workers of the queue as an enqueue does (one notice per queue and commit)
    RETURNING pg_notify('{schema}_jobs', queue)
)
