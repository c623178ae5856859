-- A flow queue's due jobs without a concurrency key or a sequence key, in claim order (no
-- LIMIT: the claim stops reading).
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND sequence_key IS NULL AND concurrency_key IS NULL
  AND run_at <= :now
ORDER BY priority DESC, run_at, id
