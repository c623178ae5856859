-- The concurrency keys of a flow queue's pending jobs (not sequence jobs), by a skip scan over
-- claimq_jobs_keyed_claimable: one index probe per key, however many jobs each has.
WITH RECURSIVE keys(k) AS (
    SELECT (SELECT min(concurrency_key) FROM claimq_jobs
            WHERE queue = :queue AND status = 'pending' AND sequence_key IS NULL
              AND concurrency_key IS NOT NULL)
    UNION ALL
    SELECT (SELECT min(concurrency_key) FROM claimq_jobs
            WHERE queue = :queue AND status = 'pending' AND sequence_key IS NULL
              AND concurrency_key > keys.k)
    FROM keys
    WHERE keys.k IS NOT NULL
)
SELECT k FROM keys WHERE k IS NOT NULL
