-- The gate between claim and handler: only the current owner of a fetched job may start it.
UPDATE claimq_jobs
SET status = 'processing',
    attempts = attempts + 1,
    started_at = :now,
    heartbeat_at = :now,
    lease_until = coalesce(:now + :lease, lease_until),
    updated_at = :now
WHERE id = :id AND claim_token = :token AND status = 'fetched' AND cancel_requested = 0
RETURNING id, attempts
