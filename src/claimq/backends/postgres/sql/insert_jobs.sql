-- Bulk insert of jobs without idempotency keys; the notification commits with the jobs.
WITH inserted AS (
    INSERT INTO {schema}.jobs (queue, task, payload, tags, priority, max_attempts, run_at,
                               created_at, updated_at, timeout_seconds, retry, trace_context,
                               concurrency_key, concurrency_limit, sequence_key, sequence_wait,
                               rate_key)
    SELECT queue, task, payload, tags::text[], priority, max_attempts,
           coalesce(run_at, {now} + make_interval(secs => delay)), {now}, {now},
           timeout_seconds, retry, trace_context, concurrency_key, concurrency_limit,
           sequence_key, sequence_wait, rate_key
    FROM unnest(%(queue)s::text[], %(task)s::text[], %(payload)s::jsonb[], %(tags)s::text[],
                %(priority)s::int[], %(max_attempts)s::int[], %(run_at)s::timestamptz[],
                %(delay)s::float8[], %(timeout_seconds)s::float8[], %(retry)s::jsonb[],
                %(trace_context)s::text[], %(concurrency_key)s::text[],
                %(concurrency_limit)s::int[], %(sequence_key)s::text[],
                %(sequence_wait)s::bool[], %(rate_key)s::text[])
         WITH ORDINALITY AS i(queue, task, payload, tags, priority, max_attempts, run_at, delay,
                              timeout_seconds, retry, trace_context, concurrency_key,
                              concurrency_limit, sequence_key, sequence_wait, rate_key, n)
    ORDER BY n
    RETURNING id, queue
), notified AS (
    SELECT pg_notify('{schema}_jobs', queue) FROM (SELECT DISTINCT queue FROM inserted) q
)
SELECT id FROM inserted, (SELECT count(*) FROM notified) AS n ORDER BY id
