-- Live jobs by queue and state: the dashboard's counts per state. The rule is _live_state.sql,
-- applied to one representative row per group of jobs it cannot tell apart (same queue and
-- status, run_at come or not, attempted or not: all it reads), not to every job; from the
-- tables, not through find's union of them (benchmarks/dashboard_states.py: on 1M jobs this
-- takes about what App.queues() does; a CASE per job read through the union, twice that).
SELECT queue, {live_state} AS state, sum(n) AS n
FROM (SELECT queue, status, min(run_at) AS run_at, min(attempts) AS attempts, count(*) AS n
      FROM claimq_jobs
      GROUP BY queue, status, run_at <= :now, attempts > 0)
GROUP BY 1, 2
UNION ALL
SELECT queue, 'held', count(*) FROM claimq_held GROUP BY 1
