-- A failed attempt: to dead letters when permanent or out of attempts, else back to pending
-- (claimq.job.ends_job, the rule the other backends and the worker call, set-based here).
WITH input AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(tokens)s::uuid[], %(errors)s::jsonb[],
                         %(delays)s::float8[], %(reasons)s::text[], %(permanent)s::bool[],
                         %(throttles)s::float8[])
             AS i(id, token, error, delay, reason, permanent, throttle)
), owned AS (
    SELECT j.id, j.queue, j.task, j.rate_key, i.error, i.delay, i.reason, i.throttle,
           (i.permanent OR j.attempts >= j.max_attempts) AS bury
    FROM {schema}.jobs j JOIN input i ON j.id = i.id AND j.claim_token = i.token
    WHERE j.status IN ('fetched', 'processing')
    FOR UPDATE OF j
), gone AS (
    DELETE FROM {schema}.jobs j USING owned o
    WHERE j.id = o.id AND o.bury
    RETURNING j.*, o.error AS new_error, o.reason AS new_reason
), buried AS (
    INSERT INTO {schema}.dead ({dead_columns}, finished_at, reason, errors)
    SELECT {dead_columns}, {now}, new_reason, errors || jsonb_build_array(new_error)
    FROM gone
    RETURNING id
), retried AS (
    UPDATE {schema}.jobs j
    SET status = 'pending',
        run_at = {now} + make_interval(secs => o.delay),
        worker_id = NULL,
        claim_token = NULL,
        lease_until = NULL,
        heartbeat_at = NULL,
        updated_at = {now},
        errors = j.errors || jsonb_build_array(o.error)
    FROM owned o
    WHERE j.id = o.id AND NOT o.bury
    RETURNING j.id
), throttled AS (
    -- Throttled: the job's queue pauses for every worker (claim_flow.sql honours it)...
    UPDATE {schema}.queues q
    SET throttled_until = greatest(q.throttled_until, {now} + make_interval(secs => t.throttle))
    FROM (SELECT queue, max(throttle) AS throttle FROM owned
          WHERE throttle > 0 AND rate_key IS NULL
          GROUP BY queue) t
    WHERE q.name = t.queue
), key_throttled AS (
    -- ...or, a job with a rate key, only that key of its queue
    INSERT INTO {schema}.rate_keys AS k (queue, key, throttled_until)
    SELECT queue, rate_key, {now} + make_interval(secs => max(throttle))
    FROM owned WHERE throttle > 0 AND rate_key IS NOT NULL
    GROUP BY queue, rate_key
    ON CONFLICT (queue, key) DO UPDATE
    SET throttled_until = greatest(k.throttled_until, EXCLUDED.throttled_until)
), tripped AS (
    -- Circuit breakers of the failed jobs' tasks (a Throttled is not the task's failure):
    -- closed, the failures within the window are counted and failure_limit of them open it; a
    -- half_open one's probe failed: open again. Every expression reads the row as locked, so
    -- failures written at the same time all count.
    UPDATE {schema}.breakers b
    SET failures = CASE WHEN b.window_until > {now} THEN b.failures ELSE 0 END + f.n,
        window_until = CASE WHEN b.window_until > {now} THEN b.window_until
                            ELSE {now} + make_interval(secs => b.window_seconds) END,
        state = CASE WHEN b.state = 'half_open'
                     OR CASE WHEN b.window_until > {now} THEN b.failures ELSE 0 END + f.n
                        >= b.failure_limit
                     THEN 'open' ELSE b.state END,
        opened_at = CASE WHEN b.state = 'half_open'
                     OR CASE WHEN b.window_until > {now} THEN b.failures ELSE 0 END + f.n
                        >= b.failure_limit
                         THEN {now} ELSE b.opened_at END,
        open_until = CASE WHEN b.state = 'half_open'
                     OR CASE WHEN b.window_until > {now} THEN b.failures ELSE 0 END + f.n
                        >= b.failure_limit
                          THEN {now} + make_interval(secs => b.cooldown_seconds)
                          ELSE b.open_until END,
        updated_at = {now}
    FROM (SELECT queue, task, count(*)::int AS n FROM owned WHERE throttle = 0
          GROUP BY queue, task) f
    WHERE b.queue = f.queue AND b.task = f.task AND b.state <> 'open'
)
SELECT id, true AS dead FROM buried
UNION ALL
SELECT id, false FROM retried
