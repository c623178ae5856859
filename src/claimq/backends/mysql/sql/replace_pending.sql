-- Debounce: the pending job holding a key takes the new enqueue's payload and run_at.
UPDATE claimq_jobs
SET payload = %(payload)s,
    run_at = coalesce(%(run_at)s, TIMESTAMPADD(MICROSECOND, %(delay_us)s, {now})),
    updated_at = {now}
WHERE id = %(id)s AND status = 'pending'
