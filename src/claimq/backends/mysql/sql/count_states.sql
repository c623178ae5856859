-- Live jobs by queue and state: the dashboard's counts per state. The rule is _live_state.sql,
-- applied to one representative row per group of jobs it cannot tell apart (same queue and
-- status, run_at come or not, attempted or not: all it reads), not to every job; from the
-- tables, not through find's union of them (benchmarks/dashboard_states.py: on 1M jobs this
-- takes about what App.queues() does; a CASE per job read through the union, twice that).
-- A due job is 'limited' instead when flow control holds it back (_limited.sql, as find reads
-- it): that rule is asked of due jobs only, one flag per job.
SELECT queue, CASE WHEN limited THEN 'limited' ELSE {live_state} END AS state,
       CAST(sum(n) AS SIGNED) AS n
FROM (SELECT queue, status, min(run_at) AS run_at, min(attempts) AS attempts, count(*) AS n,
             limited
      FROM (SELECT j.queue, j.status, j.run_at, j.attempts,
                   CASE WHEN j.status = 'pending' AND j.run_at <= {now}
                        THEN {limited} IS NOT NULL ELSE 0 END AS limited
            FROM claimq_jobs j) AS per_job
      GROUP BY queue, status, run_at <= {now}, attempts > 0, limited) AS same
GROUP BY 1, 2
UNION ALL
SELECT queue, 'held', CAST(count(*) AS SIGNED) FROM claimq_held GROUP BY 1
