-- The jobs completed in the window (a range of claimq_archive_finished): wait = due (run_at,
-- or enqueue when later) -> start of the attempt that completed; run = that start -> finish.
-- The backend computes the percentiles from these rows.
SELECT queue, task,
       greatest(TIMESTAMPDIFF(MICROSECOND, greatest(run_at, created_at), started_at), 0) / 1e6
           AS wait,
       greatest(TIMESTAMPDIFF(MICROSECOND, started_at, finished_at), 0) / 1e6 AS run
FROM claimq_archive
WHERE finished_at >= %(since)s AND started_at IS NOT NULL
