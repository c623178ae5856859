-- What holds due jobs back now (App.limited()): per queue and reason (_limited.sql), and per
-- key for 'concurrency' and 'rate_key', how many due jobs wait (each counted once, under its
-- first reason); the jobs fetched or processing (of the key, or of the queue); the limit (the
-- queue's max_workers, or the key's concurrency_limit: the highest of its waiting jobs'); and
-- until when a throttle holds. The most waiting first, at most 1000 rows. Read as
-- count_states.sql reads it: the queue's part once per queue (then its due jobs counted), the
-- keys' part by _keyed_limited.sql.
SELECT g.queue, g.reason, g.held_key, g.waiting,
       CASE g.reason
           WHEN 'concurrency' THEN g.key_running
           WHEN 'rate_key' THEN (SELECT CAST(count(*) AS SIGNED) FROM claimq_jobs r
                                 WHERE r.queue = g.queue AND r.rate_key = g.held_key
                                   AND r.status IN ('fetched', 'processing'))
           ELSE (SELECT CAST(count(*) AS SIGNED) FROM claimq_jobs r
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
                                 WHERE k.queue = g.queue AND k.rate_key = g.held_key) END
           AS until
FROM (SELECT queue, reason, NULL AS held_key, waiting, NULL AS key_limit, NULL AS key_running
      FROM (SELECT j.queue, {queue_limited} AS reason,
                   (SELECT CAST(count(*) AS SIGNED) FROM claimq_jobs d
                    WHERE d.queue = j.queue AND d.status = 'pending'
                      AND d.run_at <= {now}) AS waiting
            FROM (SELECT name AS queue FROM claimq_queues) AS j) AS held
      WHERE reason IS NOT NULL AND waiting > 0
      UNION ALL
      SELECT keyed.queue, keyed.reason, keyed.held_key, keyed.n, keyed.key_limit,
             keyed.running
      FROM ({keyed_limited}) AS keyed) AS g
ORDER BY g.waiting DESC, g.queue, g.reason, g.held_key
LIMIT 1000
