-- The job its owner is failing: what the dead-or-retry rule (claimq.job.ends_job) reads, and
-- the queue and rate key a throttle pauses. No row: the caller no longer owns it.
SELECT queue, rate_key, attempts, max_attempts FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
