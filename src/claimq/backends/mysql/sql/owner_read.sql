-- ctx.ensure_owned() when the job's row stayed locked past the short wait: its token and
-- status last committed, read without the lock.
SELECT claim_token, status, cancel_requested
FROM claimq_jobs
WHERE id = %(id)s
