-- purge: workflows with no job left in any table, at most `batch` (their rows and edges go,
-- delete_workflows.sql).
SELECT w.id FROM claimq_workflows w
WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_held x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive x WHERE x.workflow_id = w.id)
  AND NOT EXISTS (SELECT 1 FROM claimq_dead x WHERE x.workflow_id = w.id)
ORDER BY w.id
LIMIT %(batch)s
FOR UPDATE
