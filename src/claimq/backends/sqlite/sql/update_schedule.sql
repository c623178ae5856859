-- Guarded by the next_run_at and paused the edit was made from: a scheduler that fired the
-- schedule since (or another edit) makes it match nothing, and the edit reads again. Within a
-- microsecond: the edit's copy went through a datetime (a firing moves it a second or more).
UPDATE claimq_schedules
SET task = :task, payload = :payload, queue = :queue, priority = :priority,
    max_attempts = :max_attempts, timeout_seconds = :timeout, cron = :cron,
    every_seconds = :every, tz = :tz, missed = :missed, paused = :paused,
    next_run_at = :next_run_at, declared = :declared, updated_at = :now
WHERE name = :name AND abs(next_run_at - :read_next_run_at) < 0.000001 AND paused = :read_paused
RETURNING name
