-- Live jobs by queue and task (the jobs table holds live jobs only), and held workflow jobs.
SELECT queue, task, sum(pending)::bigint AS pending, sum(scheduled)::bigint AS scheduled,
       sum(running)::bigint AS running, sum(past_lease)::bigint AS past_lease,
       max(oldest_due_age) AS oldest_due_age, sum(held)::bigint AS held
FROM (
    SELECT queue, task,
           count(*) FILTER (WHERE status = 'pending' AND run_at <= {now}) AS pending,
           count(*) FILTER (WHERE status = 'pending' AND run_at > {now}) AS scheduled,
           count(*) FILTER (WHERE status <> 'pending') AS running,
           count(*) FILTER (WHERE status <> 'pending' AND lease_until < {now}) AS past_lease,
           extract(epoch FROM {now} - min(run_at) FILTER (WHERE status = 'pending'
                                                          AND run_at <= {now})) AS oldest_due_age,
           0 AS held
    FROM {schema}.jobs
    GROUP BY queue, task
    UNION ALL
    SELECT queue, task, 0, 0, 0, 0, NULL, count(*) FROM {schema}.held GROUP BY queue, task
) live
GROUP BY queue, task
