WITH gone AS (
    DELETE FROM {schema}.dead WHERE id = %(id)s RETURNING *
), queue AS (
    INSERT INTO {schema}.queues (name, created_at, updated_at) SELECT queue, {now}, {now} FROM gone
    ON CONFLICT (name) DO NOTHING
)
INSERT INTO {schema}.jobs (id, queue, task, payload, tags, idempotency_key, priority, status,
                           attempts, max_attempts, run_at, created_at, updated_at, errors,
                           timeout_seconds, retry)
SELECT id, queue, task, coalesce(%(payload)s::jsonb, payload), tags, idempotency_key,
       coalesce(%(priority)s::int, priority), 'pending', 0, max_attempts, {now}, created_at,
       {now}, errors, timeout_seconds, retry
FROM gone
RETURNING id, pg_notify('{schema}_jobs', queue)
