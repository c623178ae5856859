-- Jobs finished per bucket of :bucket seconds from :since to :now, per queue and task:
-- a range of claimq_archive_finished and claimq_dead_finished.
SELECT CAST((finished_at - :since) / :bucket AS INTEGER) AS bucket, queue, task,
       sum(succeeded) AS succeeded, sum(dead) AS dead
FROM (
    SELECT finished_at, queue, task, 1 AS succeeded, 0 AS dead FROM claimq_archive
    WHERE finished_at >= :since AND finished_at <= :now
    UNION ALL
    SELECT finished_at, queue, task, 0, 1 FROM claimq_dead
    WHERE finished_at >= :since AND finished_at <= :now
)
GROUP BY 1, queue, task
ORDER BY 1, queue, task
