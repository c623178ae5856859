UPDATE claimq_schedules
SET next_run_at = :next_run_at,
    last_run_at = coalesce(:last_tick, last_run_at),
    last_job_id = coalesce(:last_job_id, last_job_id),
    updated_at = :now
WHERE name = :name AND next_run_at = :old_next_run_at
RETURNING name
