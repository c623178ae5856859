-- A failed attempt the job retries (claimq.job.ends_job: not permanent, attempts left).
UPDATE claimq_jobs
SET status = 'pending',
    run_at = :now + :delay,
    worker_id = NULL,
    claim_token = NULL,
    lease_until = NULL,
    heartbeat_at = NULL,
    updated_at = :now,
    errors = json_insert(claimq_errors(errors), '$[#]', json(:error))
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
RETURNING id
