-- Live jobs by queue and task (the jobs table holds live jobs only).
SELECT queue, task,
       CAST(sum(status = 'pending' AND run_at <= %(now)s) AS SIGNED) AS pending,
       CAST(sum(status = 'pending' AND run_at > %(now)s) AS SIGNED) AS scheduled,
       CAST(sum(status <> 'pending') AS SIGNED) AS running,
       CAST(sum(status <> 'pending' AND lease_until < %(now)s) AS SIGNED) AS past_lease,
       TIMESTAMPDIFF(MICROSECOND, min(IF(status = 'pending' AND run_at <= %(now)s, run_at, NULL)),
                     %(now)s) / 1e6 AS oldest_due_age
FROM claimq_jobs
GROUP BY queue, task
