-- Create or change a queue; a new queue takes the given settings too, not only the defaults.
-- A new rate limit starts with a full bucket (rate_tat NULL).
INSERT INTO claimq_queues (name, paused, active, max_workers, lease_seconds, timeout_seconds,
                           rate_count, rate_period, rate_burst, aging_step, aging_cap,
                           key_rate_count, key_rate_period, key_rate_burst, created_at,
                           updated_at)
VALUES (%(name)s, coalesce(%(paused)s, FALSE), coalesce(%(active)s, TRUE),
        IF(%(set_max_workers)s, %(max_workers)s, NULL), coalesce(%(lease_seconds)s, 30),
        IF(%(set_timeout)s, %(timeout_seconds)s, NULL),
        %(rate_count)s, %(rate_period)s, %(rate_burst)s, %(aging_step)s, %(aging_cap)s,
        %(key_rate_count)s, %(key_rate_period)s, %(key_rate_burst)s, {now}, {now})
ON DUPLICATE KEY UPDATE
    paused = coalesce(%(paused)s, paused),
    active = coalesce(%(active)s, active),
    max_workers = IF(%(set_max_workers)s, %(max_workers)s, max_workers),
    lease_seconds = coalesce(%(lease_seconds)s, lease_seconds),
    timeout_seconds = IF(%(set_timeout)s, %(timeout_seconds)s, timeout_seconds),
    rate_count = IF(%(set_rate)s, %(rate_count)s, rate_count),
    rate_period = IF(%(set_rate)s, %(rate_period)s, rate_period),
    rate_burst = IF(%(set_rate)s, %(rate_burst)s, rate_burst),
    rate_tat = IF(%(set_rate)s, NULL, rate_tat),
    aging_step = IF(%(set_aging)s, %(aging_step)s, aging_step),
    aging_cap = IF(%(set_aging)s, %(aging_cap)s, aging_cap),
    key_rate_count = IF(%(set_key_rate)s, %(key_rate_count)s, key_rate_count),
    key_rate_period = IF(%(set_key_rate)s, %(key_rate_period)s, key_rate_period),
    key_rate_burst = IF(%(set_key_rate)s, %(key_rate_burst)s, key_rate_burst),
    updated_at = {now}
