DELETE FROM claimq_progress WHERE job_id IN %(ids)s
