-- _limited.sql's reasons of job `j`'s own keys (concurrency, rate_key), or NULL: NULL at
-- once for a job without a key.
CASE WHEN j.concurrency_key IS NOT NULL
          AND j.concurrency_limit <= (SELECT count(*) FROM claimq_jobs r
                                      WHERE r.queue = j.queue
                                        AND r.concurrency_key = j.concurrency_key
                                        AND r.status IN ('fetched', 'processing'))
         THEN 'concurrency'
     WHEN j.rate_key IS NOT NULL
          AND EXISTS (SELECT 1 FROM claimq_rate_keys k
                      WHERE k.queue = j.queue AND k.key = j.rate_key
                        AND k.throttled_until > :now)
         THEN 'rate_key' END
