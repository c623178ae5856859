-- Every field of the schedule (the row count is the rows matched: CLIENT_FOUND_ROWS).
UPDATE claimq_schedules
SET task = %(task)s, payload = %(payload)s, queue = %(queue)s, priority = %(priority)s,
    max_attempts = %(max_attempts)s, timeout_seconds = %(timeout)s, cron = %(cron)s,
    every_seconds = %(every)s, tz = %(tz)s, missed = %(missed)s, paused = %(paused)s,
    next_run_at = %(next_run_at)s, declared = %(declared)s, updated_at = {now}
WHERE name = %(name)s
