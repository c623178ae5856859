SELECT id, status, attempts, max_attempts, cancel_requested, worker_id
FROM claimq_jobs
WHERE status IN ('fetched', 'processing') AND lease_until < :now
ORDER BY lease_until
LIMIT :limit
