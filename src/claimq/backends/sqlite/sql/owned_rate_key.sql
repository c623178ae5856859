-- The queue and rate key of a job its owner is failing with a throttle.
SELECT queue, rate_key FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
