-- Priority aging: the oldest due jobs of one priority level of a queue.
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND run_at <= :now AND sequence_key IS NULL AND priority = :level
ORDER BY priority DESC, run_at, id
LIMIT :limit
