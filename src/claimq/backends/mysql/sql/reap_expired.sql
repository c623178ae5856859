-- Expired leases, oldest first. SKIP LOCKED lets every worker run this at once.
SELECT id, status, attempts, max_attempts, cancel_requested, worker_id, errors, workflow_id,
       {now} AS now
FROM claimq_jobs
WHERE status IN ('fetched', 'processing') AND lease_until < {now}
ORDER BY lease_until
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
