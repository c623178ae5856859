-- The rows of jobs a caller believes it owns, locked; the caller keeps those whose token and
-- status say it does.
SELECT id, queue, task, rate_key, claim_token, status, attempts, max_attempts, cancel_requested, worker_id, errors,
       workflow_id
FROM claimq_jobs
WHERE id IN %(ids)s
FOR UPDATE
