SELECT q.name, q.paused, q.active, q.max_workers, q.lease_seconds, q.timeout_seconds,
       q.rate_count, q.rate_period, q.rate_burst, q.aging_step, q.aging_cap, q.keyed,
       q.key_rate_count, q.key_rate_period, q.key_rate_burst,
       q.throttled_until,
       (SELECT count(*) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status = 'pending' AND j.run_at <= :now) AS pending,
       (SELECT count(*) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status = 'pending' AND j.run_at > :now) AS scheduled,
       (SELECT count(*) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status = 'fetched') AS fetched,
       (SELECT count(*) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status = 'processing') AS processing,
       (SELECT count(*) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status IN ('fetched', 'processing')
          AND j.lease_until < :now) AS past_lease,
       (SELECT :now - min(j.run_at) FROM claimq_jobs j
        WHERE j.queue = q.name AND j.status = 'pending' AND j.run_at <= :now) AS oldest_due_age,
       (SELECT count(*) FROM claimq_archive a WHERE a.queue = q.name) AS archived,
       (SELECT count(*) FROM claimq_dead d WHERE d.queue = q.name) AS dead
FROM claimq_queues q
ORDER BY q.name
