-- Of these workflows, those with no job left in any table (retention deleted the last ones):
-- their rows and edges go (delete_workflows.sql). Locked, so that two prunes delete once.
SELECT w.id FROM claimq_workflows w
WHERE w.id IN %(ids)s
  AND NOT EXISTS (SELECT 1 FROM claimq_jobs x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_held x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_dead x WHERE x.workflow_id = w.id)
ORDER BY w.id
FOR UPDATE
