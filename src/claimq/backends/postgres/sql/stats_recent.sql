-- What finished in the window, and when the first of those jobs was created:
-- a range of archive_finished and dead_finished.
SELECT queue, task, sum(completed)::bigint AS completed, sum(failed)::bigint AS failed,
       count(*) AS finished, sum(attempts)::bigint AS attempts,
       min(created_at) AS first_created
FROM (
    SELECT queue, task, 1 AS completed, 0 AS failed, attempts, created_at FROM {schema}.archive
    WHERE finished_at >= {now} - make_interval(secs => %(window)s)
    UNION ALL
    SELECT queue, task, 0, CASE WHEN reason = 'cancelled' THEN 0 ELSE 1 END, attempts,
           created_at
    FROM {schema}.dead
    WHERE finished_at >= {now} - make_interval(secs => %(window)s)
) f
GROUP BY queue, task
