-- cancel_workflow: the workflow's live jobs, locked by id (before its held ones, as every
-- release locks a finishing job's row before its dependents' held rows).
SELECT id, status, errors FROM claimq_jobs
WHERE workflow_id = %(workflow_id)s
ORDER BY id
FOR UPDATE
