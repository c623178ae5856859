SELECT q.name, q.paused, q.active, q.max_workers, q.lease_seconds, q.timeout_seconds,
       q.rate_count, q.rate_period, q.rate_burst, q.aging_step, q.aging_cap, q.keyed,
       q.key_rate_count, q.key_rate_period, q.key_rate_burst,
       q.throttled_until,
       coalesce(s.pending, 0) AS pending, coalesce(s.scheduled, 0) AS scheduled,
       coalesce(s.fetched, 0) AS fetched, coalesce(s.processing, 0) AS processing,
       coalesce(s.past_lease, 0) AS past_lease, s.oldest_due_age,
       (SELECT count(*) FROM {schema}.archive a WHERE a.queue = q.name) AS archived,
       (SELECT count(*) FROM {schema}.dead d WHERE d.queue = q.name) AS dead
FROM {schema}.queues q
LEFT JOIN (
    SELECT queue,
           count(*) FILTER (WHERE status = 'pending' AND run_at <= {now}) AS pending,
           count(*) FILTER (WHERE status = 'pending' AND run_at > {now}) AS scheduled,
           count(*) FILTER (WHERE status = 'fetched') AS fetched,
           count(*) FILTER (WHERE status = 'processing') AS processing,
           count(*) FILTER (WHERE status <> 'pending' AND lease_until < {now}) AS past_lease,
           extract(epoch FROM {now} - min(run_at) FILTER (WHERE status = 'pending'
                                                          AND run_at <= {now})) AS oldest_due_age
    FROM {schema}.jobs GROUP BY queue
) s ON s.queue = q.name
ORDER BY q.name
