-- The jobs completed in the window (a range of claimq_archive_finished): wait = due (run_at,
-- or enqueue when later) -> start of the attempt that completed; run = that start -> finish.
-- SQLite has no percentile function: the backend computes them from these rows.
SELECT queue, task, max(started_at - max(run_at, created_at), 0) AS wait,
       max(finished_at - started_at, 0) AS run
FROM claimq_archive
WHERE finished_at >= :since AND started_at IS NOT NULL
