UPDATE claimq_jobs
SET lease_until = TIMESTAMPADD(MICROSECOND, ROUND(1e6 * coalesce(%(lease)s, (
        SELECT q.lease_seconds FROM claimq_queues q WHERE q.name = claimq_jobs.queue))), {now}),
    heartbeat_at = {now}
WHERE id IN %(ids)s
