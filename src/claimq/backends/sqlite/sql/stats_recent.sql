-- What finished in the window, and when the first of those jobs was created:
-- a range of claimq_archive_finished and claimq_dead_finished.
SELECT queue, task, sum(completed) AS completed, sum(failed) AS failed,
       count(*) AS finished, sum(attempts) AS attempts,
       min(created_at) AS first_created
FROM (
    SELECT queue, task, 1 AS completed, 0 AS failed, attempts, created_at FROM claimq_archive
    WHERE finished_at >= :since
    UNION ALL
    SELECT queue, task, 0, CASE WHEN reason = 'cancelled' THEN 0 ELSE 1 END, attempts,
           created_at
    FROM claimq_dead
    WHERE finished_at >= :since
)
GROUP BY queue, task
