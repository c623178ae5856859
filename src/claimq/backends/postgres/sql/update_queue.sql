INSERT INTO {schema}.queues AS q (name) VALUES (%(name)s)
ON CONFLICT (name) DO UPDATE
SET paused = coalesce(%(paused)s, q.paused),
    active = coalesce(%(active)s, q.active),
    max_workers = CASE WHEN %(set_max_workers)s THEN %(max_workers)s::int ELSE q.max_workers END,
    lease_seconds = coalesce(%(lease_seconds)s, q.lease_seconds),
    timeout_seconds = CASE WHEN %(set_timeout)s THEN %(timeout_seconds)s::float8
                           ELSE q.timeout_seconds END,
    updated_at = now()
