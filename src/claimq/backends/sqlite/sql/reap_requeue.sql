UPDATE claimq_jobs
SET status = 'pending',
    worker_id = NULL,
    claim_token = NULL,
    lease_until = NULL,
    heartbeat_at = NULL,
    updated_at = :now,
    errors = json_insert(claimq_errors(errors), '$[#]', json(:error))
WHERE id = :id AND status IN ('fetched', 'processing') AND lease_until < :now
RETURNING id
