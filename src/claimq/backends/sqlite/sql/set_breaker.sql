-- A task's circuit breaker in a queue, new or with new settings (its state stays).
INSERT INTO claimq_breakers (queue, task, failure_limit, window_seconds, cooldown_seconds,
                             updated_at)
VALUES (:queue, :task, :failure_limit, :window, :cooldown, :now)
ON CONFLICT (queue, task) DO UPDATE
SET failure_limit = excluded.failure_limit, window_seconds = excluded.window_seconds,
    cooldown_seconds = excluded.cooldown_seconds, updated_at = excluded.updated_at
