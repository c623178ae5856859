-- Debounce: the pending job holding a key takes the new enqueue's payload and run_at.
UPDATE claimq_jobs
SET payload = :payload, run_at = :run_at, updated_at = :now
WHERE id = :id AND status = 'pending'
RETURNING id
