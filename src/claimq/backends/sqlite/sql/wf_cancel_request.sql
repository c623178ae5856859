UPDATE claimq_jobs SET cancel_requested = 1, updated_at = :now
WHERE workflow_id = :id AND status = 'processing'
RETURNING id
