-- The progress of a running job, written only while this claim still holds it (a row count of
-- 0: no such job in processing with this token).
INSERT INTO claimq_progress (job_id, fraction, note, attempt, updated_at)
SELECT id, %(fraction)s, %(note)s, attempts, {now}
FROM claimq_jobs
WHERE id = %(id)s AND claim_token = %(token)s AND status = 'processing'
ON DUPLICATE KEY UPDATE
    fraction = VALUES(fraction), note = VALUES(note), attempt = VALUES(attempt),
    updated_at = VALUES(updated_at)
