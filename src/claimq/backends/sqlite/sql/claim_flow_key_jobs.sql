-- One concurrency key's first due jobs in claim order (no more than a claim can take of it).
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND sequence_key IS NULL AND concurrency_key = :key
  AND run_at <= :now
ORDER BY priority DESC, run_at, id
LIMIT :limit
