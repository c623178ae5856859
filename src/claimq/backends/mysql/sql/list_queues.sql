SELECT q.name, q.paused, q.active, q.max_workers, q.lease_seconds, q.timeout_seconds,
       q.rate_count, q.rate_period, q.rate_burst, q.aging_step, q.aging_cap, q.throttled_until,
       q.keyed, q.key_rate_count, q.key_rate_period, q.key_rate_burst,
       coalesce(s.pending, 0) AS pending, coalesce(s.scheduled, 0) AS scheduled,
       coalesce(s.fetched, 0) AS fetched, coalesce(s.processing, 0) AS processing,
       coalesce(s.past_lease, 0) AS past_lease,
       TIMESTAMPDIFF(MICROSECOND, s.oldest_ready, {now}) / 1e6 AS oldest_due_age,
       (SELECT count(*) FROM claimq_archive a WHERE a.queue = q.name) AS archived,
       (SELECT count(*) FROM claimq_dead d WHERE d.queue = q.name) AS dead
FROM claimq_queues q
LEFT JOIN (
    SELECT queue,
           CAST(sum(status = 'pending' AND run_at <= {now}) AS SIGNED) AS pending,
           CAST(sum(status = 'pending' AND run_at > {now}) AS SIGNED) AS scheduled,
           CAST(sum(status = 'fetched') AS SIGNED) AS fetched,
           CAST(sum(status = 'processing') AS SIGNED) AS processing,
           CAST(sum(status <> 'pending' AND lease_until < {now}) AS SIGNED) AS past_lease,
           min(IF(status = 'pending' AND run_at <= {now}, run_at, NULL)) AS oldest_ready
    FROM claimq_jobs GROUP BY queue
) s ON s.queue = q.name
ORDER BY q.name
