-- What finished in the window, and when the first of those jobs was created:
-- a range of claimq_archive_finished and claimq_dead_finished.
SELECT queue, task, CAST(sum(completed) AS SIGNED) AS completed,
       CAST(sum(failed) AS SIGNED) AS failed, count(*) AS finished,
       CAST(sum(attempts) AS SIGNED) AS attempts, min(created_at) AS first_created
FROM (
    SELECT queue, task, 1 AS completed, 0 AS failed, attempts, created_at FROM claimq_archive
    WHERE finished_at >= %(since)s
    UNION ALL
    SELECT queue, task, 0, IF(reason = 'cancelled', 0, 1), attempts, created_at
    FROM claimq_dead
    WHERE finished_at >= %(since)s
) f
GROUP BY queue, task
