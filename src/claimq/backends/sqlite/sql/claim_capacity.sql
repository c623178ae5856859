-- Claimable queues and how many more jobs each may hand out (bulkhead: max_workers counts
-- every fetched and processing job of the queue, whoever holds it), with what flow control
-- the claim applies to the queue (keyed: counts running jobs per concurrency key; rate_*: a
-- rate limit and its GCRA state).
SELECT q.name,
       CASE WHEN q.max_workers IS NULL THEN :limit
            ELSE max(q.max_workers - (SELECT count(*) FROM claimq_jobs r
                                      WHERE r.queue = q.name
                                        AND r.status IN ('fetched', 'processing')), 0)
       END AS free,
       q.keyed OR q.rate_count IS NOT NULL OR q.aging_step IS NOT NULL
           OR q.throttled_until IS NOT NULL OR q.breakers AS flow
FROM claimq_queues q
WHERE q.active = 1 AND q.paused = 0
  AND (:queues IS NULL OR q.name IN (SELECT value FROM json_each(:queues)))
