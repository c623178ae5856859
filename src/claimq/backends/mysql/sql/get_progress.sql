SELECT fraction, note, attempt, updated_at FROM claimq_progress WHERE job_id = %(id)s
