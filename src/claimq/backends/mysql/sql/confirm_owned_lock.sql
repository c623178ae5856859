-- ctx.ensure_owned(): the job's row, locked. No SKIP LOCKED: a row another transaction holds
-- (this worker's own heartbeat, the reaper) is waited on, 2 s at most (theirs last
-- milliseconds), and read as it left it.
SELECT claim_token, status, cancel_requested
FROM claimq_jobs
WHERE id = %(id)s
FOR UPDATE WAIT 2
