-- In the transaction that enqueued the ticks' jobs, guarded by the next_run_at it planned from.
UPDATE claimq_schedules
SET next_run_at = %(next_run_at)s,
    last_run_at = coalesce(%(last_tick)s, last_run_at),
    last_job_id = coalesce(%(last_job_id)s, last_job_id),
    updated_at = {now}
WHERE name = %(name)s AND next_run_at = %(old_next_run_at)s
