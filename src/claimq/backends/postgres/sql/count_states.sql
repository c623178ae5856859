-- Live jobs by queue and state (_live_state.sql): the dashboard's counts per state.
SELECT queue, {live_state} AS state, count(*)::bigint AS n
FROM {live_rows} AS live
GROUP BY 1, 2
