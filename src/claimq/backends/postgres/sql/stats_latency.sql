-- Percentiles of the jobs completed in the window (a range of archive_finished), per queue and
-- per task: wait = due (run_at, or enqueue when later) -> start of the attempt that completed;
-- run = that start -> finish.
SELECT queue, task, count(*) AS count,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY wait) AS wait,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY run) AS run
FROM (
    SELECT queue, task,
           greatest(extract(epoch FROM started_at - greatest(run_at, created_at)), 0) AS wait,
           greatest(extract(epoch FROM finished_at - started_at), 0) AS run
    FROM {schema}.archive
    WHERE finished_at >= {now} - make_interval(secs => %(window)s) AND started_at IS NOT NULL
) s
GROUP BY GROUPING SETS ((queue), (task))
