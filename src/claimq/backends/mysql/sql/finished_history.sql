-- Jobs finished per bucket of %(bucket)s microseconds from %(since)s to %(now)s, per queue
-- and task: a range of claimq_archive_finished and claimq_dead_finished.
SELECT CAST(FLOOR(TIMESTAMPDIFF(MICROSECOND, %(since)s, finished_at) / %(bucket)s) AS SIGNED)
           AS bucket,
       queue, task, CAST(sum(succeeded) AS SIGNED) AS succeeded,
       CAST(sum(dead) AS SIGNED) AS dead
FROM (
    SELECT finished_at, queue, task, 1 AS succeeded, 0 AS dead FROM claimq_archive
    WHERE finished_at >= %(since)s AND finished_at <= %(now)s
    UNION ALL
    SELECT finished_at, queue, task, 0, 1 FROM claimq_dead
    WHERE finished_at >= %(since)s AND finished_at <= %(now)s
) f
GROUP BY 1, queue, task
ORDER BY 1, queue, task
