DELETE FROM claimq_deps WHERE workflow_id IN (SELECT value FROM json_each(:ids))
