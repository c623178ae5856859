-- A workflow's jobs (add_workflow, spawn), as insert_jobs.sql inserts jobs, with the ids drawn
-- for them in their order (allocate_ids.sql) and their workflow: those without dependencies
-- (waiting NULL) into jobs, due as any enqueued job (their queues notified), the others into
-- held with how many dependencies each waits for and its run_if.
WITH input AS (
    SELECT * FROM unnest(%(id)s::bigint[], %(queue)s::text[], %(task)s::text[],
                         %(payload)s::jsonb[], %(tags)s::text[], %(priority)s::int[],
                         %(max_attempts)s::int[], %(run_at)s::timestamptz[], %(delay)s::float8[],
                         %(timeout_seconds)s::float8[], %(retry)s::jsonb[],
                         %(trace_context)s::text[], %(concurrency_key)s::text[],
                         %(concurrency_limit)s::int[], %(sequence_key)s::text[],
                         %(sequence_wait)s::bool[], %(rate_key)s::text[], %(waiting)s::int[],
                         %(run_if)s::text[])
         WITH ORDINALITY AS i(id, queue, task, payload, tags, priority, max_attempts, run_at,
                              delay, timeout_seconds, retry, trace_context, concurrency_key,
                              concurrency_limit, sequence_key, sequence_wait, rate_key,
                              waiting, run_if, n)
), live AS (
    INSERT INTO {schema}.jobs (id, queue, task, payload, tags, priority, max_attempts, run_at,
                               created_at, updated_at, timeout_seconds, retry, trace_context,
                               concurrency_key, concurrency_limit, sequence_key, sequence_wait,
                               rate_key, workflow_id)
    SELECT id, queue, task, payload, tags::text[], priority, max_attempts,
           coalesce(run_at, {now} + make_interval(secs => delay)), {now}, {now},
           timeout_seconds, retry, trace_context, concurrency_key, concurrency_limit,
           sequence_key, sequence_wait, rate_key, %(workflow)s
    FROM input WHERE waiting IS NULL
    ORDER BY n
    RETURNING queue
), held AS (
    INSERT INTO {schema}.held (id, queue, task, payload, tags, priority, max_attempts, run_at,
                               created_at, updated_at, timeout_seconds, retry, trace_context,
                               concurrency_key, concurrency_limit, sequence_key, sequence_wait,
                               rate_key, workflow_id, waiting, run_if)
    SELECT id, queue, task, payload, tags::text[], priority, max_attempts,
           coalesce(run_at, {now} + make_interval(secs => delay)), {now}, {now},
           timeout_seconds, retry, trace_context, concurrency_key, concurrency_limit,
           sequence_key, sequence_wait, rate_key, %(workflow)s, waiting, run_if
    FROM input WHERE waiting IS NOT NULL
    ORDER BY n
)
SELECT count(*) AS notified
FROM (SELECT pg_notify('{schema}_jobs', queue) FROM (SELECT DISTINCT queue FROM live) q) n
