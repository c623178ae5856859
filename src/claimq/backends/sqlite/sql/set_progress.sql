-- The progress of a running job, written only while this claim still holds it.
INSERT INTO claimq_progress (job_id, fraction, note, attempt, updated_at)
SELECT id, :fraction, :note, attempts, :now
FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status = 'processing'
ON CONFLICT (job_id) DO UPDATE
SET fraction = excluded.fraction, note = excluded.note, attempt = excluded.attempt,
    updated_at = excluded.updated_at
RETURNING job_id
