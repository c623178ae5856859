-- The due jobs held back by their own keys and not by their queue (_limited.sql: the queue's
-- part NULL, then the keys' part, applied set-wise with _key_limited.sql's tests): per queue,
-- reason ('concurrency' or 'rate_key') and key, how many (`n`), the highest concurrency_limit
-- and the key's running jobs (concurrency). Driven by the busy concurrency keys (_busy_keys.sql)
-- and the rate keys a Throttled pauses: without either it reads nothing. A job of a full
-- concurrency key whose rate key is throttled counts under 'concurrency' only.
SELECT j.queue, j.reason, j.held_key, j.n, j.key_limit, j.running
FROM (SELECT c.queue, 'concurrency' AS reason, c.concurrency_key AS held_key,
             CAST(count(*) AS SIGNED) AS n, max(c.concurrency_limit) AS key_limit,
             max(busy.running) AS running
      FROM {busy_keys} AS busy
      JOIN claimq_jobs c
        ON c.queue = busy.queue AND c.concurrency_key = busy.concurrency_key
      WHERE c.status = 'pending' AND c.run_at <= {now}
        AND c.concurrency_limit <= busy.running
      GROUP BY c.queue, c.concurrency_key
      UNION ALL
      SELECT c.queue, 'rate_key', c.rate_key, CAST(count(*) AS SIGNED), NULL, NULL
      FROM claimq_rate_keys k
      JOIN claimq_jobs c ON c.queue = k.queue AND c.rate_key = k.rate_key
      LEFT JOIN {busy_keys} AS busy
        ON busy.queue = c.queue AND busy.concurrency_key = c.concurrency_key
      WHERE k.throttled_until > {now}
        AND c.status = 'pending' AND c.run_at <= {now}
        AND NOT coalesce(c.concurrency_limit <= busy.running, 0)
      GROUP BY c.queue, c.rate_key) AS j
WHERE {queue_limited} IS NULL
