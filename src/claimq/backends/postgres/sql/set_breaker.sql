-- A task's circuit breaker in a queue, new or with new settings (its state stays).
INSERT INTO {schema}.breakers (queue, task, failure_limit, window_seconds, cooldown_seconds,
                               updated_at)
VALUES (%(queue)s, %(task)s, %(failure_limit)s, %(window)s, %(cooldown)s, {now})
ON CONFLICT (queue, task) DO UPDATE
SET failure_limit = EXCLUDED.failure_limit, window_seconds = EXCLUDED.window_seconds,
    cooldown_seconds = EXCLUDED.cooldown_seconds, updated_at = EXCLUDED.updated_at
