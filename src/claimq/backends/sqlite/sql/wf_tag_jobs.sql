UPDATE claimq_jobs SET workflow_id = :workflow_id
WHERE id IN (SELECT value FROM json_each(:ids))
