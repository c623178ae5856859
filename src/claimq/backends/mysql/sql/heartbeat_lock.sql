-- The rows a heartbeat renews: never waits on a row another transaction holds. By PRIMARY (the
-- ids'; the in-flight index would lock its records of these jobs first, which a settle or claim
-- holding the row then waits for).
SELECT id, claim_token, cancel_requested
FROM claimq_jobs FORCE INDEX (PRIMARY)
WHERE id IN %(ids)s AND status IN ('fetched', 'processing')
FOR UPDATE SKIP LOCKED
