-- The progress of a running job, written only while this claim still holds it.
INSERT INTO {schema}.progress (job_id, fraction, note, attempt, updated_at)
SELECT id, %(fraction)s, %(note)s, attempts, {now}
FROM {schema}.jobs
WHERE id = %(id)s AND claim_token = %(token)s::uuid AND status = 'processing'
ON CONFLICT (job_id) DO UPDATE
SET fraction = EXCLUDED.fraction, note = EXCLUDED.note, attempt = EXCLUDED.attempt,
    updated_at = EXCLUDED.updated_at
RETURNING job_id
