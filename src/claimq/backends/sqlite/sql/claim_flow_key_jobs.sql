-- One concurrency key's first due jobs in claim order (no more than a claim can take of it)
-- that the claim may take as far as their task's circuit breaker and their rate key go: none of
-- the tasks in :gated (a JSON array, or NULL: the breakers that hold them back), none of a rate
-- key that is throttled or whose bucket is empty (its arrival time more than :key_full seconds
-- ahead; NULL: no per-key rate limit). Passed over inside the read, before its LIMIT: after it,
-- a run of them at the head of the key took the whole LIMIT and held back the key's jobs behind.
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key
FROM claimq_jobs j
WHERE queue = :queue AND status = 'pending' AND sequence_key IS NULL AND concurrency_key = :key
  AND run_at <= :now
  AND (:gated IS NULL OR task NOT IN (SELECT value FROM json_each(:gated)))
  AND (rate_key IS NULL
       OR NOT EXISTS (SELECT 1 FROM claimq_rate_keys k
                      WHERE k.queue = j.queue AND k.key = j.rate_key
                        AND (k.throttled_until > :now
                             OR (:key_full IS NOT NULL AND k.tat > :now + :key_full))))
ORDER BY priority DESC, run_at, id
LIMIT :limit
