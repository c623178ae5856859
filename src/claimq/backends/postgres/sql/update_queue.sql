-- Create or change a queue; a new queue takes the given settings too, not only the defaults.
-- An open queue (resumed, activated, limit raised) wakes idle workers as an enqueue does.
WITH changed AS (
INSERT INTO {schema}.queues AS q (name, paused, active, max_workers, lease_seconds,
                                  timeout_seconds, created_at, updated_at)
VALUES (%(name)s, coalesce(%(paused)s::boolean, false), coalesce(%(active)s::boolean, true),
        CASE WHEN %(set_max_workers)s THEN %(max_workers)s::int END,
        coalesce(%(lease_seconds)s::float8, 30),
        CASE WHEN %(set_timeout)s THEN %(timeout_seconds)s::float8 END, {now}, {now})
ON CONFLICT (name) DO UPDATE
SET paused = coalesce(%(paused)s::boolean, q.paused),
    active = coalesce(%(active)s::boolean, q.active),
    max_workers = CASE WHEN %(set_max_workers)s THEN %(max_workers)s::int ELSE q.max_workers END,
    lease_seconds = coalesce(%(lease_seconds)s::float8, q.lease_seconds),
    timeout_seconds = CASE WHEN %(set_timeout)s THEN %(timeout_seconds)s::float8
                           ELSE q.timeout_seconds END,
    updated_at = {now}
RETURNING q.name, q.paused, q.active
)
SELECT pg_notify('{schema}_jobs', name) FROM changed WHERE active AND NOT paused
