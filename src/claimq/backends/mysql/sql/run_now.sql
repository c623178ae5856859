-- The rows lock_waiting.sql locked (the lock kept them pending): due now.
UPDATE claimq_jobs SET run_at = {now}, updated_at = {now}
WHERE id IN %(ids)s AND status = 'pending'
