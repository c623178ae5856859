SELECT id FROM claimq_held WHERE workflow_id = :id ORDER BY id
