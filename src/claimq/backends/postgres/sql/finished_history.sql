-- Jobs finished per bucket of %(bucket)s seconds from %(since)s to %(now)s, per queue and
-- task: a range of archive_finished and dead_finished.
SELECT floor(extract(epoch FROM finished_at - %(since)s) / %(bucket)s)::int AS bucket,
       queue, task, sum(succeeded)::bigint AS succeeded, sum(dead)::bigint AS dead
FROM (
    SELECT finished_at, queue, task, 1 AS succeeded, 0 AS dead FROM {schema}.archive
    WHERE finished_at >= %(since)s AND finished_at <= %(now)s
    UNION ALL
    SELECT finished_at, queue, task, 0, 1 FROM {schema}.dead
    WHERE finished_at >= %(since)s AND finished_at <= %(now)s
) f
GROUP BY 1, queue, task
ORDER BY 1, queue, task
