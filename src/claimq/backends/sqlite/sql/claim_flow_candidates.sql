-- A flow-controlled queue's due jobs in claim order, read until the claim has enough of them
-- that their concurrency keys allow (no LIMIT: the claim stops reading).
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND run_at <= :now AND sequence_key IS NULL
ORDER BY priority DESC, run_at, id
