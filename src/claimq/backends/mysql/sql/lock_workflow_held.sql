-- cancel_workflow: the workflow's held jobs, locked by id.
SELECT id, errors, workflow_id FROM claimq_held
WHERE workflow_id = %(workflow_id)s
ORDER BY id
FOR UPDATE
