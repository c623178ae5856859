-- What holds due jobs back now (App.limited()): per queue and reason (_limited.sql), and per
-- key for 'concurrency' and 'rate_key', how many due jobs wait (each counted once, under its
-- first reason); the jobs fetched or processing (of the key, or of the queue); the limit (the
-- queue's max_workers, or the key's concurrency_limit: the highest of its waiting jobs'); and
-- until when a throttle holds. The most waiting first, at most 1000 rows.
SELECT g.queue, g.reason, g.held_key, g.waiting,
       CASE g.reason
           WHEN 'concurrency' THEN (SELECT count(*) FROM claimq_jobs r
                                    WHERE r.queue = g.queue AND r.concurrency_key = g.held_key
                                      AND r.status IN ('fetched', 'processing'))
           WHEN 'rate_key' THEN (SELECT count(*) FROM claimq_jobs r
                                 WHERE r.queue = g.queue AND r.rate_key = g.held_key
                                   AND r.status IN ('fetched', 'processing'))
           ELSE (SELECT count(*) FROM claimq_jobs r
                 WHERE r.queue = g.queue AND r.status IN ('fetched', 'processing')) END
           AS running,
       CASE g.reason
           WHEN 'concurrency' THEN g.key_limit
           WHEN 'max_workers' THEN (SELECT q.max_workers FROM claimq_queues q
                                    WHERE q.name = g.queue) END AS cap,
       CASE g.reason
           WHEN 'throttled' THEN (SELECT q.throttled_until FROM claimq_queues q
                                  WHERE q.name = g.queue)
           WHEN 'rate_key' THEN (SELECT k.throttled_until FROM claimq_rate_keys k
                                 WHERE k.queue = g.queue AND k.key = g.held_key) END
           AS until
FROM (SELECT queue, reason,
             CASE reason WHEN 'concurrency' THEN concurrency_key
                         WHEN 'rate_key' THEN rate_key END AS held_key,
             count(*) AS waiting, max(concurrency_limit) AS key_limit
      FROM (SELECT j.queue, j.concurrency_key, j.concurrency_limit, j.rate_key,
                   {limited} AS reason
            FROM claimq_jobs j
            WHERE j.status = 'pending' AND j.run_at <= :now)
      WHERE reason IS NOT NULL
      GROUP BY 1, 2, 3) AS g
ORDER BY g.waiting DESC, g.queue, g.reason, g.held_key
LIMIT 1000
