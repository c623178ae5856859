-- A name already taken fails with a duplicate key (the backend reports False, nothing written).
INSERT INTO claimq_schedules (name, task, payload, queue, priority, max_attempts, timeout_seconds,
                              cron, every_seconds, tz, missed, paused, next_run_at, declared,
                              created_at, updated_at)
VALUES (%(name)s, %(task)s, %(payload)s, %(queue)s, %(priority)s, %(max_attempts)s, %(timeout)s,
        %(cron)s, %(every)s, %(tz)s, %(missed)s, %(paused)s, %(next_run_at)s, %(declared)s,
        {now}, {now})
