-- Rows the heartbeat passed over, read without locking: still this token means busy, not lost.
SELECT id, claim_token
FROM claimq_jobs
WHERE id IN %(ids)s AND status IN ('fetched', 'processing')
