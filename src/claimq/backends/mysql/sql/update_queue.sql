-- Create or change a queue; a new queue takes the given settings too, not only the defaults.
INSERT INTO claimq_queues (name, paused, active, max_workers, lease_seconds, timeout_seconds,
                           created_at, updated_at)
VALUES (%(name)s, coalesce(%(paused)s, FALSE), coalesce(%(active)s, TRUE),
        IF(%(set_max_workers)s, %(max_workers)s, NULL), coalesce(%(lease_seconds)s, 30),
        IF(%(set_timeout)s, %(timeout_seconds)s, NULL), {now}, {now})
ON DUPLICATE KEY UPDATE
    paused = coalesce(%(paused)s, paused),
    active = coalesce(%(active)s, active),
    max_workers = IF(%(set_max_workers)s, %(max_workers)s, max_workers),
    lease_seconds = coalesce(%(lease_seconds)s, lease_seconds),
    timeout_seconds = IF(%(set_timeout)s, %(timeout_seconds)s, timeout_seconds),
    updated_at = {now}
