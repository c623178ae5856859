-- Live jobs by queue and state (_live_state.sql): the dashboard's counts per state.
SELECT queue, {live_state} AS state, count(*) AS n FROM claimq_jobs GROUP BY 1, 2
UNION ALL
SELECT queue, 'held', count(*) FROM claimq_held GROUP BY 1
