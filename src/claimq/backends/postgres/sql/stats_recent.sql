-- What finished in the window: a range of archive_finished and dead_finished.
SELECT queue, task, sum(completed)::bigint AS completed, sum(failed)::bigint AS failed,
       count(*) AS finished, sum(attempts)::bigint AS attempts
FROM (
    SELECT queue, task, 1 AS completed, 0 AS failed, attempts FROM {schema}.archive
    WHERE finished_at >= {now} - make_interval(secs => %(window)s)
    UNION ALL
    SELECT queue, task, 0, CASE WHEN reason = 'cancelled' THEN 0 ELSE 1 END, attempts
    FROM {schema}.dead
    WHERE finished_at >= {now} - make_interval(secs => %(window)s)
) f
GROUP BY queue, task
