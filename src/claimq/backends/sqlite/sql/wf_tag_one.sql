UPDATE claimq_jobs SET workflow_id = :workflow_id WHERE id = :id
