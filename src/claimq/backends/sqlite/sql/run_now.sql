UPDATE claimq_jobs SET run_at = :now, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'pending' AND run_at > :now
RETURNING id
