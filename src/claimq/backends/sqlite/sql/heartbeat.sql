UPDATE claimq_jobs
SET lease_until = :now + coalesce(:lease, (SELECT q.lease_seconds FROM claimq_queues q
                                          WHERE q.name = claimq_jobs.queue)),
    heartbeat_at = :now
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
RETURNING id, cancel_requested
