UPDATE claimq_schedules
SET task = :task, payload = :payload, queue = :queue, priority = :priority,
    max_attempts = :max_attempts, timeout_seconds = :timeout, cron = :cron,
    every_seconds = :every, tz = :tz, missed = :missed, paused = :paused,
    next_run_at = :next_run_at, declared = :declared, updated_at = :now
WHERE name = :name
RETURNING name
