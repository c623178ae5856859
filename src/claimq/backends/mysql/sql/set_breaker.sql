-- A task's circuit breaker in a queue, new or with new settings (its state stays).
INSERT INTO claimq_breakers (queue, task, failure_limit, window_seconds, cooldown_seconds,
                             updated_at)
VALUES (%(queue)s, %(task)s, %(failure_limit)s, %(window)s, %(cooldown)s, {now})
ON DUPLICATE KEY UPDATE
    failure_limit = VALUES(failure_limit), window_seconds = VALUES(window_seconds),
    cooldown_seconds = VALUES(cooldown_seconds), updated_at = VALUES(updated_at)
