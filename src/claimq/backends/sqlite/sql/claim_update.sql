UPDATE claimq_jobs
SET status = 'fetched',
    worker_id = :worker_id,
    claim_token = lower(hex(randomblob(16))),
    lease_until = :now + coalesce(:lease, (SELECT q.lease_seconds FROM claimq_queues q
                                          WHERE q.name = claimq_jobs.queue)),
    updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'pending'
RETURNING *
