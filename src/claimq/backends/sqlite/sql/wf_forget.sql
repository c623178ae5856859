-- The retention pass's end: workflows among :ids with no job left anywhere lose their row
-- (the backend then drops their edges).
DELETE FROM claimq_workflows
WHERE id IN (SELECT value FROM json_each(:ids))
  AND NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_held h WHERE h.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive a WHERE a.workflow_id = claimq_workflows.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_dead d WHERE d.workflow_id = claimq_workflows.id)
RETURNING id
