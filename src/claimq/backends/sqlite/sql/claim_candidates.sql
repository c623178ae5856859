SELECT id, priority, run_at
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND run_at <= :now
ORDER BY priority DESC, run_at, id
LIMIT :limit
