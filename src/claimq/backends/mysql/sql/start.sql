-- The gate between claim and handler: the caller locked the owner's fetched rows (lock_owned).
UPDATE claimq_jobs
SET status = 'processing',
    attempts = attempts + 1,
    started_at = {now},
    heartbeat_at = {now},
    lease_until = coalesce(TIMESTAMPADD(MICROSECOND, ROUND(1e6 * %(lease)s), {now}), lease_until),
    updated_at = {now}
WHERE id IN %(ids)s
