-- purge's end: every workflow with no job left anywhere loses its row (the backend then
-- drops its edges).
DELETE FROM claimq_workflows
WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_held h WHERE h.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive a WHERE a.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_dead d WHERE d.workflow_id = claimq_workflows.id)
RETURNING id
