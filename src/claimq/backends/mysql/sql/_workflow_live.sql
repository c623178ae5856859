-- A finished row t of a workflow that still has a job in jobs or held: kept by retention
-- (fan-in results stay readable while a dependent waits). {workflow_live}
(t.workflow_id IS NOT NULL
 AND (EXISTS (SELECT 1 FROM claimq_jobs x WHERE x.workflow_id = t.workflow_id)
      OR EXISTS (SELECT 1 FROM claimq_held x WHERE x.workflow_id = t.workflow_id)))
