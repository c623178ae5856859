UPDATE claimq_jobs SET priority = :priority, updated_at = :now
WHERE id = :id AND status = 'pending'
RETURNING id
