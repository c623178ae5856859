-- Live jobs by queue and task (the jobs table holds live jobs only), and held workflow jobs.
SELECT queue, task, CAST(sum(pending) AS SIGNED) AS pending,
       CAST(sum(scheduled) AS SIGNED) AS scheduled, CAST(sum(running) AS SIGNED) AS running,
       CAST(sum(past_lease) AS SIGNED) AS past_lease, max(oldest_due_age) AS oldest_due_age,
       CAST(sum(held) AS SIGNED) AS held
FROM (
    SELECT queue, task,
           sum(status = 'pending' AND run_at <= %(now)s) AS pending,
           sum(status = 'pending' AND run_at > %(now)s) AS scheduled,
           sum(status <> 'pending') AS running,
           sum(status <> 'pending' AND lease_until < %(now)s) AS past_lease,
           TIMESTAMPDIFF(MICROSECOND,
                         min(IF(status = 'pending' AND run_at <= %(now)s, run_at, NULL)),
                         %(now)s) / 1e6 AS oldest_due_age,
           0 AS held
    FROM claimq_jobs
    GROUP BY queue, task
    UNION ALL
    SELECT queue, task, 0, 0, 0, 0, NULL, count(*) FROM claimq_held GROUP BY queue, task
) AS s
GROUP BY queue, task
