-- Hand a job back without counting the attempt against it (shutdown, pause).
UPDATE claimq_jobs
SET status = 'pending',
    attempts = CASE WHEN status = 'processing' THEN max(attempts - 1, 0) ELSE attempts END,
    run_at = CASE WHEN :delay > 0 THEN :now + :delay ELSE run_at END,
    worker_id = NULL,
    claim_token = NULL,
    lease_until = NULL,
    heartbeat_at = NULL,
    started_at = NULL,
    updated_at = :now
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
  AND cancel_requested = 0
RETURNING id
