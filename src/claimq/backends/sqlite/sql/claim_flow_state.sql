-- A flow-controlled queue's rate limit and GCRA state, its priority aging, and its running
-- jobs per concurrency key; whether it has circuit breakers; its per-key rate limit.
SELECT q.keyed, q.breakers, q.rate_count, q.rate_period, q.rate_burst, q.rate_tat,
       q.aging_step, q.aging_cap, q.throttled_until, q.key_rate_count, q.key_rate_period,
       q.key_rate_burst,
       (SELECT json_group_object(k.concurrency_key, k.n) FROM (
            SELECT r.concurrency_key, count(*) AS n FROM claimq_jobs r
            WHERE r.queue = q.name AND r.status IN ('fetched', 'processing')
              AND r.concurrency_key IS NOT NULL
            GROUP BY r.concurrency_key) k) AS running
FROM claimq_queues q
WHERE q.name = :queue
