-- Debounce: the pending job holding a key takes the new enqueue's payload and run_at. Found by
-- its PRIMARY record (a claim's lock order: the in-flight index, which the optimizer may prefer
-- for `status = 'pending'`, would be locked before the row a claim holds: a deadlock). Zero rows:
-- a claim took the job since key_holder read it.
UPDATE claimq_jobs FORCE INDEX (PRIMARY)
SET payload = %(payload)s,
    run_at = coalesce(%(run_at)s, TIMESTAMPADD(MICROSECOND, %(delay_us)s, {now})),
    updated_at = {now}
WHERE id = %(id)s AND status = 'pending'
