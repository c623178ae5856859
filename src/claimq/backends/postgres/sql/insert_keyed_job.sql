-- One job with an idempotency key: the key row and the job commit together, or neither does.
-- ON CONFLICT waits for a concurrent enqueue of the same key to finish, then yields no row.
-- The queue is created only when the job is: a held key writes nothing.
WITH new_id AS (
    SELECT nextval('{schema}.job_ids') AS id
), key AS (
    INSERT INTO {schema}.idempotency_keys (key, job_id, created_at)
    SELECT %(key)s, id, {now} FROM new_id
    ON CONFLICT (key) DO NOTHING
    RETURNING job_id
), queue AS (
    INSERT INTO {schema}.queues (name, keyed, created_at, updated_at)
    SELECT %(queue)s, %(keyed)s, {now}, {now} FROM key
    ON CONFLICT (name) DO NOTHING
), keyed AS (
    -- an existing queue (a new one is inserted keyed above); locks its row only to change it
    UPDATE {schema}.queues SET keyed = true, updated_at = {now}
    WHERE name = %(queue)s AND NOT keyed AND %(keyed)s
      AND EXISTS (SELECT 1 FROM key)
), inserted AS (
    INSERT INTO {schema}.jobs (id, queue, task, payload, tags, idempotency_key, priority,
                               max_attempts, run_at, created_at, updated_at, timeout_seconds,
                               retry, trace_context, concurrency_key, concurrency_limit,
                               sequence_key, sequence_wait, rate_key)
    SELECT job_id, %(queue)s, %(task)s, %(payload)s::jsonb, %(tags)s::text[], %(key)s,
           %(priority)s, %(max_attempts)s,
           coalesce(%(run_at)s::timestamptz, {now} + make_interval(secs => %(delay)s)),
           {now}, {now}, %(timeout_seconds)s, %(retry)s::jsonb, %(trace_context)s,
           %(concurrency_key)s, %(concurrency_limit)s::int, %(sequence_key)s, %(sequence_wait)s,
           %(rate_key)s
    FROM key
    RETURNING id, queue
)
SELECT id, pg_notify('{schema}_jobs', queue) FROM inserted
