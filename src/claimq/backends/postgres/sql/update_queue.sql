-- Create or change a queue; a new queue takes the given settings too, not only the defaults.
-- An open queue (resumed, activated, limit raised) wakes idle workers as an enqueue does.
WITH changed AS (
INSERT INTO {schema}.queues AS q (name, paused, active, max_workers, lease_seconds,
                                  timeout_seconds, rate_count, rate_period, rate_burst,
                                  aging_step, aging_cap, key_rate_count, key_rate_period,
                                  key_rate_burst, created_at, updated_at)
VALUES (%(name)s, coalesce(%(paused)s::boolean, false), coalesce(%(active)s::boolean, true),
        CASE WHEN %(set_max_workers)s THEN %(max_workers)s::int END,
        coalesce(%(lease_seconds)s::float8, 30),
        CASE WHEN %(set_timeout)s THEN %(timeout_seconds)s::float8 END,
        %(rate_count)s::int, %(rate_period)s::float8, %(rate_burst)s::int,
        %(aging_step)s::float8, %(aging_cap)s::int, %(key_rate_count)s::int,
        %(key_rate_period)s::float8, %(key_rate_burst)s::int, {now}, {now})
ON CONFLICT (name) DO UPDATE
SET paused = coalesce(%(paused)s::boolean, q.paused),
    active = coalesce(%(active)s::boolean, q.active),
    max_workers = CASE WHEN %(set_max_workers)s THEN %(max_workers)s::int ELSE q.max_workers END,
    lease_seconds = coalesce(%(lease_seconds)s::float8, q.lease_seconds),
    timeout_seconds = CASE WHEN %(set_timeout)s THEN %(timeout_seconds)s::float8
                           ELSE q.timeout_seconds END,
    rate_count = CASE WHEN %(set_rate)s THEN %(rate_count)s::int ELSE q.rate_count END,
    rate_period = CASE WHEN %(set_rate)s THEN %(rate_period)s::float8 ELSE q.rate_period END,
    rate_burst = CASE WHEN %(set_rate)s THEN %(rate_burst)s::int ELSE q.rate_burst END,
    rate_tat = CASE WHEN %(set_rate)s THEN NULL ELSE q.rate_tat END,  -- a new limit: a full bucket
    aging_step = CASE WHEN %(set_aging)s THEN %(aging_step)s::float8 ELSE q.aging_step END,
    aging_cap = CASE WHEN %(set_aging)s THEN %(aging_cap)s::int ELSE q.aging_cap END,
    key_rate_count = CASE WHEN %(set_key_rate)s THEN %(key_rate_count)s::int
                          ELSE q.key_rate_count END,
    key_rate_period = CASE WHEN %(set_key_rate)s THEN %(key_rate_period)s::float8
                           ELSE q.key_rate_period END,
    key_rate_burst = CASE WHEN %(set_key_rate)s THEN %(key_rate_burst)s::int
                          ELSE q.key_rate_burst END,
    updated_at = {now}
RETURNING q.name, q.paused, q.active
)
SELECT pg_notify('{schema}_jobs', name) FROM changed WHERE active AND NOT paused
