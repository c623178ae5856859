-- Live jobs by queue and state: the dashboard's counts per state. The rule is _live_state.sql,
-- applied to one representative row per group of jobs it cannot tell apart (same queue and
-- status, run_at come or not, attempted or not: all it reads), not to every job; from the
-- tables, not through find's union of them (benchmarks/dashboard_states.py: on 1M jobs this
-- takes about what App.queues() does; a CASE per job read through the union, twice that).
-- A due job is 'limited' instead when flow control holds it back (_limited.sql, as find reads
-- it). Its queue's part (_queue_limited.sql) is asked once per group: every due job of a queue
-- so held back is limited. Its keys' part is asked only of the due jobs that can have one: of
-- a concurrency key with jobs running (`busy`), of a rate key a Throttled pauses; those so
-- limited (`keyed`, per queue) move from 'due' to 'limited'. The plain count keeps its plan
-- (a parallel hash aggregate on PostgreSQL); the keyed part costs nothing without busy keys.
SELECT queue, state, CAST(sum(n) AS SIGNED) AS n
FROM (SELECT queue,
             CASE WHEN status = 'pending' AND run_at <= {now}
                       AND {queue_limited} IS NOT NULL THEN 'limited'
                  ELSE {live_state} END AS state,
             n
      FROM (SELECT queue, status, min(run_at) AS run_at, min(attempts) AS attempts,
                   count(*) AS n
            FROM claimq_jobs
            GROUP BY queue, status, run_at <= {now}, attempts > 0) AS j
      UNION ALL
      SELECT keyed.queue, moved.state, moved.sign * keyed.n
      FROM (SELECT j.queue, count(*) AS n
            FROM (SELECT DISTINCT r.queue, r.concurrency_key FROM claimq_jobs r
                  WHERE r.status IN ('fetched', 'processing')
                    AND r.concurrency_key IS NOT NULL) AS busy
            JOIN claimq_jobs j
              ON j.queue = busy.queue AND j.concurrency_key = busy.concurrency_key
            WHERE j.status = 'pending' AND j.run_at <= {now} AND {limited} = 'concurrency'
            GROUP BY j.queue
            UNION ALL
            SELECT j.queue, count(*) AS n
            FROM claimq_rate_keys k
            JOIN claimq_jobs j ON j.queue = k.queue AND j.rate_key = k.rate_key
            WHERE k.throttled_until > {now}
              AND j.status = 'pending' AND j.run_at <= {now} AND {limited} = 'rate_key'
            GROUP BY j.queue) AS keyed
      CROSS JOIN (SELECT 'due' AS state, -1 AS sign
                  UNION ALL SELECT 'limited', 1) AS moved) AS counted
GROUP BY 1, 2
HAVING sum(n) > 0
UNION ALL
SELECT queue, 'held', CAST(count(*) AS SIGNED) FROM claimq_held GROUP BY 1
