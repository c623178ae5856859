INSERT INTO claimq_schedules (name, task, payload, queue, priority, max_attempts, timeout_seconds,
                              cron, every_seconds, tz, missed, paused, next_run_at, declared,
                              created_at, updated_at)
VALUES (:name, :task, :payload, :queue, :priority, :max_attempts, :timeout, :cron, :every, :tz,
        :missed, :paused, :next_run_at, :declared, :now, :now)
ON CONFLICT (name) DO NOTHING
RETURNING name
