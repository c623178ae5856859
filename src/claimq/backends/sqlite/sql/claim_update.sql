-- With start, the job goes straight to processing (a worker that claims only for free slots
-- starts every job at once, so the separate start step buys nothing).
UPDATE claimq_jobs
SET status = CASE WHEN :start THEN 'processing' ELSE 'fetched' END,
    attempts = attempts + CASE WHEN :start THEN 1 ELSE 0 END,
    started_at = CASE WHEN :start THEN :now END,
    heartbeat_at = CASE WHEN :start THEN :now END,
    worker_id = :worker_id,
    claim_token = lower(hex(randomblob(16))),
    lease_until = :now + coalesce(:lease, (SELECT q.lease_seconds FROM claimq_queues q
                                          WHERE q.name = claimq_jobs.queue)),
    updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'pending'
RETURNING *
