-- The rows a heartbeat renews: never waits on a row another transaction holds.
SELECT id, claim_token, cancel_requested
FROM claimq_jobs
WHERE id IN %(ids)s AND status IN ('fetched', 'processing')
FOR UPDATE SKIP LOCKED
