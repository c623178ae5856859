-- The rows lock_waiting.sql locked (the lock kept them pending): due now. By PRIMARY, as there.
UPDATE claimq_jobs FORCE INDEX (PRIMARY) SET run_at = {now}, updated_at = {now}
WHERE id IN %(ids)s AND status = 'pending'
