-- Live jobs by queue and state: the dashboard's counts per state. The rule is _live_state.sql,
-- applied to one representative row per group of jobs it cannot tell apart (same queue and
-- status, run_at come or not, attempted or not: all it reads), not to every job; from the
-- tables, not through find's union of them (benchmarks/dashboard_states.py: on 1M jobs this
-- takes about what App.queues() does; a CASE per job read through the union, twice that).
-- A due job is 'limited' instead when flow control holds it back (_limited.sql, as find reads
-- it): every due job of a queue whose own settings hold it back (_queue_limited.sql, asked
-- once per group); of the others, those their keys hold back (_keyed_limited.sql) move from
-- 'due' to 'limited'. The plain count keeps its plan (a parallel hash aggregate on
-- PostgreSQL); the keyed part reads nothing without busy keys or throttled rate keys.
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
      FROM ({keyed_limited}) AS keyed
      CROSS JOIN (SELECT 'due' AS state, -1 AS sign
                  UNION ALL SELECT 'limited', 1) AS moved) AS counted
GROUP BY 1, 2
HAVING sum(n) > 0
UNION ALL
SELECT queue, 'held', CAST(count(*) AS SIGNED) FROM claimq_held GROUP BY 1
