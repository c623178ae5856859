-- Live jobs by queue and task (the jobs table holds live jobs only).
SELECT queue, task,
       count(*) FILTER (WHERE status = 'pending' AND run_at <= {now}) AS pending,
       count(*) FILTER (WHERE status = 'pending' AND run_at > {now}) AS scheduled,
       count(*) FILTER (WHERE status <> 'pending') AS running,
       count(*) FILTER (WHERE status <> 'pending' AND lease_until < {now}) AS past_lease,
       extract(epoch FROM {now} - min(run_at) FILTER (WHERE status = 'pending'
                                                      AND run_at <= {now})) AS oldest_due_age
FROM {schema}.jobs
GROUP BY queue, task
