INSERT INTO claimq_idempotency (key, job_id, created_at)
VALUES (:key, :job_id, :now)
ON CONFLICT (key) DO UPDATE SET job_id = excluded.job_id, created_at = excluded.created_at,
                                finished_at = NULL
