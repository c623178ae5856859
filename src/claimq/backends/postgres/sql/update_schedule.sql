-- Guarded by the next_run_at and paused the edit was made from: a scheduler that fired the
-- schedule since (or another edit) makes it match nothing, and the edit reads again.
UPDATE {schema}.schedules
SET task = %(task)s, payload = %(payload)s::jsonb, queue = %(queue)s, priority = %(priority)s,
    max_attempts = %(max_attempts)s, timeout_seconds = %(timeout)s, cron = %(cron)s,
    every_seconds = %(every)s, tz = %(tz)s, missed = %(missed)s, paused = %(paused)s,
    next_run_at = %(next_run_at)s, declared = %(declared)s, updated_at = {now}
WHERE name = %(name)s AND next_run_at = %(read_next_run_at)s AND paused = %(read_paused)s
RETURNING name
